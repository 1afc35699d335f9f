package model

// The dispatcher of the clients' steps.

// choices is how many different steps a client at p may take: a holder
// fences, releases or beats; a break judges by the rules or is forced. A
// sample may also first let the environment make a move only it sees (see
// first).
func (m *Model) choices(p Pos) int {
	switch p {
	case PHold:
		return 3
	case PSample:
		return 1 + m.firsts()
	case PBreakSample:
		return 2 + m.firsts()
	}
	return 1
}

// The moves of the environment that a sample may make first, lazily: the
// moves that matter to the others only through a judgement.
const (
	firstAge   = iota + 1 // LazyTime: the lock sampled grows older than its lease
	firstCrash            // without CrashMoves: the creator of the lock sampled crashes
)

// firsts is how many of them the model has.
func (m *Model) firsts() int {
	n := 0
	if m.LazyTime {
		n++
	}
	if !m.CrashMoves {
		n++
	}
	return n
}

// first is the move of the environment that choice makes first at p, if any.
func (m *Model) first(p Pos, choice int) int {
	switch p {
	case PSample:
		choice--
	case PBreakSample:
		choice -= 2
	default:
		return 0
	}
	if choice < 0 {
		return 0
	}
	if !m.LazyTime {
		choice++
	}
	return firstAge + choice
}

// ageFirst is LazyTime's move of the environment, made just before the
// sample that looks: the lock L holds grows older than the stale bound (its
// token's record, or L itself for an earlier version's or an ownerless
// lock). It reports false when that changes nothing a judgement sees.
func (m *Model) ageFirst(s *State) bool {
	switch k, t := m.sample(&s.FS); k {
	case Held:
		if m.rule(s, k, t) != None {
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

// crashFirst is the move of the environment a crash is without CrashMoves,
// made just before the sample that sees it: the client that created the
// lock L holds crashes (its host process is gone, so the exited rule finds
// it), when no rule lets the lock be taken already. A client that is never
// scheduled again is every other effect of a crash. It reports the client,
// or false when there is none.
func (m *Model) crashFirst(s *State, c int) (int, bool) {
	k, t := m.sample(&s.FS)
	if k != Held || m.rule(s, k, t) != None || genOf(t) != s.Gen {
		return 0, false
	}
	h := creator(t)
	if h == c || s.C[h].Crashed || s.me(h) != t {
		return 0, false
	}
	s.C[h].Crashed = true
	return h, true
}

// step runs client c's next step (the choice-th where it has several) and
// reports whether there was one. d, when not nil, is told what it did.
func (m *Model) step(s *State, c, choice int, d *desc) bool {
	cl := &s.C[c]
	if cl.Crashed || cl.Pos == PDone || choice >= m.choices(cl.Pos) {
		return false
	}
	switch m.first(cl.Pos, choice) {
	case firstAge:
		if !m.ageFirst(s) {
			return false
		}
		if d != nil {
			defer func() { d.fx = "time passes, then " + d.fx }()
		}
		choice = 0
	case firstCrash:
		h, ok := m.crashFirst(s, c)
		if !ok {
			return false
		}
		if d != nil {
			defer func() { d.fx = "client " + string(rune('A'+h)) + " crashes, then " + d.fx }()
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
		return m.hold(s, c, choice, d)
	case p <= PClearRmLock:
		m.clear(s, c, d)
	default:
		m.breakLock(s, c, choice, d)
	}
	return true
}
