package model

// The steps of h_acquire (wait.sh), h_judge, h_steal and h_cas (steal.sh)
// and h_create (create.sh).

// sample is h_sample: what the lock is now. It ignores an earlier version's
// .owner-<tok>, and counts a prepared directory that landed inside L as dead
// (the RetryAndUndo variant ignores it too).
func (m *Model) sample(f *FS) (Kind, Tok) {
	switch {
	case !f.Lock:
		return Free, noTok
	case f.Rec != 0:
		return Held, f.Rec.highest()
	case f.Owner:
		return Legacy, noTok
	case f.Dir != 0, f.Landed != 0 && m.fixed():
		return Dead, noTok
	}
	return Ownerless, noTok
}

// rule is h_stealable: the rule that lets anyone take the lock sampled, or
// None. The boot rule and the exited rule need a record of this protocol
// (the exited rule one of this boot, naming its holder's host process); an
// earlier version's lock and an ownerless one are judged by L's age only.
// In variant ExitedWhileRunning the exited rule finds every holder of this
// boot gone.
func (m *Model) rule(s *State, k Kind, t Tok) Why {
	switch k {
	case Held:
		switch {
		case s.PrevBoot.has(t):
			return Boot
		case s.exited(t), m.Variant == ExitedWhileRunning && genOf(t) == s.Gen:
			return Exited
		case s.Expired.has(t):
			return Stale
		}
	case Legacy, Ownerless:
		if s.LockOld {
			return Stale
		}
	}
	return None
}

// judge records what a sample judged: the lock, the rule, and whether the
// creator of the token judged had crashed then (what makes "exited" true).
func judge(s *State, cl *Client, k Kind, t Tok, why Why) {
	cl.Kind, cl.Judged, cl.Why, cl.Dead = k, t, why, k == Held && s.exited(t)
}

// lockString describes L for traces.
func (m *Model) lockString(f *FS) string {
	k, t := m.sample(f)
	switch k {
	case Free:
		return "absent"
	case Held:
		return "held by " + tokName(t)
	}
	return k.String()
}

// acquireSample is one turn of h_acquire's loop: h_sample, then create (free),
// clear and create (dead), or h_judge (held, legacy, and ownerless when the
// previous turn saw it ownerless too).
func (m *Model) acquireSample(s *State, c int, d *desc) {
	cl := &s.C[c]
	k, t := m.sample(&s.FS)
	why := m.rule(s, k, t)
	if d != nil {
		d.say("sample", "L is %s%s", m.lockString(&s.FS), whyNote(why))
	}
	ol := cl.OL
	cl.OL = k == Ownerless
	switch k {
	case Free:
		cl.Pos = PCreateMkdir
	case Dead:
		enterClear(cl, RetCreate)
	case Held, Legacy, Ownerless:
		if why == None || (k == Ownerless && !ol) {
			return // wait a poll and sample again
		}
		judge(s, cl, k, t, why)
		if k == Ownerless && m.Variant != WholeDirSteal {
			enterClear(cl, RetStealAbsent) // h_cas of an ownerless lock is h_clear
			return
		}
		cl.Pos = PStealCAS
	}
}

func whyNote(w Why) string {
	if w == None {
		return ""
	}
	return " (" + w.String() + ")"
}

// steal runs the steps of h_steal.
func (m *Model) steal(s *State, c int, d *desc) {
	cl := &s.C[c]
	me := s.me(c)
	switch cl.Pos {
	case PStealCAS:
		var ok bool
		switch {
		case m.Variant == WholeDirSteal:
			ok = s.moveWhole(me)
			d.op("steal.judged", ok, "mv L L.stolen-$", me, noTok)
		case cl.Kind == Held:
			ok = s.moveRec(cl.Judged, me)
			d.op("steal.judged", ok, "mv L/@/rec L.stolen-$", me, cl.Judged)
		default:
			ok = s.moveOwner(me)
			d.op("steal.judged", ok, "mv L/owner L.stolen-$", me, noTok)
		}
		cl.Pos = PSample
		if ok {
			cl.Pos = PStealMoved
		}
	case PStealAbsent:
		cl.Pos = PSample
		if !s.Lock {
			cl.Pos = PStealMoved
		}
		d.op("steal.absent", !s.Lock, "[ ! -e L ]", me, noTok)
	case PStealMoved:
		ok := s.Moved.has(me)
		s.Moved &^= bit(me)
		d.op("steal.moved", ok, "rm -f L.stolen-$", me, noTok)
		enterClear(cl, RetCreate)
	}
}

