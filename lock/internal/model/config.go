package model

// Op is one command a client runs.
type Op uint8

const (
	// Acquire is h_acquire, a critical section with fences (h_fence), and
	// h_release: hoist run, or a store command under the lock.
	Acquire Op = iota
	// Break is h_op_break: judged by the rules, or forced by token.
	Break
)

// Variant switches the model from the protocol as the fragments implement
// it to one of the old bugs, which the checker must find.
type Variant uint8

const (
	// Fragments is the protocol of shellcmd/sh.
	Fragments Variant = iota
	// WholeDirSteal steals by moving the whole lock directory aside
	// (mv L L.stolen-me) after judging, instead of the CAS on L/T/rec.
	WholeDirSteal
	// CheckThenRelease releases by checking [ -f L/me/rec ] and then
	// moving L aside: a check, then an act on whatever L is by then.
	CheckThenRelease
	// OwnerlessBirth creates the lock as earlier versions did: mkdir L,
	// then the record inside it as a separate step, so a lock exists
	// without its record while its creator runs.
	OwnerlessBirth
	// RetryAndUndo is h_create as first written: an acquire whose lock was
	// published and taken before its check publishes again with the same
	// token (a steal judged on the first then takes the second), and a
	// prepared directory that landed inside L is moved back out (which can
	// leave L empty: an ownerless lock only the age rule frees), while
	// h_sample ignores it and h_clear leaves it.
	RetryAndUndo
	// HeartbeatRevives is a heartbeat that does not fence itself: a
	// renewal that came after the holder's lease ran out (it stalled) is
	// taken as a renewal, so the holder keeps its lock, its lease running
	// again, while a waiter that judged the lock stale meanwhile takes it.
	HeartbeatRevives
	// ExitedWhileRunning is an exited rule that finds the holder's process
	// gone while it merely stalls (as one that compared the pid but not its
	// start time would, the pid being reused): every held lock of this boot
	// is judged exited.
	ExitedWhileRunning
	// FenceLooksFirst is h_owned as first written: [ -f L/me/rec ], then
	// the record's age, which is "unknown" (and passes) when the record
	// was taken in between: a holder whose lease ran out, and whose lock
	// was stolen, passes its fence.
	FenceLooksFirst
	// SpentReuse is h_create as it is, but an acquire that finds its
	// attempt spent waits on with the same token instead of a spare: the
	// attempt may have been published and taken, so a second lock of that
	// token is open to a steal judged on the first.
	SpentReuse
)

var variantNames = [...]string{"fragments", "whole-directory steal", "check-then-release", "ownerless birth", "retry and undo",
	"heartbeat revives", "exited while running", "fence looks first", "spent token reused"}

func (v Variant) String() string { return variantNames[v] }

// Start is the lock path as a run finds it.
type Start uint8

const (
	// NoLock: an empty store.
	NoLock Start = iota
	// LegacyLock: an earlier version's lock, L/owner, with its temporary
	// L/.owner-<tok> left beside it.
	LegacyLock
	// OwnerlessLock: an earlier version's empty lock directory.
	OwnerlessLock
)

var startNames = [...]string{"no lock", "an earlier version's lock", "an ownerless lock"}

func (s Start) String() string { return startNames[s] }

// Config is one model to explore.
type Config struct {
	// Programs is each client's ops, in order (at most 3 clients, 2 ops).
	Programs [][]Op
	// Starts are the initial lock paths; each is explored.
	Starts []Start
	// Reboots bounds the reboots of the host (0 or 1). After one, every
	// client runs its program again, with new tokens.
	Reboots int
	// Variant selects the protocol or one of the old bugs.
	Variant Variant
	// MaxStates bounds the search (breadth first); 0 explores everything.
	MaxStates int
	// StopAtFirst ends the search at the first violation.
	StopAtFirst bool
	// CrashMoves makes a crash a move of the environment (the client stops
	// for ever, its files stay). Without it a crash is a client that is
	// never scheduled again, which every interleaving already includes: the
	// same filesystems and positions are reached, and a stalled holder
	// counts for TwoHolders where a crashed one would not (stricter). The
	// one thing a crash changes for the others, that the exited rule finds
	// its holder's process gone, is then a move made just before the sample
	// that judges by it: the creator of the lock sampled crashes first, when
	// no rule lets the lock be taken already. The progress check takes every
	// state as one where every client crashed.
	CrashMoves bool
	// Spares is how many spare tokens an acquire has (0 or 1, below
	// maxTries): after an attempt it finds spent it goes on with the next,
	// and when none is left it ends (BUSY). The fragments' clients send
	// four; one shows the retry and the end when the spares run out, at
	// several times the states.
	Spares int
	// LazyTime lets time pass only just before a sample, and only for the
	// lock that sample looks at, instead of between any two steps: the same
	// runs of the clients, each age set as late as it can be, so every
	// state has fewer expired leases and TwoHolders is checked at least as
	// strictly. It makes the state space much smaller.
	LazyTime bool
}

// fixed reports whether h_create is the fragments' in how it looks after
// its rename: it leaves a directory that landed inside L to the next
// h_clear, and ends an attempt it finds spent (not the RetryAndUndo
// variant).
func (m *Model) fixed() bool { return m.Variant != RetryAndUndo }

// Model is a Config being explored.
type Model struct {
	Config
	progress map[progressKey]progressVerdict
}

// New returns the model of cfg.
func New(cfg Config) *Model {
	if cfg.Spares < 0 || cfg.Spares >= maxTries {
		panic("model: Config.Spares must be 0 or 1")
	}
	return &Model{Config: cfg, progress: map[progressKey]progressVerdict{}}
}

// program is client c's program; the fresh client of the progress check
// acquires once.
func (m *Model) program(c int) []Op {
	if c == freshSlot {
		return []Op{Acquire}
	}
	return m.Programs[c]
}

// firstPos is where client c starts its op pc.
func (m *Model) firstPos(c, pc int) Pos {
	p := m.program(c)
	switch {
	case pc >= len(p):
		return PDone
	case p[pc] == Break:
		return PBreakSample
	}
	return PSample
}

// initial is the state a run starts in.
func (m *Model) initial(st Start) State {
	var s State
	switch st {
	case LegacyLock:
		s.Lock, s.Owner, s.OwnerTmp, s.Initial = true, true, true, true
	case OwnerlessLock:
		s.Lock, s.Initial = true, true
	}
	for c := range s.C {
		s.C[c] = Client{Pos: PDone, Judged: noTok}
		if c < len(m.Programs) {
			s.C[c].Pos = m.firstPos(c, 0)
		}
	}
	return s
}
