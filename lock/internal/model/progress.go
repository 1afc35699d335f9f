package model

import (
	"fmt"
	"slices"
	"strings"
)

// Invariant 3, no debris blocks progress: from every state, with every
// client stopped there (crashed), a fresh client running alone acquires the
// lock within maxFreshSteps of its own steps, time passing (every record and
// L growing older than the stale bound) whenever it would wait. A state
// where it acquires only after L itself grew old, by the ownerless rule
// rather than by a lease running out, is reported (Result.AgeRule) with the
// positions of the stopped clients: those are the crash points that need
// the age rule.
//
// Its stronger form: from every state in which every client has crashed
// (not merely stalled), the fresh client acquires without time passing at
// all, no lease and no L running out, as the exited rule lets it take a
// lock whose holder's process is gone at once. The states where it needs
// time are reported (Result.NeedsTime) the same way: the known ones are a
// crash inside h_clear, which leaves an empty L, and an earlier version's
// lock, which only its age frees.

// AgeCase is the states, every client crashed or done, from which a fresh
// client needs L's age (the ownerless rule) to acquire (Result.AgeRule), or
// needs time to pass at all (Result.NeedsTime), grouped by where the
// clients crashed mid-operation.
type AgeCase struct {
	Crashed  []Pos    // where clients crashed mid-operation
	Where    []string // the same, named by Client.where
	Initial  bool     // L is the earlier version's directory the run started with
	Rebooted bool     // L is a directory without records that the reboot left
	States   int      // how many such states
	Example  Trace    // a shortest run to one of them
	Fresh    []string // the fresh client's run from there
	at       int      // the state of Example
}

// InClear reports whether a client crashed inside h_clear after its first
// removal and before its rmdir L: the known crash point that leaves an
// empty L, which reads as an earlier version's ownerless lock.
func (a *AgeCase) InClear() bool {
	return slices.ContainsFunc(a.Crashed, inClear)
}

func inClear(p Pos) bool { return p > PClearJudged && p <= PClearRmLock }

// ClearPoints names the crash points of InClear.
func (a *AgeCase) ClearPoints() []string {
	var w []string
	for i, p := range a.Crashed {
		if inClear(p) {
			w = append(w, a.Where[i])
		}
	}
	return w
}

const (
	maxFreshSteps = 80
	maxFreshWaits = 3
)

type progressKey struct {
	FS
	Gen    uint8
	Exited Set // the records whose holder's process the fresh client finds gone
}

type progressVerdict struct {
	ok      bool // acquires, time passing if need be
	atOnce  bool // acquires without time passing
	lockAge bool // needed L's age: an ownerless lock judged stale
	steps   int
}

// progressOf is the verdict of the fresh client from s, which depends on
// the filesystem, and on which records' creators it finds crashed (every
// client that is not done is, in its run).
func (m *Model) progressOf(s *State) progressVerdict {
	k := progressKey{FS: s.FS, Gen: s.Gen}
	s.Rec.each(func(t Tok) {
		if c := creator(t); genOf(t) == s.Gen && s.C[c].Pos != PDone && s.me(c) == t {
			k.Exited |= bit(t)
		}
	})
	if v, ok := m.progress[k]; ok {
		return v
	}
	var v progressVerdict
	v.atOnce, _, v.steps = m.freshRun(s, false, nil)
	v.ok = v.atOnce
	if !v.ok {
		v.ok, v.lockAge, v.steps = m.freshRun(s, true, nil)
	}
	m.progress[k] = v
	return v
}

