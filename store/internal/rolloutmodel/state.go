package rolloutmodel

// Side is a runtime of the rollout on a host: the one it replaces (From,
// from=) or the one it installs (To, to=).
type Side uint8

const (
	From Side = iota
	To
)

func (s Side) String() string { return [...]string{"old", "new"}[s] }

// Link is one of the two links a host's record is prepared with:
// .rollouts/<id>/next (-> runtimes/<to>) and back (-> runtimes/<from>). A
// switch of current is the rename of one of them over current, so each can
// switch current once, and a settler that renames next aside first (fences
// it) makes a late switch fail.
type Link uint8

const (
	LinkNone   Link = iota // no record on the host
	LinkReady              // prepared, not used
	LinkUsed               // renamed over current
	LinkFenced             // renamed aside by a settler: it can never switch
)

var linkNames = [...]string{"-", "ready", "used", "fenced"}

func (l Link) String() string { return linkNames[l] }

// Word is a write-once record: vote (ready or aborted) on every host,
// decision (commit or abort) on the decider, outcome (commit or abort: the
// decision, as learnt) on the others. A write is ln -s VALUE NAME, which
// fails if NAME exists.
type Word uint8

const (
	WNone Word = iota
	WYes       // vote ready; decision or outcome commit
	WNo        // vote aborted; decision or outcome abort
)

// Done is done: the host finished the rollout on this side.
type Done uint8

const (
	DoneNone Done = iota
	DoneFrom
	DoneTo
)

var doneNames = [...]string{"-", "old", "new"}

func (d Done) String() string { return doneNames[d] }

// Kind is which of a host's host commands holds its lock.
type Kind uint8

const (
	KNone  Kind = iota
	KPart       // the rollout's participant (or the single host's activation)
	KRes        // the resumer's host command
	KOther      // another hoist command on the host (a later activate, gc, ...)
)

// Host is what a host keeps across crashes: current, the service, its
// record of the rollout, the old runtime, and its lock (as the lock model
// shows it behaves: one holder at a time, taken from a holder whose
// process is gone or whose lease ran out).
type Host struct {
	Cur, Serving Side // where current points; what the service was last (re)started on
	Next, Back   Link
	Vote, Dec    Word // Dec is the decision on the decider, the outcome elsewhere
	Done         Done
	Healthy      bool // the new runtime passes its checks on this host (fixed per start)
	Passed       bool // its checks ran and passed here (ghost: not on the host)
	FromGone     bool // gc removed the old runtime
	Holder       Kind
	Exp          bool // the holder's lease ran out (it stalled, or its renewals stopped)
}

// record reports whether the host has the rollout's record.
func (h *Host) record() bool { return h.Next != LinkNone }

// Pos is where a host command is: the step it runs next, named after the
// h_step hook just before it in docs/rollout.md.
type Pos uint8

const (
	PIdle    Pos = iota // not started
	PAcquire            // host.acquire: waits for the host's lock
	PPrepare            // host.prepare: the record (plan, next, back) renamed into place
	PArmed              // host.prepared: waits for the switch
	PSwitch             // host.switch: mv next current
	PRecord             // host.record: JournalAfterSwitch only, the record after the switch
	PRestart            // host.restart: --restart on the new runtime
	PCheck              // host.check: the probe loop's verdict
	PHealthy            // host.healthy: waits for the vote request (the decider: for commit)
	PVote               // host.vote: ln -s ready vote
	PDecide             // host.decide: ln -s commit decision (the decider, a single host)
	PReady              // host.ready: voted; waits for the outcome
	PLearn              // host.learn: ln -s <outcome> outcome
	PHeld               // host.held: the resumer's host command waits for its word
	PSettle             // host.settle: the local rule
	PRevert             // host.revert: mv next next.fenced, or mv back current
	PRestore            // host.restore: --restart on the runtime reverted to, and its checks
	PFinish             // host.finish: ln -s old|new done
	PRelease            // host.release
	PGc                 // gc.sweep: another command, gc, removes what it may
	PEnd                // the host command is over
)

var posNames = [...]string{"idle", "host.acquire", "host.prepare", "host.prepared", "host.switch", "host.record",
	"host.restart", "host.check", "host.healthy", "host.vote", "host.decide", "host.ready", "host.learn", "host.held",
	"host.settle", "host.revert", "host.restore", "host.finish", "host.release", "gc.sweep", "done"}

func (p Pos) String() string { return posNames[p] }

// Msg is a control line from a host command's client (coordinator or
// resumer) on its standard input, not read yet.
type Msg uint8

const (
	MNone   Msg = iota
	MSwitch     // switch
	MGo         // vote ready (the decider: decide commit)
	MCommit     // the outcome is commit (read on the decider)
	MAbort      // the outcome is abort (read on the decider)
	MSettle     // settle by the local rule: abort if not voted (the decider: if undecided)
)

