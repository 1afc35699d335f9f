package rolloutmodel

// The steps of the rollout's client (the coordinator, on the workstation)
// and of hoist rollout resume. Each send is one control line to one
// host's command on its standard input; each wait reads the verdicts the
// host commands said. Either may crash after any step (Crash, an
// environment move), and its host commands see EOF.

// reply is what the coordinator has from host h's participant: its last
// verdict, or AGone when the connection or the host command is gone.
func (m *Model) reply(s *State, h int) Ack {
	if s.P[h].Dead || s.Cut&(1<<h) != 0 {
		return AGone
	}
	return s.P[h].Out
}

// pending reports whether host h's participant still owes the coordinator
// a verdict: it last said was, and has not ended.
func (m *Model) pending(s *State, h int, was Ack) bool {
	return m.reply(s, h) == was && !s.P[h].ended()
}

// send writes a control line to host h's participant, if it is there to
// read it.
func (m *Model) send(s *State, h int, msg Msg) {
	p := &s.P[h]
	if m.reply(s, h) == AGone || p.ended() {
		return
	}
	if p.In != MNone {
		if m.Variant == Design {
			panic("rolloutmodel: the coordinator sends " + msg.String() + " over " + p.In.String())
		}
		return
	}
	p.In = msg
}

// coordStep runs the coordinator's next step, and reports whether it had
// one (a wait has none until every verdict it waits for is in).
func (m *Model) coordStep(s *State, d *desc) bool {
	c := &s.C
	if c.ended() {
		return false
	}
	at, n := c.Pos, m.Hosts
	switch at {
	case CStage:
		for h := range n {
			s.P[h].Pos = PAcquire
		}
		c.Pos = CPrepare
		if m.Mode == Single {
			c.Pos = CFinish
			d.say(at, "the client starts the host command (it dials the probes)")
			return true
		}
		d.say(at, "every host has the runtime staged; its host command starts and takes the lock")
	case CPrepare:
		done, all := m.gathered(s, 0, ANone, APrepared)
		switch {
		case !done:
			return false
		case all:
			c.Pos, c.I = CSwitch, 0
			d.say(at, "every host is PREPARED")
		default:
			c.Pos = CAbort
			d.say(at, "a host is not prepared: the rollout aborts")
		}
	case CSwitch:
		d.say(at, "sends switch to host %d", c.I)
		m.sendNext(s, MSwitch, CCheck, 0)
	case CCheck:
		done, all := m.gathered(s, 0, APrepared, AHealthy)
		switch {
		case !done:
			return false
		case !all:
			c.Pos = CAbort
			d.say(at, "a host is not HEALTHY: the rollout aborts")
		case m.Variant == CommitWithoutVotes:
			c.Pos = CDecide
			d.say(at, "every host is HEALTHY")
		default:
			c.Pos, c.I = CVote, 1
			d.say(at, "every host is HEALTHY")
		}
	case CVote:
		d.say(at, "asks host %d to vote", c.I)
		m.sendNext(s, MGo, CVoted, 0)
	case CVoted:
		done, all := m.gathered(s, 1, AHealthy, AReady)
		switch {
		case !done:
			return false
		case !all:
			c.Pos = CAbort
			d.say(at, "a host did not vote ready: the rollout aborts")
		case m.Variant == OutcomeBeforeDecision:
			c.Pos, c.I = CCommit, 1
			d.say(at, "every host voted ready")
		default:
			c.Pos = CDecide
			d.say(at, "every host voted ready")
		}
	case CDecide:
		m.send(s, 0, MGo)
		c.Pos = CDecided
		d.say(at, "asks the decider, host 0, to decide commit")
	case CDecided, CAborted:
		p := &s.P[0]
		switch {
		case p.Told == WYes && at == CDecided && m.Variant == OutcomeBeforeDecision:
			c.Pos = CFinish
		case p.Told == WYes:
			c.Pos, c.I = CCommit, 1
		case p.Told == WNo:
			c.Pos, c.I = CRevert, 1
		case at == CDecided && (m.reply(s, 0) == AGone || p.ended()):
			c.Pos = CEnd
			m.leave(s)
			d.say(at, "the decider is gone before it said its decision: the client stops, hosts that voted are in doubt")
			return true
		case at == CAborted && (m.reply(s, 0) == AGone || p.ended()):
			c.Pos, c.I, c.Veto = CRevert, 1, true
		default:
			return false
		}
		d.say(at, "the decision on host 0: %s", wordName(p.Told, false))
	case CCommit:
		d.say(at, "tells host %d the outcome commit", c.I)
		next := CFinish
		if m.Variant == OutcomeBeforeDecision && s.P[0].Told == WNone {
			next = CDecide
		}
		m.sendNext(s, MCommit, next, 0)
	case CAbort:
		if s.P[0].Told == WNone {
			m.send(s, 0, MSettle)
		}
		c.Pos = CAborted
		d.say(at, "asks the decider to settle: it aborts unless it decided")
	case CRevert:
		msg := MAbort
		if c.Veto {
			msg = MSettle
		}
		d.say(at, "sends %s to host %d", msg, c.I)
		m.sendNext(s, msg, CFinish, 0)
	case CFinish:
		if !m.all(s, 0, func(h int) bool { return m.reply(s, h) == AGone || s.P[h].ended() }) {
			return false
		}
		c.Pos = CEnd
		m.leave(s)
		d.say(at, "every host command has ended")
	default:
		return false
	}
	return true
}

