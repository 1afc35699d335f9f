package main

import (
	"context"
	"fmt"
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
