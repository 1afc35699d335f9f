package model

// The dispatcher of the clients' steps.

// choices is how many different steps a client at p may take: a holder
// fences or releases; a break judges by the rules or is forced. With
// LazyTime a sample may also first let the lock it looks at grow old.
func (m *Model) choices(p Pos) int {
	n := 1
	if p == PHold || p == PBreakSample {
		n = 2
	}
	if m.LazyTime && (p == PSample || p == PBreakSample) {
		n++
	}
	return n
}

// ageFirst is LazyTime's move of the environment, made just before the
// sample that looks: the lock L holds grows older than the stale bound (its
// token's record, or L itself for an earlier version's or an ownerless
// lock). It reports false when that changes nothing.
func (m *Model) ageFirst(s *State) bool {
	switch k, t := m.sample(&s.FS); k {
	case Held:
		if s.Expired.has(t) || s.PrevBoot.has(t) {
			return false
		}
		s.Expired |= bit(t)
	case Legacy, Ownerless:
		if s.LockOld {
			return false
		}
		s.LockOld = true
	default:
		return false
	}
	return true
}

// step runs client c's next step (the choice-th where it has several) and
// reports whether there was one. d, when not nil, is told what it did.
func (m *Model) step(s *State, c, choice int, d *desc) bool {
	cl := &s.C[c]
	if cl.Crashed || cl.Pos == PDone || choice >= m.choices(cl.Pos) {
		return false
	}
	if m.LazyTime && choice == m.choices(cl.Pos)-1 && (cl.Pos == PSample || cl.Pos == PBreakSample) {
		if !m.ageFirst(s) {
			return false
		}
		if d != nil {
			defer func() { d.fx = "time passes, then " + d.fx }()
		}
		choice = 0
	}
	switch p := cl.Pos; {
	case p == PSample:
		m.acquireSample(s, c, d)
	case p <= PStealMoved:
		m.steal(s, c, d)
	case p <= PCreateCleanup:
		m.create(s, c, d)
	case p <= PReleaseWhole:
		m.hold(s, c, choice, d)
	case p <= PClearRmLock:
		m.clear(s, c, d)
	default:
		m.breakLock(s, c, choice, d)
	}
	return true
}
