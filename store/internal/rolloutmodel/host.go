package rolloutmodel

// The steps of the host commands: the participant of an --atomic rollout
// (h_op_rollout), the single host's health-checked activation
// (h_op_activate with checks), the resumer's command (h_op_resume) and any
// other command that takes the lock (h_take, which settles an unfinished
// record first; gc keeps what one names). One step is one filesystem
// operation or one verdict. A mutation runs only if the step before it
// found the lock its own with its lease unexpired (h_fence), so a command
// that stalls between the two acts once more after its lock was taken:
// every mutation must be safe then too, which is what the links and the
// write-once records are for.

// hostChoices is how many different steps a host command at p may take:
// the acquire takes a free lock, or one whose holder's lease runs out.
func hostChoices(p Pos) int {
	if p == PAcquire {
		return 2
	}
	return 1
}

// mutates reports whether the step at p changes the host (and so runs
// only after a fence that passed).
func mutates(p Pos) bool {
	switch p {
	case PPrepare, PSwitch, PRecord, PRestart, PVote, PDecide, PLearn, PSettle, PRevert, PRestore, PFinish, PGc:
		return true
	}
	return false
}

// hostStep runs the next step of host command k on host h, the choice-th
// where it has several, and reports whether there was one.
func (m *Model) hostStep(s *State, k Kind, h int, choice int, d *desc) bool {
	c, H := s.cmd(k, h), &s.H[h]
	if c.ended() || c.Pos == PIdle && k != KOther || choice >= hostChoices(c.Pos) {
		return false
	}
	at := c.Pos
	if k == KPart && s.Cut&(1<<h) != 0 {
		// What it says after its connection was cut reaches nobody.
		out, told := c.Out, c.Told
		defer func() { c.Out, c.Told = out, told }()
	}
	switch {
	case at == PIdle:
		c.Pos = PAcquire
		d.say(at, "another hoist command reaches the host")
	case at == PAcquire:
		if !m.acquire(s, k, h, choice, d) {
			return false
		}
	case at == PArmed || at == PHealthy || at == PReady || at == PHeld:
		if !m.wait(s, k, h, d) {
			return false
		}
	case mutates(at) && !c.Fence:
		c.Out, c.Pos = ALost, PEnd
		d.say(at, "h_fence: the lock is no longer its own (its lease ran out and it was taken): it stops, touching nothing")
	default:
		m.act(s, k, h, d)
	}
	if !c.ended() {
		c.Fence = H.Holder == k && !H.Exp
	}
	return true
}

// acquire is h_acquire, as the lock model shows it: the lock is taken when
// it is free, or its holder's host process is gone (the exited and boot
// rules), or (choice 1) once its holder's lease ran out: it stalled, or
// its renewals stopped. A client that left first gets nothing held.
func (m *Model) acquire(s *State, k Kind, h int, choice int, d *desc) bool {
	c, H := s.cmd(k, h), &s.H[h]
	if c.Lost && k != KOther {
		if choice != 0 {
			return false
		}
		c.Pos = PEnd
		d.say(PAcquire, "its client left while it waited: nothing is held (cancel-safe waiting)")
		return true
	}
	free := H.Holder == KNone || s.cmd(H.Holder, h).Dead || H.Exp
	if free != (choice == 0) || choice == 1 && int(s.Stalls) >= m.Stalls {
		return false
	}
	if choice == 1 {
		s.Stalls++
	}
	how := "takes the free lock"
	switch {
	case choice == 1:
		how = "time passes: the lease of " + kindName(H.Holder, h) + " runs out; it takes the lock"
	case H.Holder != KNone:
		how = "takes the lock of " + kindName(H.Holder, h) + ", whose host process is gone"
	}
	H.Holder, H.Exp, c.Fence = k, false, true
	switch k {
	case KPart:
		c.Pos = PPrepare
	case KRes:
		c.Pos, c.Out = PHeld, AHeld
	default:
		c.Pos = PSettle
		if m.Other == GC {
			c.Pos = PGc
		}
	}
	d.say(PAcquire, "%s", how)
	return true
}

// wait reads the next control line, or EOF: a host command's client that
// left (killed, cut off, silent for a lease) is what the local rule is for.
// An outcome stays in In for PLearn to read.
func (m *Model) wait(s *State, k Kind, h int, d *desc) bool {
	c := s.cmd(k, h)
	at, in := c.Pos, c.In
	blocks := at == PReady && m.Variant == InDoubtWaits
	switch {
	case in == MSwitch && at == PArmed:
		c.Pos, c.In = PSwitch, MNone
	case in == MGo && at == PHealthy:
		c.Pos, c.In = PVote, MNone
		if m.decider(h) {
			c.Pos = PDecide
		}
	case in == MAbort, in == MCommit && at != PArmed:
		c.Pos = PLearn
	case in == MSettle && !blocks:
		c.Pos, c.In = PSettle, MNone
	case in == MNone && c.Lost && !blocks:
		c.Pos = PSettle
		d.say(at, "its client is gone (EOF, or silence for a lease): it settles by the local rule")
		return true
	case in == MNone || blocks:
		return false
	default:
		panic("rolloutmodel: " + kindName(k, h) + " at " + at.String() + " got " + in.String())
	}
	d.say(at, "reads %q", in)
	return true
}

