package rolloutmodel

// The environment's moves, between any two steps of anyone: the
// coordinator or the resumer crashes (once each: its host commands see
// EOF), and, within Config.Faults, a connection is cut, a host command is
// killed (its host shell; the exited rule frees its lock at once), or a
// host reboots (every host command on it dies; the service starts again on
// what current names). Time passing is no move of its own: an acquire that
// finds a live holder may first let its lease run out (acquire, choice 1),
// which is when an expiry can matter.

// Move is one kind of environment move.
type Move uint8

const (
	MvCrashC Move = iota // the coordinator (the workstation's hoist) dies
	MvCrashR             // the resumer dies
	MvCut                // the coordinator's connection to a host is cut
	MvKill               // a host command's host shell is killed
	MvReboot             // a host reboots
)

// Label is one move: an actor's step (Actor >= 0, Choice), or the
// environment's (Actor -1, Move, Host, Kind).
type Label struct {
	Actor  int8
	Choice uint8
	Move   Move
	Host   int8
	Kind   Kind
}

// Actors: 0 the coordinator, 1 the resumer, then P0.., Q0.., K.
const (
	actC = 0
	actR = 1
)

func actP(h int) int { return 2 + h }
func actQ(h int) int { return 2 + maxHosts + h }

const actK = 2 + 2*maxHosts
const nActors = actK + 1

func (m *Model) envMoves(s *State, f func(n State, l Label)) {
	if !s.C.ended() {
		n := *s
		n.C.Crashed = true
		m.leave(&n)
		f(n, Label{Actor: -1, Move: MvCrashC})
	}
	if m.Resumer && s.R.Pos != RStart && !s.R.ended() {
		n := *s
		n.R.Crashed = true
		m.resumerLeaves(&n)
		f(n, Label{Actor: -1, Move: MvCrashR})
	}
	if int(s.Faults) >= m.Faults {
		return
	}
	for h := range m.Hosts {
		if p := &s.P[h]; m.Mode == Atomic && !s.C.ended() && p.Pos != PIdle && !p.ended() && s.Cut&(1<<h) == 0 {
			n := *s
			n.Cut |= 1 << h
			n.P[h].Lost = true
			n.Faults++
			f(n, Label{Actor: -1, Move: MvCut, Host: int8(h)})
		}
		var live []Kind
		for _, k := range [3]Kind{KPart, KRes, KOther} {
			if c := s.cmd(k, h); (k != KOther || m.OtherOn-1 == h) && c.Pos != PIdle && !c.ended() {
				live = append(live, k)
				n := *s
				n.cmd(k, h).Dead = true
				n.Faults++
				f(n, Label{Actor: -1, Move: MvKill, Host: int8(h), Kind: k})
			}
		}
		if len(live) > 0 {
			n := *s
			for _, k := range live {
				n.cmd(k, h).Dead = true
			}
			n.H[h].Serving = n.H[h].Cur
			n.Faults++
			f(n, Label{Actor: -1, Move: MvReboot, Host: int8(h)})
		}
	}
}

// canon forgets what no later step reads, so that states that differ only
// there are one: the control lines and variables of host commands that
// ended, the verdicts of those whose client ended, a lock whose holder's
// host process is gone (the exited rule frees it at once), the rounds of
// a client that ended.
func (m *Model) canon(s *State) {
	for _, kh := range m.kh {
		c := s.cmd(kh.k, kh.h)
		client := &s.C
		if kh.k == KRes {
			client = &s.R
		}
		if c.ended() {
			*c = Cmd{Pos: PEnd, Dead: c.Dead, Out: c.Out, Told: c.Told, Lost: kh.k == KOther}
		}
		if kh.k == KOther || client.ended() {
			c.Out, c.Told = ANone, WNone
		}
		if c.Pos != PRevert && c.Pos != PRestore && c.Pos != PFinish {
			c.Side = From
		}
	}
	for h := range m.Hosts {
		H := &s.H[h]
		if H.Holder != KNone && s.cmd(H.Holder, h).Dead {
			H.Holder = KNone
		}
		if H.Holder == KNone {
			H.Exp = false
		}
	}
	for _, c := range [2]*Coord{&s.C, &s.R} {
		if c.ended() {
			c.I, c.Veto = 0, false
		}
	}
	if s.C.ended() {
		s.Cut = 0
	}
}

// kindHost names one host command.
type kindHost struct {
	k Kind
	h int
}

// cmds lists the host commands of the model: every host's participant and
// resumer's command, and the other command if there is one.
func (m *Model) cmds() []kindHost {
	var l []kindHost
	for h := range m.Hosts {
		l = append(l, kindHost{KPart, h}, kindHost{KRes, h})
	}
	if m.OtherOn > 0 {
		l = append(l, kindHost{KOther, m.OtherOn - 1})
	}
	return l
}
