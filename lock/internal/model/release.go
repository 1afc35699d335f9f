package model

// The steps of holding (h_fence, lease.sh), h_release (release.sh), h_clear
// (sample.sh) and h_op_break (ops.sh).

// hold runs the critical section: a fence (h_owned, then the mutation it
// allows), the release, or a heartbeat (choice 2, see beat).
func (m *Model) hold(s *State, c, choice int, d *desc) bool {
	cl := &s.C[c]
	me := s.me(c)
	switch {
	case cl.Pos == PHold && choice == 2:
		return m.beat(s, c, d)
	case cl.Pos == PHold && choice == 0, cl.Pos == PFenceAged:
		// h_owned, two looks: h_fresh (the record's age: within its
		// lease by the holder's clock, or unknown when the record is
		// gone), then [ -f L/me/rec ]. A record never comes back, so a
		// fence that passes saw it with its lease unexpired.
		age := (cl.Pos == PHold) != (m.Variant == FenceLooksFirst)
		present := s.Lock && s.Rec.has(me)
		ok := present
		if age {
			ok = !present || !s.Expired.has(me)
			cl.Fresh = present && !s.Expired.has(me)
			d.op("fence.aged", ok, "h_fresh: L/$/rec is within its lease, or gone (its age unknown)", me, noTok)
		} else {
			d.op("fence", ok, "[ -f L/$/rec ]", me, noTok)
		}
		next := PFenceAged
		if cl.Pos == PFenceAged {
			next = PFenceChecked
		}
		cl.Pos = PReleaseCAS // LOST: the op ends with its release
		if ok {
			cl.Pos = next
		}
	case cl.Pos == PFenceChecked:
		d.op("fence.checked", true, "the store mutation h_fence allowed", me, noTok)
		cl.Pos, cl.Fresh = PHold, false
	case cl.Pos == PHold || cl.Pos == PReleaseCAS:
		if m.Variant == CheckThenRelease {
			ok := s.Lock && s.Rec.has(me)
			d.op("release.cas", ok, "[ -f L/$/rec ]", me, noTok)
			cl.Pos = PReleaseWhole
			if !ok {
				m.opDone(s, c)
			}
			return true
		}
		ok := s.moveRec(me, me)
		d.op("release.cas", ok, "mv L/$/rec L.released-$", me, noTok)
		if !ok {
			m.opDone(s, c) // LOST or NOTHELD: nothing is touched
			return true
		}
		enterClear(cl, RetRelease)
	case cl.Pos == PReleaseWhole:
		ok := s.moveWhole(me)
		d.op("release.moved", ok, "mv L L.released-$", me, noTok)
		cl.Pos = PReleaseRemove
	case cl.Pos == PReleaseRemove:
		ok := s.Moved.has(me)
		s.Moved &^= bit(me)
		d.op("release.rm", ok, "rm -rf L.released-$", me, noTok)
		m.opDone(s, c)
	}
	return true
}

// beat is one heartbeat of a holder (h_renew): touch -c L/me/rec, which
// never creates it, checked by the holder's clock. When the record is gone,
// or the lease had run out before the touch (the holder stalled: Expired
// has it, and a waiter may have judged the lock stale meanwhile), the
// renewal is disowned and the holder takes its lock as lost: it goes on as
// after a fence that said LOST, with its owner-checked release. Otherwise
// the lease is renewed, which changes nothing the model tells apart (its
// lease may run out again if it stalls, as before): beat reports false, no
// move. A beat during a fence's mutation acts once it is over, at hold,
// where what it found still holds (a record never comes back, and Expired
// stays set while its token is held). Expired is never cleared: a waiter's
// judgement made before the touch stays true. In variant HeartbeatRevives
// a renewal after the lease ran out is taken as one: the lease runs again.
func (m *Model) beat(s *State, c int, d *desc) bool {
	cl := &s.C[c]
	me := s.me(c)
	rec := s.Lock && s.Rec.has(me)
	switch {
	case !rec:
		d.op("beat", false, "touch -c L/$/rec, then [ -f L/$/rec ]", me, noTok)
		cl.Pos = PReleaseCAS
	case !s.Expired.has(me):
		return false
	case m.Variant == HeartbeatRevives:
		d.say("beat", "touch -c L/%s/rec after its lease ran out: renewed all the same", tokName(me))
		s.Expired &^= bit(me)
	default:
		d.say("beat", "touch -c L/%s/rec after its lease ran out: disowned, the lock is lost", tokName(me))
		cl.Pos = PReleaseCAS
	}
	return true
}

