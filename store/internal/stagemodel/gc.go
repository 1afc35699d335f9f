package stagemodel

// gcStep runs the gc pass's next step (h_op_gc with the stage among
// h_gc_collect's leftovers) and reports whether it had one. gc tries the
// lock once; under it, it sweeps a stage that nothing wrote for the stale
// period: renamed to its trash first (which only one of gc and a takeover
// can do), then removed there.
func (m *Model) gcStep(s *State, d *desc) bool {
	c := &s.G
	if c.Crashed || c.Pos == GDone {
		return false
	}
	g := &s.Stage
	switch c.Pos {
	case GTake:
		ok := s.lockFree()
		d.op(c.Pos, ok, "h_take, once: the lock is gc's")
		if ok {
			s.Holder, s.Expired = gcActor, false
		}
		c.Pos = GCollect
		if !ok {
			c.Pos = GDone // SKIPPED
		}
	case GCollect:
		ok := g.Name >= 0 && g.Name < maxPushes
		c.Looked = none
		if ok {
			c.Looked = g.Name
		}
		d.op(c.Pos, ok, "h_gc_collect: .stage-%s", tok(int(c.Looked)))
		c.Pos = gnext(ok, GIdle, GRelease)
	case GIdle:
		ok := g.Name == c.Looked && g.Idle
		d.op(c.Pos, ok, "h_idle .stage-%s: nothing written for the stale period", tok(int(c.Looked)))
		c.Pos = gnext(ok, GOwned, GRelease)
	case GOwned:
		ok := s.Holder == gcActor && !s.Expired
		d.op(c.Pos, ok, "h_owned: the lock is gc's, its lease unexpired")
		c.Fresh = ok
		c.Pos = gnext(ok, GRename, GRelease)
		if ok && m.Variant == GCByName {
			c.Pos = GRm
		}
	case GRename:
		ok := g.Name == c.Looked
		d.op(c.Pos, ok, "mv .stage-%s .trash-gc-stage-%[1]s", tok(int(c.Looked)))
		if ok {
			g.Name, g.Late = nameTrash, !c.Fresh
		}
		c.Pos = gnext(ok, GRm, GRelease)
	case GRm:
		// By its trash name, or in GCByName by the name it was found by:
		// rm -rf opens it and then works from inside, whatever its name
		// becomes.
		ok := g.Name == nameTrash || (m.Variant == GCByName && g.Name == c.Looked)
		d.op(c.Pos, ok, "rm -rf %s: begun (what is left may be part of anything)", gname(m, c))
		if ok {
			g.Damaged, g.Late = true, g.Late || !c.Fresh
		}
		c.Pos = gnext(ok, GRmEnd, GRelease)
	case GRmEnd:
		d.op(c.Pos, true, "rm -rf %s: done", gname(m, c))
		*g = Stage{Name: nameGone, Key: none, Archive: none, New: none}
		c.Pos = GRelease
	case GRelease:
		d.say(c.Pos, "h_release_end")
		if s.Holder == gcActor {
			s.Holder, s.Expired = none, false
		}
		c.Pos = GDone
	}
	return true
}

func gname(m *Model, c *GC) string {
	if m.Variant == GCByName {
		return ".stage-" + tok(int(c.Looked))
	}
	return ".trash-gc-stage-" + tok(int(c.Looked))
}

func gnext(ok bool, yes, no GPos) GPos {
	if ok {
		return yes
	}
	return no
}
