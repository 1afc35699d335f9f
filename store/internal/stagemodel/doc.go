// Package stagemodel is an explicit-state model checker of a push's stage
// and who may own it (docs/protocol.md, "A push's stage: one owner at a
// time" and "Promotion in one pass"), as the fragments in shellcmd/sh do
// it: stage.sh (h_resume, h_claim, h_unclaim, h_unstage), stream.sh
// (h_op_stream, h_yield), promote.sh (h_op_promote, h_pdone, h_promote)
// and gc.sh (h_gc_sweep). It has no code of hoist.
//
// It sits in store, beside rolloutmodel, because the stage is the store's:
// store.Push makes it and promotes from it; lock/internal/model models
// the lock, which this model takes as that model shows it behaves (one
// holder; taken when free, when its holder was killed, or once the
// holder's lease ran out).
//
// # What is modelled
//
// One stage directory, one inode (Stage): its name in the store
// (.stage-<token> of the push it belongs to, gc's trash name, or gone),
// and the entries the protocol reads: key, the mark (resume,
// claimed-<token>, taken-<token>: any number of them, so that a design
// that makes two is seen to), cut, artifact.tar and artifact.new (by
// which file they are: the first push's archive, or a taker's copy),
// unpack-<token> and its tree. Each archive file has the set of pushes
// whose upload holds it open and writes it (State.Writers).
//
// The actors are push A, whose first command made the stage and whose
// upload writes its archive; one or two other pushes of the same runtime
// (B, C), each of which looks for a stage to take over (h_resume in
// h_op_pushcheck), writes its new mark, opens the archive for its upload
// and promotes; and one gc pass. A push promotes by h_op_stream, or with
// Config.TwoPass by either command; a stream whose client goes quiet gives
// the stage back (h_yield) and says YIELDED, and the stalled client's late
// E then runs h_op_promote, whose claim must fail if the stage was taken
// over meanwhile. Each step is one filesystem operation as the fragment
// does it (Pos, pos.go), rename(2) succeeding once for one caller; a
// command that entered the stage works in that inode by relative paths
// whatever its name becomes.
//
// Between any two steps, within Config.Crashes, a host command may be
// killed (it stops for ever, its files stay, and a lock it holds may be
// taken); within Config.Stalls, time may pass beyond the stale period:
// the stage is 5 s old and idle (h_resume's and gc's age rules) until
// something writes in it, and the lock holder's lease runs out.
//
// Some operations are merged into one step, or looser than the host:
// h_pready's look at the archive and its mkdir of unpack-<token> (nobody
// else names the directory); h_flow's two opens of the archive (while
// the stream holds the mark, nobody renames a file over it); rm -rf, in
// two steps, begun (the tree may then be part of anything) and done;
// and an upload's own writes do not make the stage young again, so gc
// and h_resume's age rule may find it idle sooner than a host would
// (more runs, none fewer).
//
// # Invariants
//
// In every state and step (check, explore.go): OneOwner (at most one live
// push past its claim at once: a promotion between h_claim and its end or
// h_unclaim, a takeover between the rename of the mark and its new mark),
// OneMark (the stage never holds two marks), OwnBytes (a promotion renames
// into place the tree of the file its digest read, which no other push's
// upload writes), OnceOnly (runtimes/<id> is renamed into place at most
// once), Resumable (a stage given back, at promote.yielded, holds its cut,
// its archive and one mark, resume, or a claimed mark of another push in
// the middle of h_claim, which the stage's own late E takes again; unless
// gc swept it), WholeTree (nothing is promoted from a stage gc began to
// remove, unless the promotion's lease or gc's ran out after its fence)
// and SweptIsGone (no command reaches a stage gc began to remove that was
// not in it already).
//
// gc's own rule is time: it sweeps a stage nothing wrote for the stale
// period, whatever its marks say, so a promotion stalled that long may
// find its stage swept (and fails then); what the model checks is that
// such a promotion never renames a tree gc was removing (WholeTree), and
// that a takeover and gc never both get a stage (SweptIsGone).
//
// # Two changes the model asks for
//
// As shellcmd/sh has them, h_claim and h_promote break OneOwner, OwnBytes
// and WholeTree (TestClaimOfAClaimedMarkRechecksTheKey,
// TestPromotionFindsItsStageUnderTheLock). Config.Recheck is h_claim
// finding its key still there after it took a claimed-<token> mark too,
// and putting the mark back under its old name if not; Config.NameUnderLock
// is h_promote, under the lock and after h_fence, finding its stage still
// at .stage-<token> (gc renames what it sweeps, under the lock). With both,
// every configuration the tests explore holds.
//
// # Search and variants
//
// Explore is breadth first over states (each a comparable struct, the
// visited set's key), so a counterexample is a shortest run, printed one
// line per move with the step's name. canon forgets the variables of a
// command that ended. Variant turns the model into a design the stage must
// not have (UnclaimCopy, CheckThenWrite, LateNoClaim, TakeoverKeepsFile,
// GCByName); the tests show the checker finds each.
package stagemodel
