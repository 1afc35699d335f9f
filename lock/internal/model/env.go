package model

// The environment's moves: between any two steps of any client, a client may
// crash (its host process is gone: the exited rule finds it), time may pass
// (a lease or L's age runs out: the owner, its heartbeat, or a stealer,
// stalled past the bound), or the host may reboot.

// EnvMove is one kind of move of the environment.
type EnvMove uint8

const (
	Crash     EnvMove = iota // Arg: the client; it stops for ever, its files stay
	Expire                   // Arg: the token whose record is now older than the stale bound
	AgeLock                  // L's mtime is now older than the stale bound
	RebootAll                // every client stops; every record is a previous boot's
)

// envMoves calls f with every move of the environment from s.
func (m *Model) envMoves(s *State, f func(n State, l Label)) {
	for c := range len(m.Programs) {
		if cl := s.C[c]; m.CrashMoves && !cl.Crashed && cl.Pos != PDone {
			n := *s
			n.C[c].Crashed = true
			f(n, Label{Actor: -1, Move: Crash, Arg: int8(c)})
		}
	}
	if !m.LazyTime {
		(s.withRecord() &^ s.Expired).each(func(t Tok) {
			n := *s
			n.Expired |= bit(t)
			f(n, Label{Actor: -1, Move: Expire, Arg: int8(t)})
		})
	}
	if s.Lock && !s.LockOld && !m.LazyTime {
		n := *s
		n.LockOld = true
		f(n, Label{Actor: -1, Move: AgeLock})
	}
	if int(s.Gen) < m.Reboots {
		n := *s
		n.PrevBoot |= n.withRecord()
		if k, _ := m.sample(&n.FS); k == Ownerless && !n.Initial {
			n.Rebooted = true // the clients that left it so crashed at the reboot
		}
		// What the stopped clients left beside L (their prepared
		// directories and moved-out records) is never read again: no step
		// names another's, and the new clients have new tokens.
		n.Stage, n.StageRec, n.Moved = 0, 0, 0
		n.Gen++
		for c := range len(m.Programs) {
			n.C[c] = Client{Pos: m.firstPos(c, 0), Judged: noTok}
		}
		f(n, Label{Actor: -1, Move: RebootAll})
	}
}

// settle ends a client's step from s to n: a judgement whose lock left L
// in it is marked Gone (a lock of the same name later would be another,
// which the fragments never make: see OneLockPerToken), then canon.
func (m *Model) settle(s, n *State) {
	if gone := s.Rec &^ n.Rec; gone != 0 {
		for c := range n.C {
			if cl := &n.C[c]; gone.has(cl.Judged) {
				cl.Gone = true
			}
		}
	}
	m.canon(n)
}

// canon forgets what no later step can read, so that states that differ
// only there are one state: the variables of clients that have stopped, the
// judgement of a client that is not about to act on it, the age and boot
// evidence of tokens that have no record left and no client that holds them.
func (m *Model) canon(s *State) {
	keep := s.withRecord()
	for c := range s.C {
		cl := &s.C[c]
		if cl.Crashed || cl.Pos == PDone {
			// Its token (Try too) names the records it left.
			*cl = Client{Pc: cl.Pc, Pos: cl.Pos, Crashed: cl.Crashed, Ret: cl.Ret, Try: cl.Try, Judged: noTok}
			if cl.Pos < PClearJudged || cl.Pos > PClearRmLock {
				cl.Ret = 0
			}
			continue
		}
		if holding(cl.Pos) {
			keep |= bit(s.me(c))
		}
		if cl.Pos != PStealCAS && cl.Pos != PBreakCAS {
			cl.Kind, cl.Judged, cl.Why, cl.Gone, cl.Dead = 0, noTok, None, false, false
		}
		if cl.Pos != PClearRmTok {
			cl.Glob = 0
		}
		if cl.Pos < PClearJudged || cl.Pos > PClearRmLock {
			cl.Ret = 0
		}
		if m.program(c)[cl.Pc] == Break {
			cl.OL = false
		}
	}
	s.Expired &= keep
	s.PrevBoot &= s.withRecord()
}
