package stagemodel

import "testing"

// Each variant is a design the stage must not have; it is explored with
// the fragments' two checks on, in a configuration the design holds in, so the
// violations found are the variant's.

// TestModelFindsUnclaimCopy: the mark given back by cp then rm: for a
// moment the stage holds two marks, resume and claimed-<token>, and with
// two takers one of them takes the stage over by resume while the other,
// whose key is in the stage, claims it by the claimed mark left.
func TestModelFindsUnclaimCopy(t *testing.T) {
	t.Parallel()
	cfg := fixed(twoStall)
	cfg.Variant = UnclaimCopy
	findsBug(t, cfg, OneMark, OneOwner)
}

// TestModelFindsCheckThenWrite: a claim by [ -f resume ] and a write: a
// takeover renames the mark between the look and the write, and both go
// on.
func TestModelFindsCheckThenWrite(t *testing.T) {
	t.Parallel()
	cfg := fixed(one)
	cfg.Variant = CheckThenWrite
	findsBug(t, cfg, OneOwner)
}

// TestModelFindsLateNoClaim: the stalled client's late E promotes without
// claiming the stage again: the stage it gave back was taken over
// meanwhile, and both go on (the name checked under the lock then stops
// the late one's promotion).
func TestModelFindsLateNoClaim(t *testing.T) {
	t.Parallel()
	cfg := fixed(one)
	cfg.Variant = LateNoClaim
	findsBug(t, cfg, OneOwner)
}

// TestModelFindsTakeoverKeepsFile: a takeover that resumes into the
// archive file it found: the stalled push's upload writes on into the
// file the taker's promotion reads.
func TestModelFindsTakeoverKeepsFile(t *testing.T) {
	t.Parallel()
	cfg := fixed(one)
	cfg.Variant = TakeoverKeepsFile
	findsBug(t, cfg, OwnBytes)
}

// TestModelFindsGCByName: gc removing a stage by its name, without its
// rename to a trash name of its own first: a takeover (or the stage's own
// promotion) reaches the stage while gc empties it.
func TestModelFindsGCByName(t *testing.T) {
	t.Parallel()
	cfg := fixed(one)
	cfg.Variant = GCByName
	findsBug(t, cfg, SweptIsGone)
}
