package model

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

var everyStart = []Start{NoLock, LegacyLock, OwnerlessLock}

// explore runs cfg and logs what it explored.
func explore(t *testing.T, cfg Config) *Result {
	t.Helper()
	begin := time.Now()
	r := New(cfg).Explore()
	bound := "exhaustive"
	if !r.Complete {
		bound = fmt.Sprintf("bounded at %d states (every state within %d moves of a start)", cfg.MaxStates, r.CompleteDepth)
	}
	model := cfg.Variant.String()
	t.Logf("%s, %s: %d states, %d transitions, shortest runs up to %d moves, %v; a fresh client acquired within %d steps",
		model, bound, r.States, r.Transitions, r.Depth, time.Since(begin).Round(time.Millisecond), r.MaxFreshSteps)
	return r
}

// holds fails t with every violation r found, each with its trace.
func holds(t *testing.T, r *Result) {
	t.Helper()
	for _, v := range r.Violations {
		t.Errorf("%v", v)
	}
}

// onlyClearLeavesAgeDebris checks invariant 3's report: every state from
// which a fresh client needs L's own age (the ownerless rule) is one where
// a client crashed inside h_clear between its removals and its rmdir L (the
// empty L reads as an earlier version's ownerless lock), or where L is the
// earlier version's directory the run started with, or one the reboot left
// (the state before the reboot is filed by its own crash points). What
// needs the age rule is logged, grouped.
func onlyClearLeavesAgeDebris(t *testing.T, r *Result) {
	t.Helper()
	onlyKnownCases(t, r.AgeRule, "needs the age rule")
}

// onlyClearNeedsTime checks invariant 3's stronger form: from every state
// in which every client crashed, a fresh client acquires without any time
// passing (the exited rule frees a crashed holder's lock at once), except
// after the crashes inside h_clear above, and from an earlier version's
// lock (judged by its age only) or an ownerless L a reboot left.
func onlyClearNeedsTime(t *testing.T, r *Result) {
	t.Helper()
	onlyKnownCases(t, r.NeedsTime, "needs time to pass")
}

// onlyKnownCases checks that every case of cases is a crash inside h_clear,
// an earlier version's L or one a reboot left, and logs them, grouped; it
// reports any other with its trace.
func onlyKnownCases(t *testing.T, cases map[string]*AgeCase, what string) {
	t.Helper()
	type group struct {
		sets, states int
		where        map[string]bool
		bad          []string
	}
	var clear, old, bad group
	for k, c := range cases {
		g := &bad
		switch {
		case c.Initial, c.Rebooted:
			g = &old
		case c.InClear():
			g = &clear
		}
		g.sets++
		g.states += c.States
		if g.where == nil {
			g.where = map[string]bool{}
		}
		w := c.Where
		if g == &clear {
			w = c.ClearPoints()
		} else if len(w) == 0 {
			w = []string{"no crash mid-operation"}
		}
		for _, w := range w {
			g.where[w] = true
		}
		g.bad = append(g.bad, k)
	}
	list := func(m map[string]bool) string {
		var w []string
		for k := range m {
			w = append(w, k)
		}
		slices.Sort(w)
		return strings.Join(w, ", ")
	}
	t.Logf("%s after a crash between the rmdirs of a clear: %d sets of crash points, %d states; the crash points in h_clear: %s",
		what, clear.sets, clear.states, list(clear.where))
	t.Logf("%s, L being an earlier version's or as a reboot left it: %d sets, %d states", what, old.sets, old.states)
	if clear.sets == 0 {
		t.Errorf("no crash between the rmdirs of a clear %s: the model no longer reaches it", what)
	}
	if bad.sets == 0 {
		return
	}
	// Runs without a crash, then the shortest, show the cause; the list
	// says how far it goes.
	slices.SortFunc(bad.bad, func(a, b string) int {
		ca, cb := cases[a], cases[b]
		return cmp.Or(len(ca.Crashed)-len(cb.Crashed), len(ca.Example.Lines)-len(cb.Example.Lines), strings.Compare(a, b))
	})
	for _, k := range bad.bad[:min(2, len(bad.bad))] {
		c := cases[k]
		t.Errorf("a fresh client %s after %s (%d states), not after a crash inside h_clear:\n%s\n  a fresh client alone:\n      %s",
			what, k, c.States, c.Example, strings.Join(c.Fresh, "\n      "))
	}
	t.Errorf("%d sets of crash points (%d states) %s without a crash inside h_clear; the positions: %s",
		bad.sets, bad.states, what, list(bad.where))
}

