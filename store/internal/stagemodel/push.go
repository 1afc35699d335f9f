package stagemodel

// pushStep runs push p's next step (its choice-th, where it has two) and
// reports whether it had one. Each step is one operation of the fragment,
// done as the kernel does it: a rename of a path that is not there fails,
// and once a command entered the stage, its relative paths are that
// directory's, whatever its name is now.
func (m *Model) pushStep(s *State, p, choice int, d *desc) bool {
	c := &s.P[p]
	if c.Crashed || c.Pos == PDone {
		return false
	}
	g := &s.Stage
	// here: the command's relative paths reach the stage (it entered it,
	// and gc's rm -rf has not emptied it).
	here := c.In && g.Name != nameGone
	if choice == 1 && !(c.Pos == PStreamFeed || (c.Pos == PEnter && m.TwoPass && c.Cmd == CmdStream)) {
		return false
	}
	switch c.Pos {
	case PResumeLook:
		ok := g.Name >= 0 && g.Name < maxPushes && int(g.Name) != p && g.Resume && g.Archive != none && (g.Cut || g.Old)
		d.op(c.Pos, ok, "looks at .stage-%s: resume, artifact.tar, and cut or 5 s old", tok(int(g.Name)))
		c.Pos = next(ok, PResumeTake, PDone)
		if ok {
			c.Glob = bit(int(g.Name)) // the stage looked at, by the name it had
		}
	case PResumeTake:
		ok := g.Name >= 0 && c.Glob.has(int(g.Name)) && g.Resume
		d.op(c.Pos, ok, "mv .stage-%s/resume .stage-%[1]s/taken-%s", tok(c.Glob.lowest()), tok(p))
		if ok {
			g.Resume, g.Taken = false, g.Taken|bit(p)
			g.wrote()
			c.Owns = true
		}
		c.Pos = next(ok, PResumeTaken, PDone)
	case PResumeTaken:
		ok := g.Name >= 0 && c.Glob.has(int(g.Name))
		d.op(c.Pos, ok, "mv .stage-%s .stage-%s", tok(c.Glob.lowest()), tok(p))
		if ok {
			g.Name = int8(p)
		} else {
			c.Owns = false
		}
		c.Pos = next(ok, PResumeEnter, PDone)
	case PResumeEnter:
		ok := g.Name == int8(p) && g.Taken.has(p)
		d.op(c.Pos, ok, "cd .stage-%s && [ -f taken-%[1]s ]", tok(p))
		c.In = ok
		if !ok {
			c.Owns = false
		}
		c.Pos = next(ok, PResumeKey, PDone)
	case PResumeKey:
		d.op(c.Pos, here, "echo key-%s >key", tok(p))
		if here {
			g.Key = int8(p)
			g.wrote()
		}
		c.Pos = PResumeClean
	case PResumeClean:
		d.op(c.Pos, here, "read cut; rm -f taken-%s cut", tok(p))
		if here {
			g.Taken, g.Cut = g.Taken.without(p), false
			g.wrote()
		}
		c.Pos = PResumeCopy
		if m.Variant == TakeoverKeepsFile {
			c.Pos = PPushMark
		}
	case PResumeCopy:
		ok := here && g.Archive != none
		d.op(c.Pos, ok, "dd if=artifact.tar of=artifact.new (file %s)", tok(p))
		if ok {
			g.New = int8(p)
			g.wrote()
		}
		c.Pos = next(ok, PResumeSwap, PUnstage)
	case PResumeSwap:
		ok := here && g.New != none
		d.op(c.Pos, ok, "mv -f artifact.new artifact.tar")
		if ok {
			g.Archive, g.New = g.New, none
			g.wrote()
		}
		c.Pos = next(ok, PPushMark, PUnstage)
	case PPushMark:
		d.op(c.Pos, here, "printf >resume.t; mv -f resume.t resume")
		if here {
			g.Resume = true
			g.wrote()
		}
		c.Owns = false
		c.Pos = next(here, PUploadOpen, PDone)
	case PUploadOpen:
		ok := g.Name == int8(p) && g.Archive != none
		d.op(c.Pos, ok, "the upload opens .stage-%s/artifact.tar (file %s)", tok(p), tok(int(g.Archive)))
		if ok {
			s.Writers[g.Archive] |= bit(p)
		}
		c.Pos, c.Cmd, c.In = next(ok, PEnter, PDone), CmdStream, false
	case PEnter:
		if choice == 1 {
			c.Cmd = CmdPromote
		}
		ok := g.Name == int8(p)
		d.op(c.Pos, ok, "%s: cd -P .stage-%s", c.Cmd, tok(p))
		c.In = ok
		c.Pos = next(ok, PEnterKey, PDone)
	case PEnterKey:
		ok := here && g.Key == int8(p)
		d.op(c.Pos, ok, "h_ourkey: key is key-%s", tok(p))
		c.Pos = next(ok, PEntered, PDone)
		if ok && c.Cmd == CmdLate && m.Variant == LateNoClaim {
			c.Pos = m.claimed(s, p)
		}
	case PEntered:
		ok := here && g.Key == int8(p)
		d.op(c.Pos, ok, "h_claim: h_ourkey: key is key-%s", tok(p))
		c.Pos = next(ok, PClaimMv, PDone)
	case PClaimMv:
		ok := here && g.Resume
		if m.Variant == CheckThenWrite {
			d.op(c.Pos, ok, "[ -f resume ]")
			c.Pos = next(ok, PClaimWrite, PDone)
			break
		}
		d.op(c.Pos, ok, "mv resume claimed-%s", tok(p))
		if ok {
			g.Resume, g.Claimed = false, g.Claimed|bit(p)
			g.wrote()
		}
		c.Pos = next(ok, PClaimKey, PClaimGlob)
	case PClaimWrite:
		d.op(c.Pos, here, ": >claimed-%s; rm -f resume", tok(p))
		if here {
			g.Resume, g.Claimed = false, g.Claimed|bit(p)
			g.wrote()
		}
		c.Pos = next(here, PClaimKey, PDone)
	case PClaimGlob:
		c.Glob = 0
		if here {
			c.Glob = g.Claimed
		}
		d.op(c.Pos, c.Glob != 0, "for claimed-* (%s)", c.Glob)
		c.Pos = next(c.Glob != 0, PClaimMine, PDone)
	case PClaimMine:
		t := c.Glob.lowest()
		c.Glob = c.Glob.without(t)
		ok := here && g.Claimed.has(t)
		d.op(c.Pos, ok, "[ -f claimed-%s ] && mv claimed-%[1]s claimed-%s", tok(t), tok(p))
		switch {
		case ok:
			g.Claimed = g.Claimed.without(t) | bit(p)
			g.wrote()
			c.Pos = m.claimed(s, p)
			if m.Recheck {
				c.Owns, c.Glob, c.Pos = false, bit(t), PClaimMineKey
			}
		case c.Glob == 0:
			c.Pos = PDone
		}
	case PClaimMineKey:
		ok := here && g.Key == int8(p)
		d.op(c.Pos, ok, "h_ourkey: key is key-%s", tok(p))
		c.Pos = PClaimMineBack
		if ok {
			c.Glob, c.Pos = 0, m.claimed(s, p)
		}
	case PClaimMineBack:
		t := c.Glob.lowest()
		ok := here && g.Claimed.has(p)
		d.op(c.Pos, ok, "mv claimed-%s claimed-%s", tok(p), tok(t))
		if ok {
			g.Claimed = g.Claimed.without(p) | bit(t)
			g.wrote()
		}
		c.Pos = PDone
	case PClaimKey:
		ok := here && g.Key == int8(p)
		d.op(c.Pos, ok, "h_ourkey: key is key-%s", tok(p))
		c.Pos = PClaimBack
		if ok {
			c.Pos = m.claimed(s, p)
		}
	case PClaimBack:
		ok := here && g.Claimed.has(p)
		d.op(c.Pos, ok, "h_unclaim: mv claimed-%s resume", tok(p))
		if ok {
			g.Claimed, g.Resume = g.Claimed.without(p), true
			g.wrote()
		}
		c.Pos = PDone
	case PStreaming, PMarked:
		ok := here && g.Archive != none && !g.Unpack.has(p)
		d.op(c.Pos, ok, "[ -f artifact.tar ] && mkdir unpack-%s", tok(p))
		if ok {
			g.Unpack |= bit(p)
			g.wrote()
		}
		c.Pos = next(ok, PSum, PUnstage)
		if ok && c.Pos == PSum && c.Cmd == CmdStream {
			c.Pos = PStreamOpen
		}
	case PStreamOpen:
		ok := here && g.Archive != none
		d.op(c.Pos, ok, "6<artifact.tar 8<artifact.tar (file %s)", tok(int(g.Archive)))
		if ok {
			c.Sum, c.From = g.Archive, g.Archive
		}
		c.Pos = next(ok, PStreamFeed, PUnstage)
	case PStreamFeed:
		if choice == 0 {
			ok := here && g.Unpack.has(p) && !g.Damaged
			d.op(c.Pos, ok, "E: the copies end, tar and the digest read file %s to its end", tok(int(c.From)))
			if ok {
				g.Tree |= bit(p)
				g.wrote()
			}
			c.Pos = next(ok, PDrop, PUnstage)
			break
		}
		d.say(c.Pos, "no line for 5 s (the client stalled): the copying stops")
		c.Sum, c.From = none, none
		c.Pos = PYieldUnud
	case PYieldUnud:
		d.op(c.Pos, here, "rm -rf unpack-%s", tok(p))
		if here {
			g.Unpack, g.Tree = g.Unpack.without(p), g.Tree.without(p)
			g.wrote()
		}
		c.Pos = PYieldCut
	case PYieldCut:
		d.op(c.Pos, here, "printf >cut")
		if here {
			g.Cut = true
			g.wrote()
		}
		c.Pos = PYieldBack
	case PYieldBack:
		ok := here && g.Claimed.has(p)
		if m.Variant == UnclaimCopy {
			d.op(c.Pos, ok, "cp claimed-%s resume", tok(p))
			if ok {
				g.Resume = true
				g.wrote()
			}
			c.Pos = PYieldRm
			break
		}
		d.op(c.Pos, ok, "h_unclaim: mv claimed-%s resume", tok(p))
		if ok {
			g.Claimed, g.Resume = g.Claimed.without(p), true
			g.wrote()
		}
		c.Owns = false
		c.Pos = PYielded
	case PYieldRm:
		d.op(c.Pos, here && g.Claimed.has(p), "rm -f claimed-%s", tok(p))
		if here {
			g.Claimed = g.Claimed.without(p)
			g.wrote()
		}
		c.Owns = false
		c.Pos = PYielded
	case PYielded:
		d.say(c.Pos, "says YIELDED; the client, stalled, sends E late: h_op_promote")
		c.Pos, c.Cmd, c.In = PEnter, CmdLate, false
		c.Sum, c.From = none, none
	case PSum:
		ok := here && g.Archive != none
		d.op(c.Pos, ok, "h_sha256 artifact.tar (file %s)", tok(int(g.Archive)))
		if ok {
			c.Sum = g.Archive
		}
		c.Pos = next(ok, PTar, PUnstage)
	case PTar:
		ok := here && g.Archive != none && g.Unpack.has(p) && !g.Damaged
		d.op(c.Pos, ok, "tar -xof ../artifact.tar in unpack-%s (file %s)", tok(p), tok(int(g.Archive)))
		if ok {
			c.From = g.Archive
			g.Tree |= bit(p)
			g.wrote()
		}
		c.Pos = next(ok, PDrop, PUnstage)
	case PDrop:
		d.op(c.Pos, here, "rm -rf artifact.tar claimed-%s", tok(p))
		if here {
			g.Archive, g.Claimed = none, g.Claimed.without(p)
			g.wrote()
		}
		c.Pos = PTake
	case PTake:
		if !s.lockFree() {
			return false // it waits
		}
		d.say(c.Pos, "h_take: the lock is %s's now", tok(p))
		s.Holder, s.Expired = int8(p), false
		c.Pos = PFence
	case PFence:
		ok := s.Holder == int8(p) && !s.Expired
		if m.NameUnderLock {
			ok = ok && g.Name == int8(p)
			d.op(c.Pos, ok, "h_fence, [ . -ef ../.stage-%s ]: the lock is %[1]s's, its lease unexpired, the stage still at its name", tok(p))
		} else {
			d.op(c.Pos, ok, "h_fence: the lock is %s's, its lease unexpired", tok(p))
		}
		c.Fenced = ok
		c.Pos = next(ok, PMove, PUnstage)
	case PMove:
		d.say(c.Pos, "h_present: no")
		c.Pos = PRelease
		if s.Promoted > 0 {
			d.say(c.Pos, "h_present: PRESENT")
			break
		}
		ok := here && g.Tree.has(p)
		d.op(PMove, ok, "mv -fT unpack-%s/tree runtimes/<id>", tok(p))
		if ok {
			m.promote(s, p, d)
			g.Tree, g.Unpack = g.Tree.without(p), g.Unpack.without(p)
			g.wrote()
		}
	case PRelease:
		d.say(c.Pos, "h_release_end")
		if s.Holder == int8(p) {
			s.Holder, s.Expired = none, false
		}
		c.Pos = PUnstage
	case PUnstage:
		d.op(c.Pos, here, "h_unstage: rm -rf ./*")
		if here {
			name, damaged := g.Name, g.Damaged
			*g = Stage{Name: name, Key: none, Archive: none, New: none, Damaged: damaged}
		}
		c.Owns = false
		c.Pos = PUnstageDir
	case PUnstageDir:
		ok := g.Name == int8(p) && g.empty()
		d.op(c.Pos, ok, "cd .. && rmdir ./.stage-%s", tok(p))
		if ok {
			g.Name = nameGone
		}
		c.Pos = PDone
	}
	return true
}

// claimed is where a command goes once h_claim returned 0.
func (m *Model) claimed(s *State, p int) Pos {
	s.P[p].Owns = true
	if s.P[p].Cmd == CmdStream {
		return PStreaming
	}
	return PMarked
}

func next(ok bool, yes, no Pos) Pos {
	if ok {
		return yes
	}
	return no
}

// empty reports whether the stage holds nothing the model tells.
func (g *Stage) empty() bool {
	return g.Key == none && g.marks() == 0 && !g.Cut && g.Archive == none && g.New == none && g.Unpack == 0
}

// lockFree reports whether h_take gets the lock now: it is free, its
// holder was killed (the exited rule, or its lease runs out), or its
// holder's lease ran out.
func (s *State) lockFree() bool {
	if s.Holder == none || s.Expired {
		return true
	}
	if s.Holder == gcActor {
		return s.G.Crashed
	}
	return s.P[s.Holder].Crashed
}
