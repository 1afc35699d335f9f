package model

import (
	"fmt"
	"strings"
)

// The invariants, as violations name them.
const (
	TwoHolders   = "never two holders unless one's lease expired"
	NonOwner     = "never a lock removed by a non-owner"
	DebrisBlocks = "no debris blocks progress"
	StaleFence   = "never a fence passed that did not see its lease unexpired"
	// OneLockPerToken: a token is published at L at most once, so that a
	// judgement of its lock is of that lock only.
	OneLockPerToken = "never a token published twice"
)

// Violation is a state or a step that breaks an invariant, with a shortest
// run that reaches it (the search is breadth first).
type Violation struct {
	Invariant string
	What      string
	Trace     Trace
	Fresh     []string // for DebrisBlocks: the fresh client's run alone
}

func (v *Violation) String() string {
	s := fmt.Sprintf("%s: %s\n%s", v.Invariant, v.What, v.Trace)
	if len(v.Fresh) > 0 {
		s += "\n  a fresh client alone:\n      " + strings.Join(v.Fresh, "\n      ")
	}
	return s
}

// Result is what a search found.
type Result struct {
	States, Transitions int
	Complete            bool // false when MaxStates cut the search
	Depth               int  // the longest of the shortest runs explored
	// CompleteDepth is, when MaxStates cut the search, how many moves from
	// a start every state is explored to (breadth first); else Depth.
	CompleteDepth int
	Violations    []*Violation
	// AgeRule maps the positions of the stopped clients (where) to the
	// states in which a fresh client had to wait for the ownerless rule.
	AgeRule map[string]*AgeCase
	// NeedsTime maps them to the states in which a fresh client does not
	// acquire unless time passes (a lease or L's age runs out): the
	// exceptions to progress without waiting (see checkProgress).
	NeedsTime     map[string]*AgeCase
	MaxFreshSteps int // the most steps a fresh client took to acquire
	// Spent counts the steps in which an acquire found its attempt spent
	// (h_create's look after its rename), by what had become of it: it
	// was published and taken, or it landed in a lock that was cleared
	// before the look (which the look cannot tell apart). Retried counts
	// the acquires that took the lock with a spare token after one, and
	// GaveUp those that found their last token spent too.
	SpentPublished, SpentLanded, Retried, GaveUp int
}

type search struct {
	m      *Model
	res    *Result
	index  map[key]int32
	states []key
	parent []int32
	label  []Label
	depth  []uint16
	starts map[int32]Start
	seen   map[string]bool // invariants already reported
}

// Explore searches every state reachable from the configured starts and
// checks the invariants in each.
func (m *Model) Explore() *Result {
	size := m.MaxStates
	if size == 0 {
		size = 1 << 18
	}
	x := &search{m: m, res: &Result{Complete: true, AgeRule: map[string]*AgeCase{}, NeedsTime: map[string]*AgeCase{}},
		index: make(map[key]int32, size), starts: map[int32]Start{}, seen: map[string]bool{},
		states: make([]key, 0, size), parent: make([]int32, 0, size), label: make([]Label, 0, size), depth: make([]uint16, 0, size)}
	for _, st := range m.Starts {
		x.starts[int32(len(x.states))] = st
		x.add(m.initial(st), -1, Label{})
	}
	for i := 0; i < len(x.states) && !x.stopped(); i++ {
		s := unpack(x.states[i])
		for c := range len(m.Programs) {
			for ch := range m.choices(s.C[c].Pos) {
				n := s
				if !m.step(&n, c, ch, nil) {
					continue
				}
				l := Label{Actor: int8(c), Choice: uint8(ch)}
				x.checkStep(i, &s, &n, c, l)
				m.settle(&s, &n)
				x.add(n, int32(i), l)
			}
		}
		m.envMoves(&s, func(n State, l Label) {
			m.canon(&n)
			x.add(n, int32(i), l)
		})
	}
	x.res.States = len(x.states)
	if x.res.Complete {
		x.res.CompleteDepth = x.res.Depth
	}
	return x.res
}

func (x *search) stopped() bool { return x.m.StopAtFirst && len(x.res.Violations) > 0 }

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
	if w := twoHolders(&n); w != "" {
		x.violate(TwoHolders, w, int(i), nil, nil)
	}
	x.checkProgress(int(i), &n)
}