// Two clients: each acquires (and holds, fences, releases) twice, or one
// acquires and then breaks (by the rules, or forced by token).
var twoClients = []struct {
	name     string
	programs [][]Op
}{
	{"acquire twice each", [][]Op{{Acquire, Acquire}, {Acquire, Acquire}}},
	{"acquire twice, acquire then break", [][]Op{{Acquire, Acquire}, {Acquire, Break}}},
}

// Three clients: each acquires once, and one breaks after.
var threeClients = [][]Op{{Acquire}, {Acquire}, {Acquire, Break}}

// threeBound bounds the three-client searches with a reboot, breadth first.
const threeBound = 150_000

// exploresSpent checks that the search reached both kinds of spent
// attempt, the retry with a spare token after one, and the end of an
// acquire whose spare was spent too.
func exploresSpent(t *testing.T, r *Result) {
	t.Helper()
	t.Logf("attempts found spent: %d after a publication, %d after a landing cleared before the look; %d retries took the lock, %d acquires ran out of tokens",
		r.SpentPublished, r.SpentLanded, r.Retried, r.GaveUp)
	if r.SpentPublished == 0 || r.SpentLanded == 0 || r.Retried == 0 || r.GaveUp == 0 {
		t.Error("the search no longer reaches every kind of spent attempt, its retry and the end of the spares")
	}
}

// TestModelTwoClientsExhaustive explores every interleaving of two clients,
// with crashes as moves of their own, time passing between any two steps,
// and one reboot, from an empty store, an earlier version's lock and an
// ownerless one, each acquire with a spare token.
func TestModelTwoClientsExhaustive(t *testing.T) {
	for _, tc := range twoClients {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := explore(t, Config{Programs: tc.programs, Starts: everyStart, Reboots: 1, CrashMoves: true, Spares: 1})
			if !r.Complete {
				t.Fatal("the search was cut short")
			}
			holds(t, r)
			onlyClearLeavesAgeDebris(t, r)
			onlyClearNeedsTime(t, r)
			exploresSpent(t, r)
		})
	}
}

// TestModelThreeClientsBounded explores three clients breadth first within
// a bound of states: without reboots and without spare tokens (the bound is
// never reached: the log says "exhaustive"; with a spare it would take
// about 7 million states), and with one reboot and a spare (cut at
// threeBound). Crashes are clients never scheduled again and time passes
// just before the sample that sees it (Config.CrashMoves, Config.LazyTime:
// the same runs, in fewer states).
func TestModelThreeClientsBounded(t *testing.T) {
	for _, tc := range []struct {
		reboots, spares, bound int
	}{{0, 0, 1_000_000}, {1, 1, threeBound}} {
		t.Run(fmt.Sprintf("%d reboots, %d spares", tc.reboots, tc.spares), func(t *testing.T) {
			t.Parallel()
			r := explore(t, Config{Programs: threeClients, Starts: everyStart, Reboots: tc.reboots, LazyTime: true,
				Spares: tc.spares, MaxStates: tc.bound})
			holds(t, r)
			onlyClearLeavesAgeDebris(t, r)
			onlyClearNeedsTime(t, r)
		})
	}
}

// findsBug checks that the checker finds a violation of each of invs in
// variant v, and that the same runs of the protocol have none: the
// violations are the variant's.
func findsBug(t *testing.T, v Variant, invs ...string) {
	t.Helper()
	t.Parallel()
	cfg := Config{Programs: [][]Op{{Acquire}, {Acquire}}, Starts: everyStart}
	for _, w := range explore(t, cfg).Violations {
		t.Fatalf("the protocol itself fails:\n%v", w)
	}
	cfg.Variant = v
	found := explore(t, cfg).Violations
	for _, inv := range invs {
		i := slices.IndexFunc(found, func(w *Violation) bool { return w.Invariant == inv })
		if i < 0 {
			t.Errorf("the checker finds no violation of %q in the %s variant", inv, v)
			continue
		}
		t.Logf("found, as it should be:\n%v", found[i])
	}
}

