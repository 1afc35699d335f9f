package stagemodel

import (
	"fmt"
	"slices"
	"testing"
	"time"
)

// The configurations explored, every one exhaustively.
var (
	// The push that made the stage and one other, each promoting by either
	// command, gc at any time, one host command killed and one stall.
	one = Config{Takers: 1, TwoPass: true, GC: true, Crashes: 1, Stalls: 1}
	// The same with two kills.
	oneMore = Config{Takers: 1, TwoPass: true, GC: true, Crashes: 2, Stalls: 1}
	// Two others that may take the stage over, each after the other (a
	// stage given back twice), all streaming: with a kill, or with a
	// stall. (With both, TwoPass and gc too, it holds in 10,757,494
	// states, a minute's search: too long for every test run.)
	two      = Config{Takers: 2, Crashes: 1}
	twoStall = Config{Takers: 2, Stalls: 1}
)

// fixed is cfg with the two changes to the fragments the model asks for.
func fixed(cfg Config) Config {
	cfg.Recheck, cfg.NameUnderLock = true, true
	return cfg
}

// explore runs cfg and logs what it explored.
func explore(t *testing.T, cfg Config) *Result {
	t.Helper()
	begin := time.Now()
	r := New(cfg).Explore()
	bound := "exhaustive"
	switch {
	case len(cfg.StopAfter) > 0 && len(r.Violations) >= len(cfg.StopAfter):
		bound = "stopped once every violation sought was found"
	case !r.Complete:
		bound = fmt.Sprintf("bounded at %d states", cfg.MaxStates)
	}
	t.Logf("%s (recheck %v, name under lock %v), %s: %d states, %d transitions, shortest runs up to %d moves, %v; promoted in %d states, taken over in %d",
		cfg.Variant, cfg.Recheck, cfg.NameUnderLock, bound, r.States, r.Transitions, r.Depth,
		time.Since(begin).Round(time.Millisecond), r.Promoted, r.TakenOver)
	return r
}

// TestStageHasOneOwner: with the two changes, no invariant is broken in
// any run of any configuration, and the runs the invariants are about
// are there: takeovers, promotions by either command, a give-back, a
// late E, gc's sweep.
func TestStageHasOneOwner(t *testing.T) {
	for name, cfg := range map[string]Config{"one": one, "oneMore": oneMore, "two": two, "twoStall": twoStall} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			r := explore(t, fixed(cfg))
			for _, v := range r.Violations {
				t.Errorf("%v", v)
			}
			if !r.Complete || r.Promoted == 0 || r.TakenOver == 0 {
				t.Errorf("complete %v, promoted in %d states, taken over in %d", r.Complete, r.Promoted, r.TakenOver)
			}
			want := []string{"promote.streaming", "promote.yielded", "promote.marked", "resume.taken", "stage.entered", "pushcheck.mark", "promote.move"}
			if cfg.GC {
				want = append(want, "gc.rm-end")
			}
			for _, p := range want {
				if r.Reached[p] == 0 {
					t.Errorf("no run reaches %s", p)
				}
			}
		})
	}
}

// findsBug explores cfg (with StopAfter set to invs) and checks that the
// checker finds a violation of each of invs, with a trace, which it logs.
func findsBug(t *testing.T, cfg Config, invs ...string) {
	t.Helper()
	cfg.StopAfter = invs
	found := explore(t, cfg).Violations
	for _, inv := range invs {
		i := slices.IndexFunc(found, func(v *Violation) bool { return v.Invariant == inv })
		if i < 0 {
			t.Errorf("the checker finds no violation of %s in %s", inv, cfg.Variant)
			continue
		}
		t.Logf("found, as it should be:\n%v", found[i])
	}
}

// TestClaimOfAClaimedMarkRechecksTheKey: h_claim as shellcmd/sh has it,
// without Recheck. A command that found its key and then stalled, while
// another push took the stage over and claimed its new mark, takes that
// claimed mark in h_claim's loop and goes on: two promotions of one
// stage past their claim. With NameUnderLock the first one's promotion is
// refused under the lock (its stage has the taker's name); as the
// fragments are, with neither change, it promotes the archive the taker's
// upload writes.
func TestClaimOfAClaimedMarkRechecksTheKey(t *testing.T) {
	t.Parallel()
	cfg := fixed(one)
	cfg.Recheck = false
	findsBug(t, cfg, OneOwner)
	cfg.NameUnderLock = false
	findsBug(t, cfg, OneOwner, OwnBytes)
}

// TestPromotionFindsItsStageUnderTheLock: h_promote as shellcmd/sh has it,
// without NameUnderLock. A promotion stalled past the stale period between
// its digest and the lock has its stage swept by gc, which is killed half
// way through rm -rf; the promotion then takes gc's lock and renames what
// is left of its tree into place.
func TestPromotionFindsItsStageUnderTheLock(t *testing.T) {
	t.Parallel()
	cfg := fixed(one)
	cfg.NameUnderLock = false
	findsBug(t, cfg, WholeTree)
}