func enterClear(cl *Client, r Ret) { cl.Pos, cl.Ret = PClearJudged, r }

// clear runs h_clear: rm -f L/.owner-*, then rmdir L/* L, which expands L/*
// once and removes the words one by one, L last.
func (m *Model) clear(s *State, c int, d *desc) {
	cl := &s.C[c]
	me := s.me(c)
	switch cl.Pos {
	case PClearJudged:
		ok := s.removeOwnerTmp()
		if d != nil {
			d.op(cl.where(), ok, "rm -f L/.owner-*", me, noTok)
		}
		cl.Pos = PClearGlob
		if m.fixed() {
			cl.Pos = PClearLanded
		}
	case PClearLanded:
		ok := s.removeAllLanded()
		if d != nil {
			d.op(cl.where(), ok, "rm -rf L/L.new-*", me, noTok)
		}
		cl.Pos = PClearGlob
	case PClearGlob:
		cl.Glob = 0
		if s.Lock {
			cl.Glob = s.Dir
		}
		if d != nil {
			d.say(cl.where(), "rmdir expands L/* to %s", setString(cl.Glob, "L/"))
		}
		cl.Pos = PClearRmLock
		if cl.Glob != 0 {
			cl.Pos = PClearRmTok
		}
	case PClearRmTok:
		t := cl.Glob.lowest()
		ok := s.rmdirTok(t)
		if d != nil {
			d.op(cl.where(), ok, "rmdir L/@", me, t)
		}
		cl.Glob &^= bit(t)
		if cl.Glob == 0 {
			cl.Pos = PClearRmLock
		}
	case PClearRmLock:
		ok := s.rmdirLock()
		if d != nil {
			d.op(cl.where(), ok, "rmdir L", me, noTok)
		}
		switch cl.Ret {
		case RetCreate:
			cl.Pos = PCreateMkdir
		case RetStealAbsent:
			cl.Pos = PStealAbsent
		case RetBreakAbsent:
			cl.Pos = PBreakAbsent
		case RetRelease:
			cl.Pos = PReleaseRemove
		default:
			m.opDone(s, c)
		}
	}
}

// breakLock runs h_op_break: sample, judge by the rules (choice 0) or by
// the token given with --force (choice 1: the operator names the token the
// sample saw, "-" for an ownerless lock), then the steal's compare-and-swap,
// rm -f of the moved record, and h_clear.
func (m *Model) breakLock(s *State, c, choice int, d *desc) {
	cl := &s.C[c]
	me := s.me(c)
	switch cl.Pos {
	case PBreakSample:
		k, t := m.sample(&s.FS)
		why := m.rule(s, k, t)
		if choice == 1 && k != Free && k != Dead {
			why = Forced
		}
		if d != nil {
			d.say("break.sample", "L is %s%s", m.lockString(&s.FS), whyNote(why))
		}
		switch {
		case k == Free || k == Dead || why == None:
			m.opDone(s, c) // FREE or NOTSTALE
		case k == Ownerless:
			judge(s, cl, k, t, why)
			enterClear(cl, RetBreakAbsent)
		default:
			judge(s, cl, k, t, why)
			cl.Pos = PBreakCAS
		}
	case PBreakCAS:
		var ok bool
		if cl.Kind == Held {
			ok = s.moveRec(cl.Judged, me)
			d.op("break.judged", ok, "mv L/@/rec L.broken-$", me, cl.Judged)
			if ok && cl.Why == Forced {
				s.Expired |= bit(cl.Judged) // the operator ended its lease
			}
		} else {
			ok = s.moveOwner(me)
			d.op("break.judged", ok, "mv L/owner L.broken-$", me, noTok)
		}
		cl.Pos = PBreakRemove
		if !ok {
			m.opDone(s, c) // ERROR changed
		}
	case PBreakAbsent:
		d.op("break.absent", !s.Lock, "[ ! -e L ]", me, noTok)
		cl.Pos = PBreakRemove
		if s.Lock {
			m.opDone(s, c)
		}
	case PBreakRemove:
		ok := s.Moved.has(me)
		s.Moved &^= bit(me)
		d.op("break.rm", ok, "rm -f L.broken-$", me, noTok)
		enterClear(cl, RetDone)
	}
}

// opDone ends client c's op: the next op of its program starts, or it is done.
func (m *Model) opDone(s *State, c int) {
	cl := &s.C[c]
	*cl = Client{Pc: cl.Pc + 1, Judged: noTok}
	cl.Pos = m.firstPos(c, int(cl.Pc))
}
