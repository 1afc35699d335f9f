package model

// The filesystem operations of the fragments, with rename(2) and rmdir(2)
// semantics. Each returns whether it succeeded; a failed one changes nothing.
// Any change to L's entries makes L young again (its mtime is now).

// touchLock records that L's entries changed.
func (f *FS) touchLock() { f.LockOld = false }

// renameOnto is rename(L.new-t, L): onto an absent path it succeeds, onto an
// empty directory it replaces it, onto a non-empty directory it fails.
func (f *FS) renameOnto(t Tok) bool {
	if !f.Stage.has(t) || (f.Lock && !f.empty()) {
		return false
	}
	f.Lock, f.Initial, f.Rebooted, f.LockOld = true, false, false, false
	f.Dir |= bit(t)
	if f.StageRec.has(t) {
		f.Rec |= bit(t)
	}
	f.Stage &^= bit(t)
	f.StageRec &^= bit(t)
	return true
}

// renameInto is rename(L.new-t, L/L.new-t): what plain mv does once it found
// L a directory. It fails if L has gone meanwhile.
func (f *FS) renameInto(t Tok) bool {
	if !f.Stage.has(t) || !f.Lock || f.Landed.has(t) {
		return false // no source, no target directory, or a non-empty target
	}
	f.Landed |= bit(t)
	f.Stage &^= bit(t)
	f.StageRec &^= bit(t)
	f.touchLock()
	return true
}

// moveOut is mv L/L.new-t L.new-t: a prepared directory that landed inside
// L, moved back out by its own name.
func (f *FS) moveOut(t Tok) bool {
	if !f.Lock || !f.Landed.has(t) {
		return false
	}
	f.Landed &^= bit(t)
	f.Stage |= bit(t)
	f.StageRec |= bit(t)
	f.touchLock()
	return true
}

// removeLanded is rm -rf L/L.new-t.
func (f *FS) removeLanded(t Tok) bool {
	if !f.Lock || !f.Landed.has(t) {
		return false
	}
	f.Landed &^= bit(t)
	f.touchLock()
	return true
}

// removeAllLanded is rm -rf L/L.new-*.
func (f *FS) removeAllLanded() bool {
	if !f.Lock || f.Landed == 0 {
		return false
	}
	f.Landed = 0
	f.touchLock()
	return true
}

// removeStage is rm -rf L.new-t.
func (f *FS) removeStage(t Tok) bool {
	ok := f.Stage.has(t)
	f.Stage &^= bit(t)
	f.StageRec &^= bit(t)
	return ok
}

// moveRec is mv L/t/rec <moved-out name of mover>: the compare-and-swap.
// rename(2) of a file that does not exist fails.
func (f *FS) moveRec(t, mover Tok) bool {
	if !f.Lock || !f.Rec.has(t) {
		return false
	}
	f.Rec &^= bit(t)
	f.Moved |= bit(mover)
	return true
}

// moveOwner is mv L/owner <moved-out name>: an earlier version's lock.
func (f *FS) moveOwner(mover Tok) bool {
	if !f.Lock || !f.Owner {
		return false
	}
	f.Owner = false
	f.Moved |= bit(mover)
	f.touchLock()
	return true
}

// moveWhole is mv L <moved-out name>: the whole lock directory, whatever is
// in it (the old bugs of variants WholeDirSteal and CheckThenRelease).
func (f *FS) moveWhole(mover Tok) bool {
	if !f.Lock {
		return false
	}
	f.Lock, f.Owner, f.OwnerTmp, f.Initial, f.Rebooted, f.LockOld = false, false, false, false, false, false
	f.Dir, f.Rec, f.Landed = 0, 0, 0
	f.Moved |= bit(mover)
	return true
}

// removeOwnerTmp is rm -f L/.owner-*.
func (f *FS) removeOwnerTmp() bool {
	if !f.Lock || !f.OwnerTmp {
		return false
	}
	f.OwnerTmp = false
	f.touchLock()
	return true
}

// rmdirTok is rmdir L/t: it fails unless L/t is an empty directory.
func (f *FS) rmdirTok(t Tok) bool {
	if !f.Lock || !f.Dir.has(t) || f.Rec.has(t) {
		return false
	}
	f.Dir &^= bit(t)
	f.touchLock()
	return true
}

// rmdirLock is rmdir L: it fails unless L is an empty directory.
func (f *FS) rmdirLock() bool {
	if !f.empty() {
		return false
	}
	f.Lock, f.Initial, f.Rebooted, f.LockOld = false, false, false, false
	return true
}

// mkdirLock is mkdir L (variant OwnerlessBirth only).
func (f *FS) mkdirLock() bool {
	if f.Lock {
		return false
	}
	f.Lock, f.Initial, f.Rebooted, f.LockOld = true, false, false, false
	return true
}

// writeInLock is mkdir L/t && printf ... >L/t/rec (variant OwnerlessBirth).
func (f *FS) writeInLock(t Tok) bool {
	if !f.Lock || f.Dir.has(t) {
		return false
	}
	f.Dir |= bit(t)
	f.Rec |= bit(t)
	f.touchLock()
	return true
}
