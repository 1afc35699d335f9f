package rolloutmodel

// Mode is what is modelled: an --atomic rollout across hosts, or one
// host's health-checked activation.
type Mode uint8

const (
	// Atomic is hoist rollout --atomic: host 0 is the decider.
	Atomic Mode = iota
	// Single is activate --check on one host: the host decides alone.
	Single
)

// Other is what the other hoist command on a host is (Config.Other).
type Other uint8

const (
	// Recover is any command that takes the lock (activate, push,
	// rollback, pin, run): it finds the record unfinished and settles it
	// by the local rule first.
	Recover Other = iota
	// GC is hoist gc: it removes a runtime that is not current unless a
	// record that is not done names it.
	GC
)

// Variant switches the model from the design of docs/rollout.md to one of
// the designs it rejects, which the checker must find wrong.
type Variant uint8

const (
	// Design is docs/rollout.md.
	Design Variant = iota
	// OutcomeBeforeDecision tells the other hosts "commit" before the
	// decider has recorded it: the coordinator dies in between, and the
	// decider, which never heard, aborts.
	OutcomeBeforeDecision
	// CommitWithoutVotes records commit as soon as every host is healthy,
	// with no vote round: a host that loses the coordinator before it
	// learns the outcome has no vote to tell it that it may not abort.
	CommitWithoutVotes
	// InDoubtPresumesAbort lets a host that voted ready, and lost the
	// coordinator before it learnt the outcome, revert by itself.
	InDoubtPresumesAbort
	// InDoubtPresumesCommit lets it finish on the new runtime instead.
	InDoubtPresumesCommit
	// InDoubtWaits is two-phase commit as in the textbook: a host that
	// voted waits for the outcome, holding its lock, for as long as it
	// takes.
	InDoubtWaits
	// VoteOverwrites writes the vote with a plain write instead of ln -s:
	// a stalled participant's vote replaces the abort a settler wrote.
	VoteOverwrites
	// DecisionOverwrites writes the decision that way.
	DecisionOverwrites
	// SwitchByFreshLink switches current as activate does today (a fresh
	// link renamed over current after a fence) instead of renaming the
	// record's next link: a participant that stalled after its fence
	// switches after a settler finished the host on the old runtime.
	SwitchByFreshLink
	// JournalAfterSwitch writes the record after the switch: a host
	// command killed between the two leaves the host on a runtime nobody
	// checked, with nothing that says so.
	JournalAfterSwitch
	// SettleSkipsRestart restarts the service after a revert only when the
	// settler renamed back itself: a revert whose restart was cut short
	// leaves the service on the runtime current no longer names.
	SettleSkipsRestart
	// GCIgnoresJournal is a gc that keeps only what current names: it can
	// remove the runtime an unfinished record reverts to.
	GCIgnoresJournal
	// RestartByPath is a --restart that starts the runtime it was given
	// (HOIST_DIR) instead of what current names: a stalled participant's
	// late restart starts the new runtime after a settler reverted.
	RestartByPath
)

var variantNames = [...]string{"design", "outcome before decision", "commit without votes", "in doubt presumes abort",
	"in doubt presumes commit", "in doubt waits", "vote overwrites", "decision overwrites", "switch by fresh link",
	"journal after switch", "settle skips restart", "gc ignores journal", "restart by path"}

func (v Variant) String() string { return variantNames[v] }

// Config is one model to explore.
type Config struct {
	Mode Mode
	// Hosts is how many hosts take part: 1 for Single, 2 or 3 for Atomic.
	Hosts int
	// Resumer adds a hoist rollout resume (Atomic only) that starts once
	// the coordinator has ended (crashed, or given up), while its host
	// commands may still be settling, and may crash at any step.
	Resumer bool
	// ResumeAnytime lets the resumer start at any moment instead, while
	// the coordinator still runs (a second operator).
	ResumeAnytime bool
	// OtherOn is the host (1-based) on which another hoist command, Other,
	// may run at any moment; 0 for none.
	OtherOn int
	Other   Other
	// Faults bounds the faults of hosts and connections in a run: a
	// connection cut, a host command killed, a host rebooted. Crashes of
	// the coordinator and of the resumer are always possible, once each.
	Faults int
	// Stalls bounds how many times in a run a live holder's lease runs out
	// (it stalls past it, or its renewals stop) and another command takes
	// the lock: the holder may still make the one mutation its last fence
	// allowed.
	Stalls int
	// Unhealthy lists the sets of hosts on which the new runtime fails its
	// checks that are explored, as bit masks; nil explores every set.
	Unhealthy []uint8
	Variant   Variant
	// MaxStates bounds the search (breadth first); 0 explores everything.
	MaxStates int
	// StopAfter ends the search once a violation of each of these
	// invariants has been found.
	StopAfter []string
}

// Model is a Config being explored.
type Model struct {
	Config
	kh []kindHost // the host commands (cmds)
}

// New returns the model of cfg.
func New(cfg Config) *Model {
	m := &Model{Config: cfg}
	m.kh = m.cmds()
	return m
}

// decider reports whether host h decides: host 0 of an atomic rollout, the
// host itself in Single mode.
func (m *Model) decider(h int) bool { return h == 0 }

// starts are the initial states: every host on the old runtime, serving
// it, no record, no lock; the new runtime healthy or not per host.
func (m *Model) starts() []State {
	masks := m.Unhealthy
	if masks == nil {
		for u := range 1 << m.Hosts {
			masks = append(masks, uint8(u))
		}
	}
	var out []State
	for _, u := range masks {
		var s State
		for h := range m.Hosts {
			s.H[h].Healthy = u&(1<<h) == 0
		}
		s.C.Pos = CStage
		s.R.Pos = RStart
		if !m.Resumer {
			s.R.Pos = REnd
		}
		s.K.Lost = true // it has no client to wait for
		if m.OtherOn == 0 {
			s.K.Pos = PEnd
		}
		out = append(out, s)
	}
	return out
}
