package stagemodel

// Pos is where a push's host command is: the step it runs next, one
// filesystem operation of a fragment (or one look). A step right after an
// h_step hook of the fragments has the hook's name (Hooks); the others are
// named after what they do.
type Pos uint8

const (
	// h_resume (stage.sh), in h_op_pushcheck (push.sh): the takeover.
	PResumeLook  Pos = iota // the looks: a .stage-* of another push with resume, artifact.tar, and cut or both 5 s old
	PResumeTake             // mv <stage>/resume <stage>/taken-me
	PResumeTaken            // resume.taken: mv <stage> .stage-me
	PResumeEnter            // h_enter, [ -f taken-me ]
	PResumeKey              // echo key >key
	PResumeClean            // read cut; rm -f taken-me cut
	PResumeCopy             // dd artifact.tar -> artifact.new (the bytes kept, in a file of this push's)
	PResumeSwap             // mv -f artifact.new artifact.tar
	PPushMark               // printf >resume.t; mv -f resume.t resume: the new mark
	PUploadOpen             // the upload opens .stage-me/artifact.tar (SFTP, by path)
	// h_pclaim (promote.sh): h_instage (stage.sh), then h_claim.
	PEnter         // cd -P .stage-me, and the looks of h_enter
	PEnterKey      // h_ourkey
	PEntered       // stage.entered: h_claim's h_ourkey
	PClaimMv       // mv resume claimed-me (CheckThenWrite: [ -f resume ])
	PClaimGlob     // the expansion of claimed-*
	PClaimMine     // mv claimed-<t> claimed-me, one word at a time
	PClaimMineKey  // Recheck: h_ourkey after it
	PClaimMineBack // Recheck: mv claimed-me claimed-<t>, the mark put back as it was
	PClaimKey      // h_ourkey again
	PClaimBack     // h_unclaim: mv claimed-me resume (the stage was taken over)
	PClaimWrite    // CheckThenWrite: : >claimed-me; rm -f resume
	// After the claim.
	PStreaming // promote.streaming: h_pready ([ -f artifact.tar ], mkdir unpack-me)
	PMarked    // promote.marked: h_pready, the same
	// h_flow, h_yield (stream.sh).
	PStreamOpen // 6<artifact.tar 8<artifact.tar: the descriptors tar's copy and the digest's read
	PStreamFeed // the client's lines: E (the copies end, tar and the digest are whole), or quiet
	PYieldUnud  // h_unud: rm -rf unpack-me
	PYieldCut   // printf >cut
	PYieldBack  // h_unclaim: mv claimed-me resume (UnclaimCopy: cp claimed-me resume)
	PYieldRm    // UnclaimCopy: rm -f claimed-me
	PYielded    // promote.yielded: says YIELDED; the client's late E runs h_op_promote
	// h_ppass (promote.sh).
	PSum // h_sha256 artifact.tar (its own open)
	PTar // tar -xof ../artifact.tar (its own open)
	// h_pdone, h_promote.
	PDrop       // rm -rf artifact.tar ... claimed-me
	PTake       // h_take: waits for the lock
	PFence      // h_fence
	PMove       // h_present, then h_movein unpack-me/tree runtimes/<id>
	PRelease    // h_release_end
	PUnstage    // h_unstage: rm -rf ./* (this command's stage, from inside)
	PUnstageDir // cd .. && rmdir ./.stage-me
	PDone
)

var posNames = [...]string{
	PResumeLook:    "resume.look",
	PResumeTake:    "resume.take",
	PResumeTaken:   "resume.taken",
	PResumeEnter:   "resume.enter",
	PResumeKey:     "resume.key",
	PResumeClean:   "resume.clean",
	PResumeCopy:    "resume.copy",
	PResumeSwap:    "resume.swap",
	PPushMark:      "pushcheck.mark",
	PUploadOpen:    "upload.open",
	PEnter:         "stage.enter",
	PEnterKey:      "stage.key",
	PEntered:       "stage.entered",
	PClaimMv:       "claim.rename",
	PClaimGlob:     "claim.glob",
	PClaimMine:     "claim.claimed",
	PClaimMineKey:  "claim.claimed-key",
	PClaimMineBack: "claim.claimed-back",
	PClaimKey:      "claim.key",
	PClaimBack:     "claim.unclaim",
	PClaimWrite:    "claim.write",
	PStreaming:     "promote.streaming",
	PMarked:        "promote.marked",
	PStreamOpen:    "stream.open",
	PStreamFeed:    "stream.feed",
	PYieldUnud:     "yield.unud",
	PYieldCut:      "yield.cut",
	PYieldBack:     "yield.unclaim",
	PYieldRm:       "yield.unclaim-rm",
	PYielded:       "promote.yielded",
	PSum:           "ppass.sum",
	PTar:           "ppass.tar",
	PDrop:          "pdone.drop",
	PTake:          "pdone.take",
	PFence:         "promote.fence",
	PMove:          "promote.move",
	PRelease:       "pdone.release",
	PUnstage:       "unstage.rm",
	PUnstageDir:    "unstage.rmdir",
	PDone:          "done",
}

func (p Pos) String() string { return posNames[p] }

// Hooks is every step named after the h_step hook just before it in the
// fragments, with the fragment and the operation the hook follows
// (TestStepsAreTheShells holds the shell to it).
var Hooks = map[Pos]Hook{
	// A push's first command that goes on as its promotion (h_inside)
	// is already in the stage it entered: its entry is the first
	// command's, the rest of the step the same.
	PEntered:     {"stage.sh", `{ [ -n "$h_inside" ] || h_enter; } && h_ourkey || return 1`},
	PResumeTaken: {"stage.sh", `mv "$h_d/resume" "$h_d/taken-$hp_stok" 2>/dev/null || continue`},
	PStreaming:   {"stream.sh", "h_pclaim || return"},
	PMarked:      {"promote.sh", "h_pclaim || return"},
	PYielded:     {"stream.sh", "h_unclaim"},
}

// Hook is where an h_step hook is: its fragment file (shellcmd/sh) and the
// line before it.
type Hook struct{ File, After string }

// GPos is where the gc pass is (h_op_gc, gc.sh).
type GPos uint8

const (
	GTake    GPos = iota // h_take with hp_wait=0: one attempt
	GCollect             // h_gc_collect: the expansion of .stage-*
	GIdle                // h_idle: find <stage> -mmin -<stale> finds nothing
	GOwned               // h_owned: the lock is still gc's, its lease unexpired
	GRename              // mv <stage> .trash-<rid>-stage-<token>
	GRm                  // h_rmtree: rm -rf, begun
	GRmEnd               // h_rmtree: rm -rf, done
	GRelease             // h_release_end
	GDone
)

var gposNames = [...]string{"gc.take", "gc.collect", "gc.idle", "gc.owned", "gc.rename", "gc.rm", "gc.rm-end", "gc.release", "done"}

func (p GPos) String() string { return gposNames[p] }