// freshRun runs a fresh client alone from s, every other client stopped.
// With withTime, whenever it would wait (its step changes nothing, or leads
// back to where it was), time passes. It reports whether the client
// acquired, whether it judged an ownerless lock by its age after time
// passed, and how many steps it took. log, when not nil, gets every step.
func (m *Model) freshRun(s *State, withTime bool, log func(string)) (ok, lockAge bool, steps int) {
	t := *s
	for c := range t.C {
		if t.C[c].Pos != PDone {
			t.C[c].Crashed = true
		}
	}
	t.C[freshSlot] = Client{Pos: PSample, Judged: noTok}
	seen := map[State]bool{t: true}
	waits := 0
	for ; steps < maxFreshSteps; steps++ {
		cl := &t.C[freshSlot]
		if cl.Pos == PHold {
			return true, lockAge, steps
		}
		n := t
		var d *desc
		if log != nil {
			d = &desc{}
		}
		m.step(&n, freshSlot, 0, d)
		if log != nil {
			log(fmt.Sprintf("F   %-28s %s", d.step, d.fx))
		}
		if nc := n.C[freshSlot]; cl.Pos == PSample && nc.Pos != PSample && nc.Kind == Ownerless && waits > 0 {
			lockAge = true
		}
		if seen[n] {
			if !withTime || waits >= maxFreshWaits {
				if log != nil {
					log("... and so on for ever: it never acquires")
				}
				return false, lockAge, steps
			}
			waits++
			n.Expired |= n.withRecord()
			n.LockOld = n.Lock
			if log != nil {
				log("env time passes: every record and L are older than the stale bound")
			}
		}
		seen[n] = true
		t = n
	}
	return false, lockAge, steps
}

// freshLog is the fresh client's run from s, for reports.
func (m *Model) freshLog(s *State) []string {
	var lines []string
	m.freshRun(s, true, func(l string) { lines = append(lines, l) })
	return lines
}

// checkProgress checks invariant 3 in state i. A state where every client
// has crashed or is done, and a fresh client needs time to pass, is filed
// under the positions where the clients crashed mid-operation (NeedsTime),
// and if it needed the ownerless rule, there too (AgeRule).
func (x *search) checkProgress(i int, s *State) {
	v := x.m.progressOf(s)
	if !v.ok {
		if !x.seen[DebrisBlocks] {
			x.violate(DebrisBlocks, "a fresh client alone never acquires the lock from: "+s.String(), i, nil, x.m.freshLog(s))
		}
		return
	}
	x.res.MaxFreshSteps = max(x.res.MaxFreshSteps, v.steps)
	if v.atOnce {
		return
	}
	k, crashed, where, quiet := x.m.crashPoints(s)
	if !quiet {
		return
	}
	ex := x.file(x.res.NeedsTime, k, crashed, where, i, s, nil)
	if v.lockAge {
		x.file(x.res.AgeRule, k, crashed, where, i, s, ex)
	}
}

// file counts state i under the crash points k in cases. A new case gets a
// shortest run to state i, and the fresh client's run from there: those of
// like, when it is another case of state i.
func (x *search) file(cases map[string]*AgeCase, k string, crashed []Pos, where []string, i int, s *State, like *AgeCase) *AgeCase {
	c := cases[k]
	if c == nil {
		c = &AgeCase{Crashed: crashed, Where: where, Initial: s.Initial, Rebooted: s.Rebooted, at: i}
		if like != nil && like.at == i {
			c.Example, c.Fresh = like.Example, like.Fresh
		} else {
			c.Example, c.Fresh = x.trace(i, nil), x.m.freshLog(s)
		}
		cases[k] = c
	}
	c.States++
	return c
}

// crashPoints names where the clients of s crashed mid-operation (between
// operations they hold nothing half done), and reports whether every
// client has crashed or is done (without CrashMoves, every client that is
// not done is taken as crashed where it is). A lock directory the run
// started with (an earlier version's), or one without records that the
// reboot left (the clients that left it so crashed at the reboot, and the
// state before it is filed too), is named too.
func (m *Model) crashPoints(s *State) (key string, ps []Pos, w []string, quiet bool) {
	var cs []Client
	for c := range len(m.Programs) {
		cl := s.C[c]
		if m.CrashMoves && !cl.Crashed && cl.Pos != PDone {
			return "", nil, nil, false // it is filed once every client crashed
		}
		if !idle(cl.Pos) {
			cs = append(cs, cl)
		}
	}
	slices.SortFunc(cs, func(a, b Client) int { return strings.Compare(a.where(), b.where()) })
	for _, cl := range cs {
		ps, w = append(ps, cl.Pos), append(w, cl.where())
	}
	k := strings.Join(w, " + ")
	if k == "" {
		k = "no crash mid-operation"
	}
	switch {
	case s.Initial:
		k = "the earlier version's L; " + k
	case s.Rebooted:
		k = "L as the reboot left it; " + k
	}
	return k, ps, w, true
}
