package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/hoistdev/hoist/store"
)

// Witnesses (docs/rollout.md, "Resume of a rollout in batches"): every
// host of a rollout in batches writes the rollout's plan as it stages, in
// the list that ends its staging (store.StageList), so that a resume can
// take a host whose batch was never reached, and so keeps no record, as
// one that vouched for the plan.

// witnessing is the plan each host of a rollout writes its witness of:
// it names every host as reached, so it is made once every host is
// named (or could not be reached).
type witnessing struct {
	rollout string
	left    sync.WaitGroup
	all     chan struct{}
	plan    func() (*store.BatchPlan, error)
}

// newWitnessing is the witnessing of rollout over n hosts; plan makes
// the plan once they are named (an error: none is kept).
func newWitnessing(rollout string, n int, plan func() (*store.BatchPlan, error)) *witnessing {
	w := &witnessing{rollout: rollout, all: make(chan struct{}), plan: sync.OnceValues(plan)}
	w.left.Add(n)
	go func() {
		w.left.Wait()
		close(w.all)
	}()
	return w
}

// named says one host's name is known (once per host).
func (w *witnessing) named() { w.left.Done() }

// wait waits until every host is named, and returns the plan to witness:
// nil for a nil w, a plan that is not kept, or ctx done first.
func (w *witnessing) wait(ctx context.Context) *store.BatchPlan {
	if w == nil {
		return nil
	}
	select {
	case <-w.all:
	case <-ctx.Done():
		return nil
	}
	p, err := w.plan()
	if err != nil {
		return nil
	}
	return p
}

// witnessCheck is the resume's look at the witnesses (resumed: each
// reached host's witness, by name; nil for a host with none) against the
// plan the records keep (key: the records' to and plan, as batchPlan
// groups them): an error naming the hosts whose witness says another
// runtime or plan (or is not as hoist writes it), and the hosts whose
// witness agrees, which vouched for the plan.
func witnessCheck(id, key string, names []string, witnesses []*store.RolloutPlan) (vouched []string, err error) {
	var off []string
	for i, w := range witnesses {
		if w == nil {
			continue
		}
		if w.To == "" || w.Plan == "" || w.To+" "+w.Plan != key {
			off = append(off, names[i])
			continue
		}
		vouched = append(vouched, names[i])
	}
	if len(off) > 0 {
		return nil, fmt.Errorf("rollout %s: the witnesses of its plan on %s do not agree with the plan its records keep: nothing was changed; look at them (runtimes/.rollouts/.plan-%s) and at the records with hoist rollout status %s",
			id, printable(strings.Join(off, ", ")), id, id)
	}
	return vouched, nil
}

// witnessedPlan is what a resume of rollout id goes on with when no
// reached host keeps a record of it (its client stopped after staging,
// before its first batch): the plan of its witnesses, when every witness
// there says the same runtime and plan; nil when no host has one (a
// rollout no host recorded). The hosts with a witness vouched for the
// plan; one with none has not (unvouched). An error, for a resume that
// must change nothing: a witness not as hoist writes it, two that
// disagree, or a plan that cannot be used (planGoOn).
func witnessedPlan(id string, ws, reached []*worker, what string) (*batchGoOn, error) {
	type group struct {
		w     *store.RolloutPlan
		names []string
	}
	var groups []*group
	var off []string
	for _, w := range reached {
		if w.rs == nil || w.rs.Witness == nil {
			continue
		}
		wt := w.rs.Witness
		if wt.To == "" || wt.Plan == "" {
			off = append(off, w.name)
			continue
		}
		i := slices.IndexFunc(groups, func(g *group) bool { return g.w.To == wt.To && g.w.Plan == wt.Plan })
		if i < 0 {
			groups = append(groups, &group{w: wt})
			i = len(groups) - 1
		}
		groups[i].names = append(groups[i].names, w.name)
	}
	look := fmt.Sprintf("look at them (runtimes/.rollouts/.plan-%s)", id)
	switch {
	case len(off) > 0:
		return nil, fmt.Errorf("rollout %s: no host keeps a record of it, and the witnesses of its plan on %s are not as hoist writes them: nothing was changed; %s%s",
			id, printable(strings.Join(off, ", ")), look, what)
	case len(groups) == 0:
		return nil, nil
	case len(groups) > 1:
		var parts []string
		for i, g := range groups {
			which := "another plan"
			if i == 0 {
				which = "one plan"
			}
			parts = append(parts, printable(strings.Join(g.names, ", "))+": "+which)
		}
		return nil, fmt.Errorf("rollout %s: no host keeps a record of it, and the witnesses of its plan do not agree (%s): nothing was changed; %s%s",
			id, strings.Join(parts, "; "), look, what)
	}
	g, err := planGoOn(id, "witnesses", groups[0].w.To, groups[0].w.Plan, groups[0].names, ws, what)
	if err != nil {
		return nil, err
	}
	g.witnessed = true
	return g, nil
}