// act runs a step that changes the host (its fence passed) or judges.
func (m *Model) act(s *State, k Kind, h int, d *desc) {
	c, H := s.cmd(k, h), &s.H[h]
	at := c.Pos
	switch at {
	case PPrepare:
		if H.record() || m.decider(h) && H.Dec != WNone {
			c.Out, c.Pos = ALost, PRelease
			if m.decider(h) {
				c.Out, c.Told = AAbort, H.Dec
			}
			d.say(at, "the rollout's record is there already (a resume's tombstone): the rename fails; it aborts")
			return
		}
		if m.Variant != JournalAfterSwitch {
			H.Next, H.Back = LinkReady, LinkReady
		}
		c.Out, c.Pos = APrepared, PArmed
		if m.Mode == Single {
			c.Pos = PSwitch
		}
		d.say(at, "the record (plan, next, back) is in place: PREPARED")
	case PSwitch:
		switch {
		case m.Variant == SwitchByFreshLink || m.Variant == JournalAfterSwitch:
			H.Cur = To
			if H.Next == LinkReady {
				H.Next = LinkUsed
			}
			c.Pos = PRestart
			if m.Variant == JournalAfterSwitch {
				c.Pos = PRecord
			}
			d.say(at, "a fresh link renamed over current: current is new")
		case H.Next != LinkReady:
			c.Pos = PSettle
			d.say(at, "mv next current fails (a settler fenced it): it settles by the record")
		default:
			H.Next, H.Cur, c.Pos = LinkUsed, To, PRestart
			d.say(at, "mv next current: current is new")
		}
	case PRecord:
		H.Next, H.Back, c.Pos = LinkUsed, LinkReady, PRestart
		d.say(at, "the record is written after the switch")
	case PRestart:
		H.Serving, c.Pos = H.Cur, PCheck
		if m.Variant == RestartByPath {
			H.Serving = To
		}
		d.say(at, "--restart: the service runs %s", H.Serving)
	case PCheck:
		switch {
		case c.Lost:
			c.Pos = PSettle
			d.say(at, "its client is gone: the dialled probes cannot run; unconfirmed is unhealthy")
		case H.Healthy:
			H.Passed, c.Out, c.Pos = true, AHealthy, PHealthy
			if m.Mode == Single {
				c.Pos = PDecide
			}
			d.say(at, "the checks pass: HEALTHY")
		default:
			c.Out, c.Pos = AUnhealthy, PSettle
			d.say(at, "the checks fail: UNHEALTHY; the runtime is marked bad")
		}
	case PVote:
		if H.Vote != WNone && m.Variant != VoteOverwrites {
			c.Pos = PSettle
			d.say(at, "ln -s ready vote fails (a settler voted aborted): it settles by the record")
			return
		}
		H.Vote, c.Out, c.Pos = WYes, AReady, PReady
		d.say(at, "vote -> ready")
	case PDecide:
		if H.Dec == WNone || m.Variant == DecisionOverwrites {
			H.Dec = WYes
		}
		c.Told, c.Out = H.Dec, decided(H.Dec)
		d.say(at, "ln -s commit decision: the decision is %s", wordName(H.Dec, false))
		m.follow(s, k, h)
	case PLearn:
		if H.record() && H.Dec == WNone {
			H.Dec = WYes
			if c.In == MAbort {
				H.Dec = WNo
			}
		}
		if !H.record() {
			c.In, c.Out, c.Pos = MNone, ANoRecord, PRelease
			d.say(at, "no record of the rollout here")
			return
		}
		d.say(at, "ln -s %s outcome: the outcome here is %s", c.In, wordName(H.Dec, false))
		c.In, c.Told = MNone, H.Dec
		m.follow(s, k, h)
	case PSettle:
		m.settle(s, k, h, d)
	case PRevert:
		m.revert(s, k, h, d)
	case PRestore:
		H.Serving, c.Pos = H.Cur, PFinish
		d.say(at, "--restart: the service runs %s; its checks pass", H.Cur)
	case PFinish:
		if H.Done == DoneNone {
			H.Done = DoneFrom
			if c.Side == To {
				H.Done = DoneTo
			}
		}
		c.Out, c.Pos = ADone, PRelease
		d.say(at, "done -> %s", H.Done)
	case PRelease:
		if H.Holder == k {
			H.Holder, H.Exp = KNone, false
		}
		c.Pos = PEnd
		d.say(at, "releases its lock (owner-checked)")
	case PGc:
		keep := H.Cur == From || m.Variant != GCIgnoresJournal && H.record() && H.Done == DoneNone
		if !keep {
			H.FromGone = true
		}
		c.Pos = PRelease
		d.say(at, "keeps the old runtime: %v", keep)
	}
}

