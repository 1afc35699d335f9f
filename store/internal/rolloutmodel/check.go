package rolloutmodel

import (
	"fmt"
	"slices"
	"strings"
)

// The invariants, as violations name them.
const (
	NeverMixed    = "never a mixed fleet once it ends"
	NeverUnproven = "never a host left on a runtime that did not pass its checks"
	WriteOnce     = "a decision, an outcome or a vote never changes once recorded"
	CommitValid   = "commit only when every host voted ready after its checks passed"
	LearnsDecided = "a host learns only the decision that was recorded"
	StaysDone     = "a host that finished stays where it finished"
	LeaseBound    = "no hold outlives its lease"
	ServiceFollow = "the service runs what current names once it ends"
	ResumeEnds    = "a resume finishes what an interruption left"
)

// stateViolations checks state s: what any state must satisfy, whatever
// runs next.
func (m *Model) stateViolations(s *State) [][2]string {
	var v [][2]string
	bad := func(inv, format string, args ...any) { v = append(v, [2]string{inv, fmt.Sprintf(format, args...)}) }
	d0 := &s.H[0]
	var sides [3]bool // DoneNone, DoneFrom, DoneTo seen
	for h := range m.Hosts {
		H := &s.H[h]
		sides[H.Done] = true
		if H.Done != DoneNone {
			if H.Done == DoneTo && !H.Passed {
				bad(NeverUnproven, "host %d finished on the new runtime, whose checks did not pass there", h)
			}
			if (H.Done == DoneTo) != (H.Cur == To) {
				bad(StaysDone, "host %d finished on %s, and current is %s", h, H.Done, H.Cur)
			}
		}
		if h > 0 && H.Dec != WNone && H.Dec != d0.Dec {
			bad(LearnsDecided, "host %d learnt the outcome %s, and the decider's decision is %s", h, wordName(H.Dec, false), wordName(d0.Dec, false))
		}
		if d0.Dec == WYes && (!H.Passed || h > 0 && H.Vote != WYes) {
			bad(CommitValid, "the decision is commit, and host %d has vote %s, checks passed %v", h, wordName(H.Vote, true), H.Passed)
		}
	}
	if sides[DoneFrom] && sides[DoneTo] {
		var done []string
		for h := range m.Hosts {
			if s.H[h].Done != DoneNone {
				done = append(done, fmt.Sprintf("host %d on %s", h, s.H[h].Done))
			}
		}
		bad(NeverMixed, "%s", strings.Join(done, ", "))
	}
	for _, kh := range m.kh {
		c := s.cmd(kh.k, kh.h)
		if c.Lost && !c.ended() && waitsForClient(c.Pos) {
			n := *s
			if !m.hostStep(&n, kh.k, kh.h, 0, nil) && !m.hostStep(&n, kh.k, kh.h, 1, nil) {
				bad(LeaseBound, "%s at %s waits for ever for a client that is gone, and keeps renewing its lock", kindName(kh.k, kh.h), c.Pos)
			}
		}
	}
	return v
}

// waitsForClient reports whether a host command at p waits for a line from
// its client (a wait for the lock is bounded by the lock's rules).
func waitsForClient(p Pos) bool { return p == PArmed || p == PHealthy || p == PReady || p == PHeld }

// checkStep checks the step l from s to n: a record, once written, never
// changes.
func (x *search) checkStep(i int, s, n *State, l Label) {
	for h := range x.m.Hosts {
		a, b := &s.H[h], &n.H[h]
		for _, w := range []struct {
			name     string
			was, now Word
			vote     bool
		}{{"vote", a.Vote, b.Vote, true}, {"decision", a.Dec, b.Dec, false}} {
			if w.was != WNone && w.now != w.was {
				x.violate(WriteOnce, fmt.Sprintf("host %d's %s went from %s to %s", h, w.name, wordName(w.was, w.vote), wordName(w.now, w.vote)), i, &l, nil)
			}
		}
		if a.Done != DoneNone && b.Done != a.Done {
			x.violate(WriteOnce, fmt.Sprintf("host %d's done went from %s to %s", h, a.Done, b.Done), i, &l, nil)
		}
	}
}

// quiescent reports whether everyone has stopped: the clients ended (or
// never started), every host command ended (or never started).
func (m *Model) quiescent(s *State) bool {
	if !s.C.ended() || !s.R.ended() && s.R.Pos != RStart {
		return false
	}
	for _, kh := range m.kh {
		if c := s.cmd(kh.k, kh.h); c.Pos != PIdle && !c.ended() {
			return false
		}
	}
	return true
}