// gathered reports whether every host from first on has answered past
// was (or is gone), and whether every answer is want.
func (m *Model) gathered(s *State, first int, was, want Ack) (done, all bool) {
	done, all = true, true
	for h := first; h < m.Hosts; h++ {
		done = done && !m.pending(s, h, was)
		all = all && m.reply(s, h) == want
	}
	return done, all
}

// sendNext sends msg to the host the coordinator's round is at, and moves
// to the next host; after the last, to next, at host i.
func (m *Model) sendNext(s *State, msg Msg, next CPos, i uint8) {
	c := &s.C
	m.send(s, int(c.I), msg)
	c.I++
	if int(c.I) == m.Hosts {
		c.Pos, c.I, c.Veto = next, i, false
	}
}

// all reports whether f holds for every host from the first on.
func (m *Model) all(s *State, first int, f func(h int) bool) bool {
	for h := first; h < m.Hosts; h++ {
		if !f(h) {
			return false
		}
	}
	return true
}

// leave is the coordinator's exit: every participant still running sees
// EOF on its standard input.
func (m *Model) leave(s *State) {
	for h := range m.Hosts {
		if p := &s.P[h]; p.Pos != PIdle && !p.ended() {
			p.Lost = true
		}
	}
}

// resumeStep runs the resumer's next step: it takes every host's lock
// through a host command of its own, has the decider settle (decide abort
// unless decided, or leave a tombstone where it has no record), then
// tells every other host the decision; with the decider gone, it asks them
// to settle by the local rule.
func (m *Model) resumeStep(s *State, d *desc) bool {
	r := &s.R
	if r.ended() {
		return false
	}
	at, n := r.Pos, m.Hosts
	q0 := &s.Q[0]
	switch at {
	case RStart:
		if !s.C.ended() && !m.ResumeAnytime {
			return false
		}
		for h := range n {
			s.Q[h].Pos = PAcquire
		}
		r.Pos = RDecide
		d.say(at, "hoist rollout resume starts a host command on every host")
	case RDecide:
		if !q0.Dead && !q0.ended() {
			q0.In = MSettle
		}
		r.Pos = RDecided
		d.say(at, "asks the decider to settle")
	case RDecided:
		if q0.Told == WNone && !q0.Dead && !q0.ended() {
			return false
		}
		r.Pos, r.I, r.Veto = ROutcome, 1, q0.Told == WNone
		d.say(at, "the decision on host 0: %s", wordName(q0.Told, false))
	case ROutcome:
		msg := MSettle
		switch {
		case r.Veto:
		case q0.Told == WYes:
			msg = MCommit
		default:
			msg = MAbort
		}
		if q := &s.Q[r.I]; !q.ended() {
			q.In = msg
		}
		d.say(at, "sends %s to host %d", msg, r.I)
		r.I++
		if int(r.I) == n {
			r.Pos, r.I, r.Veto = RFinish, 0, false
		}
	case RFinish:
		for h := range n {
			if !s.Q[h].ended() {
				return false
			}
		}
		r.Pos = REnd
		m.resumerLeaves(s)
		d.say(at, "every host command has ended")
	default:
		return false
	}
	return true
}

// resumerLeaves is the resumer's exit or crash: its host commands see EOF.
func (m *Model) resumerLeaves(s *State) {
	for h := range m.Hosts {
		if q := &s.Q[h]; q.Pos != PIdle && !q.ended() {
			q.Lost = true
		}
	}
}