// settle is the local rule (h_settle): what a host can decide with its own
// record only. The decider aborts if undecided (a resume that finds no
// record there leaves a tombstone, so that the rollout can never commit
// later); another host votes aborted if it has not voted. Then it goes on
// by the outcome it knows: commit, abort, or none (in doubt: it voted
// ready, and only the decider knows).
func (m *Model) settle(s *State, k Kind, h int, d *desc) {
	c, H := s.cmd(k, h), &s.H[h]
	switch {
	case H.Done != DoneNone:
		c.Out, c.Pos, c.Told = ADone, PRelease, H.Dec
		d.say(PSettle, "the host finished already")
		return
	case m.decider(h):
		if H.Dec == WNone && (H.record() || k == KRes) {
			H.Dec = WNo
		}
		c.Told = H.Dec
		if H.Dec != WNone {
			c.Out = decided(H.Dec)
		}
	case H.record() && H.Dec == WNone && H.Vote == WNone:
		H.Vote, c.Out = WNo, AVetoed
	}
	if !H.record() {
		c.Out, c.Pos = ANoRecord, PRelease
		d.say(PSettle, "no record of the rollout here%s", map[bool]string{true: ": a tombstone, decision abort"}[H.Dec == WNo])
		return
	}
	d.say(PSettle, "vote %s, %s %s", wordName(H.Vote, true), map[bool]string{true: "decision", false: "outcome"}[m.decider(h)],
		wordName(H.Dec, false))
	m.follow(s, k, h)
}

// follow goes on by the outcome the host's record says: commit finishes on
// the new runtime, abort reverts, none (in doubt) releases and leaves the
// host as it is.
func (m *Model) follow(s *State, k Kind, h int) {
	c, H := s.cmd(k, h), &s.H[h]
	if H.Done != DoneNone {
		c.Pos = PRelease
		return
	}
	o := H.Dec
	if !m.decider(h) && o == WNone && H.Vote == WNo {
		o = WNo
	}
	if o == WNone {
		c.Out = AInDoubt
		switch m.Variant {
		case InDoubtPresumesAbort:
			o = WNo
		case InDoubtPresumesCommit:
			o = WYes
		}
	}
	switch o {
	case WYes:
		c.Side, c.Pos = To, PFinish
	case WNo:
		c.Side, c.Pos = From, PRevert
	default:
		c.Pos = PRelease
	}
}

// revert undoes the switch by renaming the record's links: next aside if
// it was never used (no late switch can come then), else back over
// current, once; a revert someone else made is restarted again, as its
// restart may have been cut short.
func (m *Model) revert(s *State, k Kind, h int, d *desc) {
	c, H := s.cmd(k, h), &s.H[h]
	switch {
	case m.Variant == SwitchByFreshLink && H.Cur == To || H.Next == LinkUsed && H.Back == LinkReady:
		if H.FromGone {
			c.Out, c.Pos = ALost, PRelease
			d.say(PRevert, "the runtime it replaced is gone: it cannot revert")
			return
		}
		H.Cur, c.Pos = From, PRestore
		if H.Back == LinkReady {
			H.Back = LinkUsed
		}
		d.say(PRevert, "mv back current: current is old")
	case m.Variant != SwitchByFreshLink && H.Next == LinkReady:
		H.Next, c.Pos = LinkFenced, PFinish
		d.say(PRevert, "mv next next.fenced: it was never switched, and now never will be")
	case H.Next == LinkUsed && m.Variant != SettleSkipsRestart:
		c.Pos = PRestore
		d.say(PRevert, "back was used already: the revert's restart is made again")
	default:
		c.Pos = PFinish
		d.say(PRevert, "nothing to revert")
	}
}

func decided(w Word) Ack {
	if w == WYes {
		return ACommit
	}
	return AAbort
}

// wordName names a record's value: a vote, or a decision or outcome.
func wordName(w Word, vote bool) string {
	switch {
	case w == WNone:
		return "none"
	case vote && w == WYes:
		return "ready"
	case vote:
		return "aborted"
	case w == WYes:
		return "commit"
	}
	return "abort"
}

func kindName(k Kind, h int) string {
	switch k {
	case KPart:
		return "P" + string(rune('0'+h))
	case KRes:
		return "Q" + string(rune('0'+h))
	case KOther:
		return "K"
	}
	return "-"
}