// twoHolders is invariant 1: of the clients that believe they hold the lock
// (in their critical section, a fence passed or not), at most one holds a
// token whose lease has not run out.
func twoHolders(s *State) string {
	var live [maxClients]bool
	n := 0
	for c, cl := range s.C {
		if !cl.Crashed && holding(cl.Pos) && !s.Expired.has(s.me(c)) {
			live[c] = true
			n++
		}
	}
	if n < 2 {
		return ""
	}
	var w []string
	for c := range live {
		if live[c] {
			w = append(w, fmt.Sprintf("%c (%s)", 'A'+c, tokName(s.me(c))))
		}
	}
	return strings.Join(w, " and ") + " hold the lock, no lease expired"
}

// checkStep is invariant 2 on client c's step from s to n: every record it
// moved or removed from L is its own, moved by its release, or one it
// judged stealable (or was told to break) with a judgement that was true
// when made (an exited one: its creator had crashed then). A fence's
// mutation needs the lock or an expired lease.
func (x *search) checkStep(i int, s, n *State, c int, l Label) {
	cl, me := s.C[c], s.me(c)
	gone := s.recs() &^ n.recs()
	for gone != 0 {
		t := gone.lowest()
		gone &^= bit(t)
		casAt := cl.Pos == PStealCAS || cl.Pos == PBreakCAS
		var ok bool
		switch {
		case bit(t) == ownerBit:
			ok = casAt && cl.Kind == Legacy && cl.Why != None
		case t == me:
			ok = cl.Pos == PHold || cl.Pos == PReleaseCAS || cl.Pos == PReleaseWhole
		default:
			ok = casAt && cl.Kind == Held && cl.Judged == t && (cl.Why == Forced || cl.Why != None && !cl.Gone && (cl.Why != Exited || cl.Dead))
		}
		if !ok && !x.seen[NonOwner] {
			what := "the record of " + tokName(t)
			switch {
			case bit(t) == ownerBit:
				what = "the earlier version's owner record"
			case cl.Judged == t && cl.Gone:
				what += ", a new lock of that token: the one it judged " + cl.Why.String() + " had left L meanwhile"
			case cl.Judged == t && cl.Why == Exited && !cl.Dead:
				what += ", judged exited while its creator ran"
			}
			x.violate(NonOwner, fmt.Sprintf("client %c (%s) at %s removed %s", 'A'+c, tokName(me), cl.where(), what), i, &l, nil)
		}
	}
	if cl.Pos == PCreateRename && !cl.Into && cl.Publ && n.Lock && n.Rec.has(me) && !(s.Lock && s.Rec.has(me)) {
		x.violate(OneLockPerToken, fmt.Sprintf("client %c published %s again, after its first lock of that token had gone", 'A'+c, tokName(me)), i, &l, nil)
	}
	x.countSpent(s, n, c)
	if cl.Pos == PFenceChecked && !cl.Fresh {
		x.violate(StaleFence, fmt.Sprintf("client %c passed its fence on %s without a look that saw its record with its lease unexpired", 'A'+c, tokName(me)), i, &l, nil)
	}
	if cl.Pos == PFenceChecked && !(s.Lock && s.Rec.has(me)) && !s.Expired.has(me) {
		x.violate(TwoHolders, fmt.Sprintf("client %c mutated the store after its lock %s was taken, its lease unexpired", 'A'+c, tokName(me)), i, &l, nil)
	}
}

// countSpent counts client c's step from s to n in Result's SpentPublished,
// SpentLanded, Retried and GaveUp.
func (x *search) countSpent(s, n *State, c int) {
	cl, me := s.C[c], s.me(c)
	switch {
	case cl.Pos == PCreateCheck && cl.Try > 0 && n.C[c].Pos == PHold:
		x.res.Retried++
	case cl.Pos != PCreateInside || !x.m.fixed() || s.Stage.has(me) || s.Lock && s.Landed.has(me):
		return
	case cl.Publ:
		x.res.SpentPublished++
	default:
		x.res.SpentLanded++
	}
	if cl.Pos == PCreateInside && n.C[c].Pc != cl.Pc {
		x.res.GaveUp++
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
	for j := int32(i); x.parent[j] >= 0; j = x.parent[j] {
		ls = append(ls, x.label[j])
	}
	root := int32(i)
	for x.parent[root] >= 0 {
		root = x.parent[root]
	}
	for a, b := 0, len(ls)-1; a < b; a, b = a+1, b-1 {
		ls[a], ls[b] = ls[b], ls[a]
	}
	if l != nil {
		ls = append(ls, *l)
	}
	return x.m.replay(x.starts[root], ls)
}