var msgNames = [...]string{"-", "switch", "go", "commit", "abort", "settle"}

func (m Msg) String() string { return msgNames[m] }

// Ack is a host command's last verdict line to its client.
type Ack uint8

const (
	ANone      Ack = iota
	APrepared      // PREPARED
	AHealthy       // HEALTHY: checks passed, not voted
	AUnhealthy     // UNHEALTHY: checks failed; it reverts by itself
	AReady         // VOTED ready
	AVetoed        // VOTED aborted
	ACommit        // DECIDED commit (the decider)
	AAbort         // DECIDED abort (the decider)
	ADone          // DONE side
	AInDoubt       // INDOUBT: voted ready, the outcome unknown here
	AHeld          // HELD: the resumer's command holds the lock
	ANoRecord      // NORECORD: the host has no record of the rollout
	ALost          // LOST: its lock was taken (it stopped), or it cannot revert
	AGone          // (its client's view) no answer: the connection or the host command is gone
)

var ackNames = [...]string{"-", "PREPARED", "HEALTHY", "UNHEALTHY", "VOTED ready", "VOTED aborted", "DECIDED commit",
	"DECIDED abort", "DONE", "INDOUBT", "HELD", "NORECORD", "LOST", "(gone)"}

func (a Ack) String() string { return ackNames[a] }

// Cmd is one host command: the rollout's participant on a host, the
// resumer's command on it, or another hoist command that reaches it.
type Cmd struct {
	Pos   Pos
	Fence bool // its lock was its own, lease unexpired, at the end of its last step
	In    Msg
	Out   Ack
	Lost  bool // its client is gone: EOF or silence on its standard input
	Dead  bool // the host shell was killed (or the host rebooted)
	Side  Side // the side it finishes on (PRevert, PRestore, PFinish)
	Told  Word // the decision it reported (DECIDED), or the outcome it learnt
}

// ended reports whether the host command does nothing more.
func (c *Cmd) ended() bool { return c.Dead || c.Pos == PEnd }

// CPos is where a coordinator (the rollout's client) or a resumer is.
type CPos uint8

const (
	CStage   CPos = iota // rollout.stage: stage and start every host's participant
	CPrepare             // rollout.prepare: waits for PREPARED from every host
	CSwitch              // rollout.switch: sends switch to host I
	CCheck               // rollout.check: waits for every host's checks
	CVote                // rollout.vote: sends go to host I (not the decider)
	CVoted               // rollout.voted: waits for the votes
	CDecide              // rollout.decide: sends go to the decider
	CDecided             // rollout.decided: waits for the decision
	CCommit              // rollout.commit: sends the outcome commit to host I
	CAbort               // rollout.abort: sends settle to the decider
	CAborted             // rollout.aborted: waits for its decision
	CRevert              // rollout.revert: sends abort (or settle) to host I
	CFinish              // rollout.finish: waits for every host to finish
	CEnd                 // the client is done (or gave up: in doubt)
	RStart               // resumer.start: starts a host command on every host
	RDecide              // resumer.decide: sends settle to the decider's
	RDecided             // resumer.decided: waits for its decision
	ROutcome             // resumer.outcome: sends the outcome (or settle) to host I
	RFinish              // resumer.finish: waits for every host to finish
	REnd
)

var cposNames = [...]string{"rollout.stage", "rollout.prepare", "rollout.switch", "rollout.check", "rollout.vote",
	"rollout.voted", "rollout.decide", "rollout.decided", "rollout.commit", "rollout.abort", "rollout.aborted",
	"rollout.revert", "rollout.finish", "done", "resumer.start", "resumer.decide", "resumer.decided", "resumer.outcome",
	"resumer.finish", "done"}

func (p CPos) String() string { return cposNames[p] }

// Coord is the rollout's client or the resumer: where it is, the host it
// is at in a round (I), and whether it crashed.
type Coord struct {
	Pos     CPos
	I       uint8
	Crashed bool
	Veto    bool // the resumer could not learn the decision: it asks for the local rule
}

func (c *Coord) ended() bool { return c.Crashed || c.Pos == CEnd || c.Pos == REnd }

const maxHosts = 3

// State is one state of the model.
type State struct {
	H      [maxHosts]Host
	P      [maxHosts]Cmd // the participants (the coordinator's host commands)
	Q      [maxHosts]Cmd // the resumer's host commands
	K      Cmd           // another hoist command, on host Config.Other-1
	C, R   Coord         // the coordinator and the resumer
	Cut    uint8         // the hosts whose connection to the coordinator was cut (bits)
	Faults uint8         // faults of hosts and connections so far
	Stalls uint8         // leases that ran out under a live holder so far
}

// cmd is the host command of kind k on host h (the other command, K, has
// one host).
func (s *State) cmd(k Kind, h int) *Cmd {
	switch k {
	case KPart:
		return &s.P[h]
	case KRes:
		return &s.Q[h]
	}
	return &s.K
}
