package rolloutmodel

import (
	"fmt"
	"strings"
)

// desc receives the name and the effect of the step being run, for traces.
// A nil *desc ignores everything, so the search formats nothing.
type desc struct{ step, fx string }

// say names the step by the position it ran at (a Pos or a CPos).
func (d *desc) say(at fmt.Stringer, format string, args ...any) {
	if d == nil {
		return
	}
	d.step, d.fx = at.String(), fmt.Sprintf(format, args...)
}

// actorName names actor a for traces: C the coordinator, R the resumer, P1
// host 1's participant, Q1 the resumer's command on host 1, K the other
// command.
func actorName(a int, m *Model) string {
	switch {
	case a == actC:
		return "C"
	case a == actR:
		return "R"
	case a < actQ(0):
		return kindName(KPart, a-actP(0))
	case a < actK:
		return kindName(KRes, a-actQ(0))
	}
	return "K"
}

// Trace is a run of the model, one line per move.
type Trace struct {
	Start string
	Lines []string
	Final State
	m     *Model
}

// replay runs the moves ls from start st and describes them.
func (m *Model) replay(st int, ls []Label) Trace {
	s := m.starts()[st]
	tr := Trace{Start: m.startName(&s), m: m}
	for _, l := range ls {
		var d desc
		if l.Actor >= 0 {
			if !m.step(&s, int(l.Actor), int(l.Choice), &d) {
				tr.Lines = append(tr.Lines, fmt.Sprintf("(move %+v is not possible)", l))
				break
			}
			m.canon(&s)
			tr.Lines = append(tr.Lines, fmt.Sprintf("%-4s %-16s %s", actorName(int(l.Actor), m), d.step, d.fx))
			continue
		}
		found := false
		m.envMoves(&s, func(n State, e Label) {
			if !found && e == l {
				s, found = n, true
			}
		})
		if !found {
			tr.Lines = append(tr.Lines, fmt.Sprintf("(move %+v is not possible)", l))
			break
		}
		m.canon(&s)
		tr.Lines = append(tr.Lines, "env  "+envName(l))
	}
	tr.Final = s
	return tr
}

func envName(l Label) string {
	switch l.Move {
	case MvCrashC:
		return fmt.Sprintf("%-16s %s", "crash", "the coordinator dies: its host commands see EOF")
	case MvCrashR:
		return fmt.Sprintf("%-16s %s", "crash", "the resumer dies: its host commands see EOF")
	case MvCut:
		return fmt.Sprintf("%-16s the coordinator's connection to host %d is cut", "cut", l.Host)
	case MvKill:
		return fmt.Sprintf("%-16s %s's host shell is killed (the exited rule frees its lock)", "kill", kindName(l.Kind, int(l.Host)))
	}
	return fmt.Sprintf("%-16s host %d reboots: its host commands die; the service starts on current", "reboot", l.Host)
}

func (m *Model) startName(s *State) string {
	var bad []string
	for h := range m.Hosts {
		if !s.H[h].Healthy {
			bad = append(bad, fmt.Sprint(h))
		}
	}
	if len(bad) == 0 {
		return "the new runtime healthy on every host"
	}
	return "the new runtime failing its checks on host " + strings.Join(bad, ", ")
}

func (t Trace) String() string {
	var b strings.Builder
	hosts := "one host"
	if t.m.Hosts > 1 {
		hosts = fmt.Sprintf("%d hosts", t.m.Hosts)
	}
	fmt.Fprintf(&b, "from %s on the old runtime, %s:\n", hosts, t.Start)
	for i, l := range t.Lines {
		fmt.Fprintf(&b, "%4d. %s\n", i+1, l)
	}
	fmt.Fprintf(&b, "      then: %s", t.m.describe(&t.Final))
	return b.String()
}

// describe lists every host's current, service and record, and where the
// clients and host commands are.
func (m *Model) describe(s *State) string {
	var p []string
	for h := range m.Hosts {
		H := &s.H[h]
		r := fmt.Sprintf("host %d: current %s, service %s", h, H.Cur, H.Serving)
		if H.record() {
			r += fmt.Sprintf(", next %s back %s", H.Next, H.Back)
		}
		if H.Vote != WNone {
			r += ", vote " + wordName(H.Vote, true)
		}
		if H.Dec != WNone {
			r += map[bool]string{true: ", decision ", false: ", outcome "}[m.decider(h)] + wordName(H.Dec, false)
		}
		if H.Done != DoneNone {
			r += ", done " + H.Done.String()
		}
		if H.Holder != KNone {
			r += ", locked by " + kindName(H.Holder, h)
			if H.Exp {
				r += " (lease run out)"
			}
		}
		p = append(p, r)
	}
	var a []string
	for _, c := range []struct {
		n string
		c *Coord
	}{{"C", &s.C}, {"R", &s.R}} {
		switch {
		case c.c.Crashed:
			a = append(a, c.n+" crashed at "+c.c.Pos.String())
		case !c.c.ended() && c.c.Pos != RStart:
			a = append(a, c.n+" at "+c.c.Pos.String())
		}
	}
	for _, kh := range m.kh {
		c := s.cmd(kh.k, kh.h)
		switch {
		case c.Dead:
			a = append(a, kindName(kh.k, kh.h)+" killed")
		case c.Pos != PIdle && c.Pos != PEnd:
			a = append(a, kindName(kh.k, kh.h)+" at "+c.Pos.String())
		}
	}
	return strings.Join(p, "; ") + "; " + strings.Join(a, ", ")
}
