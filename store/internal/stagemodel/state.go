package stagemodel

import "math/bits"

// Set is a set of pushes (their stage tokens), one bit each.
type Set uint8

func bit(p int) Set             { return 1 << uint(p) }
func (s Set) has(p int) bool    { return p >= 0 && s&bit(p) != 0 }
func (s Set) lowest() int       { return bits.TrailingZeros8(uint8(s)) }
func (s Set) count() int        { return bits.OnesCount8(uint8(s)) }
func (s Set) without(p int) Set { return s &^ bit(p) }

const (
	maxPushes = 3 // the push that made the stage and up to two that take it over
	gcActor   = maxPushes
	nActors   = maxPushes + 1
	none      = -1
	// The stage's name when it is no push's .stage-<token>.
	nameTrash = 8 // .trash-<gc token>-stage-<token>: gc is sweeping it
	nameGone  = 9 // removed
)

// Stage is the stage directory, one inode, as the host holds it: its name
// in the store, and the entries of it that the protocol reads. An archive
// is a file by who made it: 0 is the archive the first push's command
// made (its upload writes it), p > 0 the copy push p's takeover made
// (h_resume's dd). Ages are flags the environment sets (a stall past the
// bound) and every write into the stage clears.
type Stage struct {
	Name    int8 // whose .stage-<token> it is, nameTrash or nameGone
	Key     int8 // whose key the key file holds; none if there is none
	Resume  bool // the mark: resume
	Claimed Set  // claimed-<t>
	Taken   Set  // taken-<t>
	Cut     bool // cut
	Archive int8 // the file at artifact.tar; none if there is none
	New     int8 // the file at artifact.new (h_resume's copy); none if there is none
	Unpack  Set  // unpack-<t> exists
	Tree    Set  // unpack-<t>/tree is unpacked, whole
	Damaged bool // gc's rm -rf has begun on it: what is left may be part of anything
	Late    bool // gc renamed or removed it after its lease ran out (it stalled after h_owned)
	Old     bool // its archive and mark are 5 s old (h_resume's age rule)
	Idle    bool // nothing in it was written for the stale period (gc's h_idle)
}

// marks is how many marks the stage holds: resume, claimed-* and taken-*.
func (g *Stage) marks() int {
	n := g.Claimed.count() + g.Taken.count()
	if g.Resume {
		n++
	}
	return n
}

// wrote records a write into the stage: it is young again.
func (g *Stage) wrote() { g.Old, g.Idle = false, false }

// Cmd is which host command a push runs.
type Cmd uint8

const (
	CmdPushcheck Cmd = iota // h_op_pushcheck: the takeover (h_resume) and the new mark
	CmdStream               // h_op_stream: promotion in one pass
	CmdPromote              // h_op_promote: promotion after the upload
	CmdLate                 // h_op_promote after a stream that yielded: the stalled client's late E
)

var cmdNames = [...]string{"h_op_pushcheck", "h_op_stream", "h_op_promote", "h_op_promote (late E)"}

func (c Cmd) String() string { return cmdNames[c] }

// Push is one push of the runtime: where its host command is, and the
// shell variables of it the model needs.
type Push struct {
	Pos     Pos
	Cmd     Cmd
	Crashed bool
	In      bool // the command entered the stage (h_enter): its working directory is that inode, whatever its name becomes
	Owns    bool // past its claim: a promotion between h_claim and its end or h_unclaim, a takeover between its mark's rename and its new mark
	Glob    Set  // h_claim's expansion of claimed-*: the words still to try
	Sum     int8 // the archive file the digest read; none before
	From    int8 // the archive file unpack-<token>/tree was unpacked from; none before
	Fenced  bool // h_fence passed with its lease unexpired, and nothing since made it expire
}

// State is one state of the model: the stage, the files' writers, the
// lock, what was promoted, and every actor.
type State struct {
	Stage
	Writers  [maxPushes]Set // the pushes whose upload writes archive file i (holds it open)
	Holder   int8           // the lock's holder (a push or gcActor); none if free
	Expired  bool           // the holder's lease ran out (it stalled past it)
	Promoted uint8          // times runtimes/<id> was renamed into place
	P        [maxPushes]Push
	G        GC
	Crashes  uint8 // crashes so far (Config.Crashes bounds them)
	Stalls   uint8 // stalls so far (Config.Stalls bounds them)
}

// GC is the gc pass (h_op_gc's h_gc_sweep of the stage).
type GC struct {
	Pos     GPos
	Crashed bool
	Looked  int8 // the name h_gc_collect found the stage by
	Fresh   bool // h_owned passed, and gc's lease has not run out since
}
