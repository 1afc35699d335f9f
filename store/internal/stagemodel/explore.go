package stagemodel

import (
	"fmt"
	"strings"
)

// The invariants, by the names the tests and traces use.
const (
	OneOwner    = "OneOwner"    // at most one push past its claim at once: a promotion, or a takeover
	OneMark     = "OneMark"     // the stage never holds two marks (resume, claimed-*, taken-*)
	OwnBytes    = "OwnBytes"    // a promotion promotes the tree of the file its digest read, which no other push's upload writes
	Resumable   = "Resumable"   // a stage given back (promote.yielded) is one h_resume takes
	OnceOnly    = "OnceOnly"    // runtimes/<id> is renamed into place at most once
	WholeTree   = "WholeTree"   // nothing promoted from a stage gc began removing, unless the promoter's lease ran out after its fence
	SweptIsGone = "SweptIsGone" // a stage gc began removing is entered or taken over by no command that was not in it already
)

// Label is one move: an actor's step (Actor, Choice), or the
// environment's (Actor -1): a crash of actor Arg, or a stall (Arg -1).
type Label struct {
	Actor, Arg int8
	Choice     uint8
}

// Violation is a state or step that breaks an invariant, with a shortest
// run to it.
type Violation struct {
	Invariant, What string
	Trace           []string
}

func (v *Violation) String() string {
	return fmt.Sprintf("%s: %s\n    %s", v.Invariant, v.What, strings.Join(v.Trace, "\n    "))
}

// Result is what a search found.
type Result struct {
	States, Transitions int
	Complete            bool // false when MaxStates cut the search
	Depth               int  // the longest of the shortest runs
	Violations          []*Violation
	// Reached counts the states in which each named position was
	// reached, so the tests can tell the runs they rely on are there.
	Reached   map[string]int
	Promoted  int // states in which the runtime was promoted
	TakenOver int // states in which a takeover renamed the stage to its own name
}

// found reports a violation of an invariant in the step being checked.
type found func(inv, format string, args ...any)

// Explore searches every state reachable from the start, breadth first,
// and checks the invariants in every state and step.
func (m *Model) Explore() *Result {
	res := &Result{Complete: true, Reached: map[string]int{}}
	index := map[State]int32{}
	var states []State
	var parent []int32
	var label []Label
	var depth []int
	seen := map[string]bool{}
	add := func(n State, p int32, l Label) {
		res.Transitions++
		if _, ok := index[n]; ok {
			return
		}
		if m.MaxStates > 0 && len(states) >= m.MaxStates {
			res.Complete = false
			return
		}
		index[n] = int32(len(states))
		states, parent, label = append(states, n), append(parent, p), append(label, l)
		dd := 0
		if p >= 0 {
			dd = depth[p] + 1
		}
		depth = append(depth, dd)
		res.Depth = max(res.Depth, dd)
		m.count(res, &n)
	}
	report := func(i int32, l Label) found {
		return func(inv, format string, args ...any) {
			if seen[inv] {
				return
			}
			seen[inv] = true
			var ls []Label
			for j := i; parent[j] >= 0; j = parent[j] {
				ls = append(ls, label[j])
			}
			for a, b := 0, len(ls)-1; a < b; a, b = a+1, b-1 {
				ls[a], ls[b] = ls[b], ls[a]
			}
			ls = append(ls, l)
			res.Violations = append(res.Violations, &Violation{inv, fmt.Sprintf(format, args...), m.replay(ls)})
		}
	}
	add(m.start(), -1, Label{})
	for i := 0; i < len(states) && !m.stopped(seen); i++ {
		s := states[i]
		m.moves(&s, func(n State, l Label) {
			m.check(&s, &n, l, report(int32(i), l))
			add(n, int32(i), l)
		})
	}
	res.States = len(states)
	return res
}

// stopped reports whether every violation Config.StopAfter seeks was found.
func (m *Model) stopped(seen map[string]bool) bool {
	if len(m.StopAfter) == 0 {
		return false
	}
	for _, inv := range m.StopAfter {
		if !seen[inv] {
			return false
		}
	}
	return true
}