// create runs the steps of h_create. In variant OwnerlessBirth the lock is
// made as an earlier version made it: mkdir L, then the record inside it.
func (m *Model) create(s *State, c int, d *desc) {
	cl := &s.C[c]
	me := s.me(c)
	birth := m.Variant == OwnerlessBirth
	var ok bool
	next := PSample
	switch cl.Pos {
	case PCreateMkdir:
		if birth {
			ok = s.mkdirLock()
			d.op("create.mkdir", ok, "mkdir L", me, noTok)
		} else {
			ok = !s.Stage.has(me)
			s.Stage |= bit(me)
			d.op("create.mkdir", ok, "mkdir L.new-$ L.new-$/$", me, noTok)
		}
		if ok {
			next = PCreateWrite
		}
	case PCreateWrite:
		if birth {
			ok = s.writeInLock(me)
			d.op("create.write", ok, "mkdir L/$; write L/$/rec", me, noTok)
			if ok {
				next = PCreateCheck
			}
		} else {
			ok = s.Stage.has(me)
			s.StageRec |= s.Stage & bit(me)
			d.op("create.write", ok, "write L.new-$/$/rec", me, noTok)
			next = PCreatePrepared
		}
	case PCreatePrepared:
		ok = !s.Lock
		d.op("create.prepared", ok, "[ ! -e L ]", me, noTok)
		next = PCreateCleanup
		if ok {
			next = PCreatePublish
		}
	case PCreatePublish:
		cl.Into = s.Lock
		if cl.Into {
			d.op("create.publish", true, "mv L.new-$ L looks at L: a directory, so it moves into it", me, noTok)
		} else {
			d.op("create.publish", true, "mv L.new-$ L looks at L: absent", me, noTok)
		}
		next = PCreateRename
	case PCreateRename:
		if cl.Into {
			ok = s.renameInto(me)
			d.op("create.rename", ok, "rename L.new-$ L/L.new-$", me, noTok)
		} else {
			ok = s.renameOnto(me)
			d.op("create.rename", ok, "rename L.new-$ L", me, noTok)
			cl.Publ = cl.Publ || ok && m.fixed()
		}
		cl.Into = false
		next = PCreateCheck
	case PCreateCheck:
		ok = s.Lock && s.Rec.has(me)
		d.op("create.check", ok, "[ -f L/$/rec ]", me, noTok)
		next = PCreateInside
		if ok {
			next = PHold
		}
	case PCreateInside:
		if m.fixed() {
			m.spentLook(s, c, d)
			return
		}
		ok = s.Lock && s.Landed.has(me)
		d.op("create.inside", ok, "[ -d L/L.new-$ ]", me, noTok)
		next = PCreateCleanup
		if ok {
			next = PCreateUndo
		}
	case PCreateUndo:
		ok = s.moveOut(me)
		d.op("create.undo", ok, "mv L/L.new-$ L.new-$", me, noTok)
		next = PCreateCleanup
		if !ok {
			next = PCreateUndoRm
		}
	case PCreateUndoRm:
		ok = s.removeLanded(me)
		d.op("create.undo-rm", ok, "rm -rf L/L.new-$", me, noTok)
		next = PCreateCleanup
	case PCreateCleanup:
		ok = s.removeStage(me)
		d.op("create.cleanup", ok, "rm -rf L.new-$", me, noTok)
	}
	cl.Pos = next
}

// spentLook is h_create's look after a rename that did not make the lock
// its own: its prepared directory still at its name (the rename failed;
// nobody else names it, so this look is merged with the next) or inside L
// (it landed there, and the next clear removes it) was never published, and
// the acquire waits on with its token. Gone from both, it was published and
// taken, or it landed in a lock that was cleared since: the attempt is
// spent, which the looks cannot tell from the other, and the acquire goes on
// with its next token (h_nexttoken), or ends if it has none (h_spent). In
// variant SpentReuse it goes on with the same token.
func (m *Model) spentLook(s *State, c int, d *desc) {
	cl := &s.C[c]
	me := s.me(c)
	spent := !s.Stage.has(me) && !(s.Lock && s.Landed.has(me))
	d.op("create.inside", spent, "[ ! -d L.new-$ ] && [ ! -d L/L.new-$ ]", me, noTok)
	switch {
	case !spent:
		cl.Pos = PCreateCleanup
	case m.Variant == SpentReuse:
		cl.Pos = PSample
	case int(cl.Try) < m.Spares:
		cl.Try++
		cl.Publ = false
		cl.Pos = PSample
		if d != nil {
			d.fx += ": spent, it goes on with " + tokName(s.me(c))
		}
	default:
		if d != nil {
			d.fx += ": spent, and no spare is left (BUSY)"
		}
		m.opDone(s, c)
	}
}
