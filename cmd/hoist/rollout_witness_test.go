package main

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hoistdev/hoist/store"
)

// TestBatchPlanWitnesses: a resume takes a host of the plan with no
// record but a witness that agrees (the same runtime and plan line) as
// one that vouched for the plan; a host with neither has not; a witness
// that disagrees, on any host, or one not as hoist writes it, is an
// error that names the hosts.
func TestBatchPlanWitnesses(t *testing.T) {
	hosts := []string{"w1", "w2", "w3", "w4"}
	opts := rolloutOptions{canary: 0, batch: "2", maxFail: "0", onFail: "stop", checkFlags: newCheckFlags()}.planArgs()
	plan, err := store.BatchPlan{Hosts: hosts, Options: opts}.Fields()
	if err != nil {
		t.Fatal(err)
	}
	other, _ := store.BatchPlan{Hosts: hosts, Options: append(slices.Clone(opts[:len(opts)-1]), "--stable=1s")}.Fields()
	const id, to = "20261201T000000Z-000001", "app-3f9a2c3f9a2c"
	agree := &store.RolloutPlan{ID: id, To: to, Plan: plan, Index: -1, Decider: -1}
	for _, c := range []struct {
		name string
		// witnesses of w1..w4 (records on w1 and w2)
		witnesses []*store.RolloutPlan
		unvouched []string
		err       string
	}{
		{"none", []*store.RolloutPlan{nil, nil, nil, nil}, []string{"w3", "w4"}, ""},
		{"all", []*store.RolloutPlan{agree, agree, agree, agree}, nil, ""},
		{"one gone", []*store.RolloutPlan{agree, agree, agree, nil}, []string{"w4"}, ""},
		{"another plan", []*store.RolloutPlan{agree, agree, {ID: id, To: to, Plan: other}, agree}, nil, "the witnesses of its plan on w3 do not agree with the plan its records keep: nothing was changed"},
		{"another runtime", []*store.RolloutPlan{agree, agree, agree, {ID: id, To: "app-000000000000", Plan: plan}}, nil, "on w4 do not agree"},
		{"not hoist's", []*store.RolloutPlan{agree, agree, {ID: id}, {ID: id}}, nil, "on w3, w4 do not agree"},
		{"on a host with a record", []*store.RolloutPlan{{ID: id, To: to, Plan: other}, agree, nil, nil}, nil, "on w1 do not agree"},
	} {
		var ws []*worker
		for i, h := range hosts {
			rs := &store.Resumer{Record: store.RolloutPlan{ID: id, Index: -1, Decider: -1}, Witness: c.witnesses[i]}
			if i < 2 {
				rs.Record = store.RolloutPlan{ID: id, From: "app-111111111111", To: to, Found: true, Index: -1, Decider: -1, Plan: plan}
			}
			ws = append(ws, &worker{rolloutHost: &rolloutHost{target: h, name: h}, rs: rs})
		}
		g, err := batchPlan(id, ws, ws)
		switch {
		case c.err != "":
			if err == nil || !strings.Contains(err.Error(), c.err) || strings.Contains(err.Error(), "\n") {
				t.Errorf("%s: got %v, want one line with %q", c.name, err, c.err)
			}
		case err != nil || g == nil:
			t.Errorf("%s: %v", c.name, err)
		case !slices.Equal(g.unvouched, c.unvouched) || g.to != to || !slices.Equal(g.plan.Hosts, hosts):
			t.Errorf("%s: unvouched %q, want %q (%+v)", c.name, g.unvouched, c.unvouched, g)
		}
	}
}

// TestWitnessingWaitsForEveryName: the plan a host witnesses is made once,
// after every host is named; a plan that cannot be kept is no witness.
func TestWitnessingWaitsForEveryName(t *testing.T) {
	made := 0
	names := []string{"", ""}
	w := newWitnessing("r", 2, func() (*store.BatchPlan, error) {
		made++
		p := &store.BatchPlan{Hosts: slices.Clone(names), Options: []string{"--canary=0"}}
		_, err := p.Fields()
		return p, err
	})
	got := make(chan *store.BatchPlan, 2)
	for range 2 {
		go func() { got <- w.wait(t.Context()) }()
	}
	names[0] = "w1"
	w.named()
	select {
	case p := <-got:
		t.Fatalf("a plan before every host was named: %+v", p)
	case <-time.After(100 * time.Millisecond):
	}
	names[1] = "w2"
	w.named()
	for range 2 {
		if p := <-got; p == nil || !slices.Equal(p.Hosts, []string{"w1", "w2"}) {
			t.Fatalf("want the plan of both names: %+v", p)
		}
	}
	if made != 1 {
		t.Fatalf("the plan was made %d times", made)
	}
	var nilw *witnessing
	if nilw.wait(t.Context()) != nil {
		t.Fatal("no witnessing, no plan")
	}
	empty := newWitnessing("r", 0, func() (*store.BatchPlan, error) { return &store.BatchPlan{}, store.ErrPlanTooLarge })
	if empty.wait(t.Context()) != nil {
		t.Fatal("a plan that is not kept is witnessed")
	}
}