func TestModelFindsWholeDirectorySteal(t *testing.T) {
	findsBug(t, WholeDirSteal, NonOwner)
}

func TestModelFindsCheckThenRelease(t *testing.T) {
	findsBug(t, CheckThenRelease, NonOwner)
}

func TestModelFindsOwnerlessBirth(t *testing.T) {
	findsBug(t, OwnerlessBirth, TwoHolders)
}

// TestModelFindsHeartbeatRevives: a heartbeat that renews a lease that had
// run out (its holder stalled) keeps a lock a waiter judged stale meanwhile
// and takes.
func TestModelFindsHeartbeatRevives(t *testing.T) {
	findsBug(t, HeartbeatRevives, TwoHolders)
}

// TestModelFindsExitedWhileRunning: an exited rule that finds a holder
// gone while it merely stalls takes the lock of a live holder.
func TestModelFindsExitedWhileRunning(t *testing.T) {
	findsBug(t, ExitedWhileRunning, NonOwner, TwoHolders)
}

// TestModelFindsFenceLooksFirst: a fence that looks for its record before
// reading its age passes when the record is stolen between the two (its
// lease having run out): the age of a record that is gone is unknown.
func TestModelFindsFenceLooksFirst(t *testing.T) {
	findsBug(t, FenceLooksFirst, StaleFence)
}

// TestModelFindsTokenReuse: h_create as first written published a second
// lock of the same token after its first was taken before it looked; a
// steal judged on the first then takes the second from a live holder. Three
// clients find it.
func TestModelFindsTokenReuse(t *testing.T) {
	t.Parallel()
	r := explore(t, Config{Programs: threeClients, Starts: []Start{NoLock}, Variant: RetryAndUndo, LazyTime: true})
	for _, v := range r.Violations {
		if v.Invariant == TwoHolders || v.Invariant == NonOwner {
			t.Logf("found, as it should be:\n%v", v)
			return
		}
	}
	t.Errorf("the checker finds no second holder in the %s variant", RetryAndUndo)
}

// TestModelFindsSpentTokenReuse: an acquire that goes on after a spent
// attempt with the same token publishes it again (two clients: the one
// whose lock was taken while it stalled, and the one that took it), and a
// steal judged on its first lock then takes the second from a live holder
// (three clients). With a spare token instead, neither.
func TestModelFindsSpentTokenReuse(t *testing.T) {
	t.Parallel()
	two := Config{Programs: [][]Op{{Acquire}, {Acquire}}, Starts: everyStart, Spares: 1}
	for _, w := range explore(t, two).Violations {
		t.Fatalf("the protocol itself fails:\n%v", w)
	}
	two.Variant, two.Spares = SpentReuse, 0
	found := explore(t, two).Violations
	if i := slices.IndexFunc(found, func(w *Violation) bool { return w.Invariant == OneLockPerToken }); i >= 0 {
		t.Logf("found, as it should be:\n%v", found[i])
	} else {
		t.Errorf("the checker finds no token published twice in the %s variant", SpentReuse)
	}
	r := explore(t, Config{Programs: threeClients, Starts: []Start{NoLock}, Variant: SpentReuse, LazyTime: true, MaxStates: threeBound})
	for _, v := range r.Violations {
		if v.Invariant == TwoHolders || v.Invariant == NonOwner {
			t.Logf("found, as it should be:\n%v", v)
			return
		}
	}
	t.Errorf("the checker finds no second holder in the %s variant", SpentReuse)
}

// TestModelFindsLandedDebris: h_create as first written moved a directory
// that landed inside L back out, which can leave L empty (an ownerless lock
// that only the age rule frees) without any crash.
func TestModelFindsLandedDebris(t *testing.T) {
	t.Parallel()
	r := explore(t, Config{Programs: [][]Op{{Acquire}, {Acquire}}, Starts: []Start{NoLock}, Variant: RetryAndUndo, CrashMoves: true})
	for _, c := range r.AgeRule {
		if !c.InClear() && !c.Initial && !c.Rebooted {
			t.Logf("found, as it should be: a fresh client needs the age rule after %v:\n%s", c.Where, c.Example)
			return
		}
	}
	t.Errorf("the checker finds no debris outside h_clear in the %s variant", RetryAndUndo)
}