// moves calls f with every state one move from s.
func (m *Model) moves(s *State, f func(State, Label)) {
	for a := range nActors {
		for ch := range 2 {
			n := *s
			if m.act(&n, a, ch, nil) {
				n.canon()
				f(n, Label{Actor: int8(a), Choice: uint8(ch)})
			}
		}
	}
	if s.Crashes < m.Crashes {
		for a := range nActors {
			n := *s
			if n.crash(a) {
				n.Crashes++
				n.canon()
				f(n, Label{Actor: -1, Arg: int8(a)})
			}
		}
	}
	if s.Stalls < m.Stalls {
		n := *s
		n.Stalls++
		n.Old, n.Idle = true, true
		if n.Holder != none {
			n.Expired = true
		}
		for i := range n.P {
			n.P[i].Fenced = n.P[i].Fenced && n.Holder != int8(i)
		}
		n.G.Fresh = n.G.Fresh && n.Holder != gcActor
		f(n, Label{Actor: -1, Arg: -1})
	}
}

// act runs actor a's step; with a desc, it describes it too.
func (m *Model) act(s *State, a, choice int, d *desc) bool {
	if a == gcActor {
		return choice == 0 && m.gcStep(s, d)
	}
	return m.pushStep(s, a, choice, d)
}

// canon forgets what no later step reads: the variables of a command that
// ended or was killed, gc's once it is done.
func (s *State) canon() {
	for i := range s.P {
		c := &s.P[i]
		if c.Pos == PDone || c.Crashed {
			*c = Push{Pos: c.Pos, Crashed: c.Crashed, Sum: none, From: none}
		}
	}
	if s.G.Pos == GDone || s.G.Crashed {
		s.G.Looked, s.G.Fresh = none, false
	}
}

// crash kills actor a's host command where it is: it never runs again,
// and what it made stays.
func (s *State) crash(a int) bool {
	if a == gcActor {
		if s.G.Crashed || s.G.Pos == GDone {
			return false
		}
		s.G.Crashed = true
		return true
	}
	c := &s.P[a]
	if c.Crashed || c.Pos == PDone {
		return false
	}
	c.Crashed = true
	return true
}

// check checks the invariants in state n, reached from s by l.
func (m *Model) check(s, n *State, l Label, bad found) {
	owners := 0
	for i := range n.P {
		if n.P[i].Owns && !n.P[i].Crashed {
			owners++
		}
	}
	if owners > 1 {
		bad(OneOwner, "%d pushes past their claim at once", owners)
	}
	if n.marks() > 1 {
		bad(OneMark, "the stage holds %d marks", n.marks())
	}
	if l.Actor < 0 || int(l.Actor) == gcActor {
		return
	}
	p := int(l.Actor)
	was, is := s.P[p].Pos, n.P[p].Pos
	if is == PYielded && was != PYielded {
		g := &n.Stage
		// Its one mark is resume, or a claimed-<t> of another push that
		// found the key not its own and has not put the mark back yet (or
		// was killed before it did), which p's own late E claims again
		// (h_claim's loop). A stage gc took is gc's (the stale rule).
		mark := g.marks() == 1 && (g.Resume || g.Claimed.without(p) != 0)
		if g.Name < maxPushes && (g.Name != int8(p) || !mark || !g.Cut || g.Archive == none) {
			bad(Resumable, "the stage %s gave back is not one h_resume takes", tok(p))
		}
	}
	entered := (is == PEnterKey && was == PEnter) || (was == PResumeTake && is == PResumeTaken)
	if entered && (s.Damaged || s.Name == nameTrash) {
		bad(SweptIsGone, "%s reached a stage gc is removing", tok(p))
	}
	if n.Promoted > s.Promoted {
		c := &n.P[p]
		if n.Promoted > 1 {
			bad(OnceOnly, "runtimes/<id> renamed into place %d times", n.Promoted)
		}
		if c.Sum != c.From || c.From == none || n.Writers[c.From].without(p) != 0 {
			bad(OwnBytes, "%s promoted the tree of file %s (digest of file %s), which %s's upload writes",
				tok(p), tok(int(c.From)), tok(int(c.Sum)), n.Writers[c.From])
		}
		if s.Damaged && c.Fenced && !s.Late {
			bad(WholeTree, "%s promoted the tree of a stage gc began removing, both leases unexpired", tok(p))
		}
	}
}

// promote records that push p renamed its tree into place.
func (m *Model) promote(s *State, p int, d *desc) {
	s.Promoted++
	if d != nil {
		d.fx += fmt.Sprintf(": PROMOTED (tree of file %s)", tok(int(s.P[p].From)))
	}
}

// count records what state n reached, for Result.
func (m *Model) count(res *Result, n *State) {
	for i := range n.P {
		res.Reached[n.P[i].Pos.String()]++
	}
	res.Reached[n.G.Pos.String()]++
	if n.Promoted > 0 {
		res.Promoted++
	}
	if n.Name > 0 && n.Name < maxPushes {
		res.TakenOver++
	}
}
