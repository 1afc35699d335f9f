package rolloutmodel

import (
	"fmt"
	"strings"
)

// Violation is a state or a step that breaks an invariant, with a shortest
// run to it (the search is breadth first).
type Violation struct {
	Invariant string
	What      string
	Trace     Trace
	Fresh     []string // for the invariants checked after a resume: the resume's run
}

func (v *Violation) String() string {
	s := fmt.Sprintf("%s: %s\n%s", v.Invariant, v.What, v.Trace)
	if len(v.Fresh) > 0 {
		s += "\n  then a resume, alone:\n      " + strings.Join(v.Fresh, "\n      ")
	}
	return s
}

// Result is what a search found.
type Result struct {
	States, Transitions int
	Complete            bool // false when MaxStates cut the search
	Stopped             bool // the search ended at the violations Config.StopAfter sought
	Depth               int  // the longest of the shortest runs explored
	// CompleteDepth is, when MaxStates cut the search, how many moves from
	// a start every state is explored to (breadth first); else Depth.
	CompleteDepth int
	Violations    []*Violation
	// Quiescent counts the states in which everyone has stopped; from each,
	// a resume runs alone (Mixed, and the invariants after it).
	Quiescent int
	// Mixed groups the quiescent states in which the hosts are not all on
	// one runtime serving it (before the resume), by what stopped where.
	Mixed         map[string]*Case
	MaxFreshSteps int // the most steps a resume took to finish
}

// Case is a group of quiescent states, with a shortest run to one.
type Case struct {
	States  int
	InDoubt bool // a host voted ready and does not know the outcome
	Faulty  bool // a host or a connection failed, or a holder stalled past its lease
	Example Trace
}

type search struct {
	m      *Model
	res    *Result
	index  map[key]int32
	states []key
	parent []int32
	label  []Label
	depth  []uint16
	start  map[int32]int
	seen   map[string]bool
}

// Explore searches every state reachable from the starts and checks the
// invariants in each.
func (m *Model) Explore() *Result {
	size := m.MaxStates
	if size == 0 {
		size = 1 << 16
	}
	x := &search{m: m, res: &Result{Complete: true, Mixed: map[string]*Case{}},
		index: make(map[key]int32, size), start: map[int32]int{}, seen: map[string]bool{}}
	for i, st := range m.starts() {
		x.start[int32(len(x.states))] = i
		x.add(st, -1, Label{})
	}
	for i := 0; i < len(x.states) && !x.stopped(); i++ {
		s := unpack(x.states[i])
		for a := range nActors {
			for ch := range 2 {
				n := s
				if !m.step(&n, a, ch, nil) {
					continue
				}
				l := Label{Actor: int8(a), Choice: uint8(ch)}
				x.checkStep(i, &s, &n, l)
				m.canon(&n)
				x.add(n, int32(i), l)
			}
		}
		m.envMoves(&s, func(n State, l Label) {
			m.canon(&n)
			x.add(n, int32(i), l)
		})
	}
	x.res.States = len(x.states)
	x.res.Stopped = x.stopped()
	if x.res.Complete {
		x.res.CompleteDepth = x.res.Depth
	}
	return x.res
}

func (x *search) stopped() bool {
	if len(x.m.StopAfter) == 0 {
		return false
	}
	for _, inv := range x.m.StopAfter {
		if !x.seen[inv] {
			return false
		}
	}
	return true
}

// step runs actor a's next step (the choice-th), and reports whether it
// had one.
func (m *Model) step(s *State, a, choice int, d *desc) bool {
	switch {
	case a == actC:
		return choice == 0 && m.coordStep(s, d)
	case a == actR:
		return choice == 0 && m.Resumer && m.resumeStep(s, d)
	case a < actQ(0):
		return a-actP(0) < m.Hosts && m.hostStep(s, KPart, a-actP(0), choice, d)
	case a < actK:
		return a-actQ(0) < m.Hosts && m.hostStep(s, KRes, a-actQ(0), choice, d)
	}
	return m.OtherOn > 0 && m.hostStep(s, KOther, m.OtherOn-1, choice, d)
}

// add records n, reached from state p by l, if it is new, and checks it.
func (x *search) add(n State, p int32, l Label) {
	x.res.Transitions++
	k := pack(&n)
	if _, ok := x.index[k]; ok {
		return
	}
	if x.m.MaxStates > 0 && len(x.states) >= x.m.MaxStates {
		if x.res.Complete {
			x.res.Complete, x.res.CompleteDepth = false, int(x.depth[p])
		}
		return
	}
	i := int32(len(x.states))
	x.index[k] = i
	x.states = append(x.states, k)
	x.parent = append(x.parent, p)
	x.label = append(x.label, l)
	d := uint16(0)
	if p >= 0 {
		d = x.depth[p] + 1
	}
	x.depth = append(x.depth, d)
	x.res.Depth = max(x.res.Depth, int(d))
	for _, v := range x.m.stateViolations(&n) {
		x.violate(v[0], v[1], int(i), nil, nil)
	}
	if x.m.quiescent(&n) {
		x.quiescent(int(i), &n)
	}
}

// violate records the first violation of each invariant.
func (x *search) violate(inv, what string, i int, l *Label, fresh []string) {
	if x.seen[inv] {
		return
	}
	x.seen[inv] = true
	x.res.Violations = append(x.res.Violations, &Violation{Invariant: inv, What: what, Trace: x.trace(i, l), Fresh: fresh})
}

// trace is the run to state i, and then the move l if given.
func (x *search) trace(i int, l *Label) Trace {
	var ls []Label
	j := int32(i)
	for ; x.parent[j] >= 0; j = x.parent[j] {
		ls = append(ls, x.label[j])
	}
	for a, b := 0, len(ls)-1; a < b; a, b = a+1, b-1 {
		ls[a], ls[b] = ls[b], ls[a]
	}
	if l != nil {
		ls = append(ls, *l)
	}
	return x.m.replay(x.start[j], ls)
}
