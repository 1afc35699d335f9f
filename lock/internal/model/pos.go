package model

// Pos is where a client is: the step it runs next. Each step is one
// filesystem operation of a fragment (or one read of it). Where a fragment
// has an h_step hook just before the operation, the step has the hook's name.
type Pos uint8

const (
	// h_acquire, wait.sh: the loop's h_sample and h_judge.
	PSample Pos = iota
	// h_steal, steal.sh.
	PStealCAS    // steal.judged: mv L/T/rec L.stolen-me (legacy: mv L/owner ...)
	PStealAbsent // after an ownerless lock's CAS (h_clear): [ ! -e L ]
	PStealMoved  // steal.moved: rm -f L.stolen-me
	// h_create, create.sh.
	PCreateMkdir    // mkdir L.new-me && mkdir L.new-me/me
	PCreateWrite    // printf ... >L.new-me/me/rec
	PCreatePrepared // create.prepared: [ ! -e L ]
	PCreatePublish  // create.publish: mv L.new-me L, as mv looks at L
	PCreateRename   // the rename(2) that mv then makes
	PCreateCheck    // [ -f L/me/rec ]
	PCreateInside   // [ ! -d L.new-me ] && [ ! -d L/L.new-me ]: spent (RetryAndUndo: [ -d L/L.new-me ])
	PCreateUndo     // mv L/L.new-me L.new-me
	PCreateUndoRm   // rm -rf L/L.new-me
	PCreateCleanup  // rm -rf L.new-me
	// Holding: the command under the lock, h_fence and h_renew, lease.sh.
	PHold         // critical section: next is a fence, a heartbeat or the release
	PFenceAged    // h_owned's second look: [ -f L/me/rec ] (FenceLooksFirst: the age)
	PFenceChecked // fence.checked: the store mutation h_fence allowed
	// h_release, release.sh.
	PReleaseCAS    // release.cas after h_fence or a heartbeat said LOST: mv L/me/rec L.released-me
	PReleaseRemove // rm -f L.released-me
	PReleaseWhole  // release.moved in variant CheckThenRelease: mv L L.released-me
	// h_clear, sample.sh.
	PClearJudged // clear.judged: rm -f L/.owner-*
	PClearLanded // rm -rf L/L.new-* (not in RetryAndUndo)
	PClearGlob   // the expansion of L/* for rmdir
	PClearRmTok  // rmdir L/<t>, one word at a time
	PClearRmLock // rmdir L
	// h_op_break, ops.sh.
	PBreakSample // h_sample, h_stealable, the force check
	PBreakCAS    // break.judged: mv L/T/rec L.broken-me (legacy: mv L/owner ...)
	PBreakAbsent // after an ownerless lock's CAS (h_clear): [ ! -e L ]
	PBreakRemove // rm -f L.broken-me
	PDone        // the program is over
)

var posNames = [...]string{
	PSample:         "sample",
	PStealCAS:       "steal.judged",
	PStealAbsent:    "steal.absent",
	PStealMoved:     "steal.moved",
	PCreateMkdir:    "create.mkdir",
	PCreateWrite:    "create.write",
	PCreatePrepared: "create.prepared",
	PCreatePublish:  "create.publish",
	PCreateRename:   "create.rename",
	PCreateCheck:    "create.check",
	PCreateInside:   "create.inside",
	PCreateUndo:     "create.undo",
	PCreateUndoRm:   "create.undo-rm",
	PCreateCleanup:  "create.cleanup",
	PHold:           "hold",
	PFenceAged:      "fence.aged",
	PFenceChecked:   "fence.checked",
	PReleaseCAS:     "release.cas",
	PReleaseRemove:  "release.rm",
	PReleaseWhole:   "release.moved",
	PClearJudged:    "clear.judged",
	PClearLanded:    "clear.landed",
	PClearGlob:      "clear.glob",
	PClearRmTok:     "clear.rmdir-token",
	PClearRmLock:    "clear.rmdir-lock",
	PBreakSample:    "break.sample",
	PBreakCAS:       "break.judged",
	PBreakAbsent:    "break.absent",
	PBreakRemove:    "break.rm",
	PDone:           "done",
}

func (p Pos) String() string { return posNames[p] }

// Ret is where h_clear returns to: which fragment called it.
type Ret uint8

const (
	RetCreate      Ret = iota // h_acquire (a dead lock) or h_steal: h_create follows
	RetStealAbsent            // h_cas of an ownerless lock, in h_steal
	RetBreakAbsent            // h_cas of an ownerless lock, in h_op_break
	RetRelease                // h_release: rm -f L.released-me follows
	RetDone                   // h_op_break: the op is over
)

var retNames = [...]string{"acquire", "steal", "break", "release", "break"}

// holding reports whether a client at p believes it holds the lock: it is
// in its critical section (a fence passed or not), or about to release.
func holding(p Pos) bool {
	return p == PHold || p == PFenceAged || p == PFenceChecked || p == PReleaseWhole
}

// idle reports whether a client at p is between operations: it holds
// nothing half done, so stopping there leaves nothing behind.
func idle(p Pos) bool { return p == PSample || p == PBreakSample || p == PDone }

// where names a client's position for reports: a step of h_clear says whose
// clear it is, and the first step of a release's clear is release.moved, as
// the hook before it is.
func (c *Client) where() string {
	switch {
	case c.Pos == PClearJudged && c.Ret == RetRelease:
		return "release.moved"
	case c.Pos >= PClearJudged && c.Pos <= PClearRmLock:
		return c.Pos.String() + " (" + retNames[c.Ret] + ")"
	}
	return c.Pos.String()
}
