package stagemodel

// Variant is the protocol as shellcmd/sh has it (Design), or one of the
// designs it must not be, which the checker finds a counterexample to.
type Variant uint8

const (
	Design Variant = iota
	// UnclaimCopy gives the mark back in two steps, cp claimed-me resume
	// then rm -f claimed-me, instead of one rename.
	UnclaimCopy
	// CheckThenWrite claims by a look and a write, [ -f resume ] then
	// : >claimed-me and rm -f resume, instead of renaming the mark.
	CheckThenWrite
	// LateNoClaim: the stalled client's late E promotes the stage it
	// streamed from without claiming it again.
	LateNoClaim
	// TakeoverKeepsFile: the takeover resumes into the archive file it
	// found, not a copy of its own.
	TakeoverKeepsFile
	// GCByName: gc removes a stage by its name, rm -rf .stage-<token>,
	// without renaming it to its trash first.
	GCByName
)

var variantNames = [...]string{"design", "UnclaimCopy", "CheckThenWrite", "LateNoClaim", "TakeoverKeepsFile", "GCByName"}

func (v Variant) String() string { return variantNames[v] }

// Config is what a search explores.
type Config struct {
	Variant Variant
	// Takers is how many other pushes of the runtime may take the stage
	// over (h_resume), 1 or 2; the push that made it is push A.
	Takers int
	// TwoPass lets each push's promotion be either command (h_op_stream
	// or h_op_promote, the client's choice); without it every push
	// streams.
	TwoPass bool
	// GC adds one gc pass, at any time.
	GC bool
	// Crashes bounds how many host commands are killed (at any step);
	// Stalls how often time passes beyond the stale period.
	Crashes, Stalls uint8
	// Recheck and NameUnderLock are the two changes to the fragments the
	// model asks for (docs/protocol.md, "Promotion in one pass"): h_claim
	// finds its key still there after taking a claimed-<t> mark too (and
	// puts the mark back as it was if not), and h_promote, under the lock,
	// finds its stage still at its own name (gc renames what it sweeps, under
	// the lock) before it renames the tree into place.
	Recheck, NameUnderLock bool
	// MaxStates bounds the search; 0 is none. StopAfter ends it once a
	// violation of each invariant named was found.
	MaxStates int
	StopAfter []string
}

// Model is a configured model.
type Model struct{ Config }

// New returns the model of cfg.
func New(cfg Config) *Model {
	if cfg.Takers < 1 || cfg.Takers > maxPushes-1 {
		panic("stagemodel: Takers must be 1 or 2")
	}
	return &Model{cfg}
}

// start is the state the search begins in: push A's first command made
// the stage (its key, artifact.tar, the resume mark) and ended, A's upload
// writes the archive, and A's promotion command is about to start; the
// other pushes are about to look for a stage to resume; gc has not run.
func (m *Model) start() State {
	s := State{Holder: none}
	s.Stage = Stage{Name: 0, Key: 0, Resume: true, Archive: 0, New: none}
	s.Writers[0] = bit(0)
	for i := range s.P {
		s.P[i] = Push{Pos: PDone, Sum: none, From: none}
	}
	s.P[0].Pos, s.P[0].Cmd = PEnter, CmdStream
	for i := 1; i <= m.Takers; i++ {
		s.P[i].Pos, s.P[i].Cmd = PResumeLook, CmdPushcheck
	}
	s.G.Pos, s.G.Looked = GDone, none
	if m.GC {
		s.G.Pos = GTake
	}
	return s
}