// quiescent checks a state in which everyone has stopped: no lock is left
// held but by a process that is gone or a lease that ran out; a mixed
// fleet is reported (Result.Mixed); and a resume (or, for a single host,
// the next command that takes its lock) run alone finishes every host on
// one runtime that passed its checks everywhere, its service restarted on
// it.
func (x *search) quiescent(i int, s *State) {
	m := x.m
	x.res.Quiescent++
	for h := range m.Hosts {
		if H := &s.H[h]; H.Holder != KNone && !H.Exp {
			x.violate(LeaseBound, fmt.Sprintf("host %d's lock is held by %s, which ended", h, kindName(H.Holder, h)), i, nil, nil)
		}
	}
	if k, c := m.mixed(s); k != "" {
		g := x.res.Mixed[k]
		if g == nil {
			g = &Case{InDoubt: c, Faulty: s.Faults+s.Stalls > 0, Example: x.trace(i, nil)}
			x.res.Mixed[k] = g
		}
		g.States++
	}
	var log []string
	f, steps := m.resume(*s, func(l string) { log = append(log, l) })
	x.res.MaxFreshSteps = max(x.res.MaxFreshSteps, steps)
	if steps < 0 {
		x.violate(ResumeEnds, "the resume did not end", i, nil, log)
		return
	}
	var side []Side
	for h := range m.Hosts {
		H := &f.H[h]
		switch {
		case H.record() && H.Done == DoneNone:
			x.violate(ResumeEnds, fmt.Sprintf("host %d is not finished after the resume", h), i, nil, log)
		case !H.record() && H.Cur != From:
			x.violate(NeverUnproven, fmt.Sprintf("host %d is on the new runtime with no record that says so", h), i, nil, log)
		}
		if H.Cur == To && !H.Passed {
			x.violate(NeverUnproven, fmt.Sprintf("host %d is left on the new runtime, whose checks did not pass there", h), i, nil, log)
		}
		if H.Serving != H.Cur {
			x.violate(ServiceFollow, fmt.Sprintf("host %d's service runs %s, and current is %s", h, H.Serving, H.Cur), i, nil, log)
		}
		if H.Holder != KNone {
			x.violate(LeaseBound, fmt.Sprintf("host %d's lock is still held after the resume", h), i, nil, log)
		}
		side = append(side, H.Cur)
	}
	if slices.Contains(side, From) && slices.Contains(side, To) {
		x.violate(NeverMixed, fmt.Sprintf("after the resume, current is %v on hosts 0..%d", side, m.Hosts-1), i, nil, log)
	}
}

// mixed names a quiescent state in which the hosts are not all on one
// runtime serving it, by where the coordinator stopped and which hosts
// are in doubt (voted ready, no outcome) or unfinished (a record, not
// done); "" when they are all on one. It also reports whether a host is
// in doubt.
func (m *Model) mixed(s *State) (string, bool) {
	cur, serve := map[Side]bool{}, true
	var doubt, open []string
	for h := range m.Hosts {
		H := &s.H[h]
		cur[H.Cur] = true
		serve = serve && H.Serving == H.Cur
		if H.record() && H.Done == DoneNone {
			open = append(open, fmt.Sprint(h))
			if h > 0 && H.Vote == WYes && H.Dec == WNone {
				doubt = append(doubt, fmt.Sprint(h))
			}
		}
	}
	if len(cur) == 1 && serve {
		return "", false
	}
	how := "ended"
	if s.C.Crashed {
		how = "crashed"
	}
	k := fmt.Sprintf("the coordinator %s at %s; faults %d, stalls %d; unfinished hosts [%s]; in doubt [%s]",
		how, s.C.Pos, s.Faults, s.Stalls, strings.Join(open, " "), strings.Join(doubt, " "))
	return k, len(doubt) > 0
}

// resume runs, from a state in which everyone stopped, hoist rollout
// resume alone (for a single host: the next command that takes its lock),
// with no faults: every lock is taken from its stopped holder (whose host
// process is gone or whose lease runs out). It returns the state it ends
// in and how many steps it took, -1 if it did not end.
func (m *Model) resume(s State, log func(string)) (State, int) {
	for h := range s.H {
		s.H[h].Holder, s.H[h].Exp = KNone, false
	}
	f := *m
	f.Faults, f.Stalls = 0, 0
	var actors []int
	if m.Mode == Single {
		f.OtherOn, f.Other = 1, Recover
		f.kh = f.cmds()
		s.K = Cmd{Lost: true}
		actors = []int{actK}
	} else {
		f.Resumer = true
		s.R, s.Q = Coord{Pos: RStart}, [maxHosts]Cmd{}
		actors = []int{actR}
		for h := range m.Hosts {
			actors = append(actors, actQ(h))
		}
	}
	done := func() bool {
		if m.Mode == Single {
			return s.K.ended()
		}
		return s.R.ended() && f.quiescent(&s)
	}
	for steps := 0; steps < 200; steps++ {
		if done() {
			return s, steps
		}
		moved := false
		for _, a := range actors {
			var d desc
			if f.step(&s, a, 0, &d) {
				if log != nil {
					log(fmt.Sprintf("%-4s %-16s %s", actorName(a, &f), d.step, d.fx))
				}
				f.canon(&s)
				moved = true
				break
			}
		}
		if !moved {
			return s, -1
		}
	}
	return s, -1
}
