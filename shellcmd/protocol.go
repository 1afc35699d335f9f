package shellcmd

// Verb is the first word of a protocol line.
type Verb string

// The verbs of the protocol. Each is one row of [protocol]: its fields and
// what it means; which operation may send it is [Ops]' ([Op.Allows]).
const (
	VerbLoaded    Verb = "LOADED"
	VerbFacts     Verb = "FACTS"
	VerbNoStore   Verb = "NOSTORE"
	VerbFree      Verb = "FREE"
	VerbLock      Verb = "LOCK"
	VerbDebris    Verb = "DEBRIS"
	VerbHeld      Verb = "HELD"
	VerbStolen    Verb = "STOLEN"
	VerbBusy      Verb = "BUSY"
	VerbAcquired  Verb = "ACQUIRED"
	VerbHolding   Verb = "HOLDING"
	VerbAbandoned Verb = "ABANDONED"
	VerbStarted   Verb = "STARTED"
	VerbReleased  Verb = "RELEASED"
	VerbKept      Verb = "KEPT"
	VerbFenced    Verb = "FENCED"
	VerbRefreshed Verb = "REFRESHED"
	VerbRun       Verb = "RUN"
	VerbRunState  Verb = "RUNSTATE"
	VerbCut       Verb = "CUT"
	VerbNoRun     Verb = "NORUN"
	VerbCheck     Verb = "CHECK"
	VerbDoctor    Verb = "DOCTOR"
	VerbRoot      Verb = "ROOT"
	VerbLost      Verb = "LOST"
	VerbNotHeld   Verb = "NOTHELD"
	VerbExit      Verb = "EXIT"
	VerbBroken    Verb = "BROKEN"
	VerbNotStale  Verb = "NOTSTALE"
	VerbNotOwner  Verb = "NOTOWNER"
	VerbError     Verb = "ERROR"
	// The store's.
	VerbPresent    Verb = "PRESENT"
	VerbStage      Verb = "STAGE"
	VerbPromoted   Verb = "PROMOTED"
	VerbStreaming  Verb = "STREAMING"
	VerbYielded    Verb = "YIELDED"
	VerbActivated  Verb = "ACTIVATED"
	VerbCorrupt    Verb = "CORRUPT"
	VerbDropped    Verb = "DROPPED"
	VerbReused     Verb = "REUSED"
	VerbResume     Verb = "RESUME"
	VerbResumable  Verb = "RESUMABLE"
	VerbRuntime    Verb = "RT"
	VerbHistory    Verb = "HIST"
	VerbListed     Verb = "LISTED"
	VerbNotFound   Verb = "NOTFOUND"
	VerbNoPrevious Verb = "NOPREVIOUS"
	VerbPinned     Verb = "PINNED"
	VerbUnpinned   Verb = "UNPINNED"
	VerbKeep       Verb = "KEEP"
	VerbDelete     Verb = "DELETE"
	VerbSweep      Verb = "SWEEP"
	VerbNoProc     Verb = "NOPROC"
	// A push through a registry's (fetch.sh).
	VerbFetched  Verb = "FETCHED"
	VerbNoFetch  Verb = "NOFETCH"
	VerbFetchEnd Verb = "FETCHEND"
	// A health-checked activation's (docs/rollout.md).
	VerbPrepared  Verb = "PREPARED"
	VerbRestarted Verb = "RESTARTED"
	VerbProbe     Verb = "PROBE"
	VerbProbed    Verb = "PROBED"
	VerbTry       Verb = "TRY"
	VerbHealthy   Verb = "HEALTHY"
	VerbUnhealthy Verb = "UNHEALTHY"
	VerbReverted  Verb = "REVERTED"
	VerbSettled   Verb = "SETTLED"
	VerbBad       Verb = "BAD"
	VerbRecord    Verb = "RECORD"
	VerbRPart     Verb = "RPART"
	VerbJournal   Verb = "JOURNAL"
	VerbRStatus   Verb = "RSTATUS"
	VerbROdd      Verb = "RODD"
	// An --atomic rollout's (docs/rollout.md, "All or nothing").
	VerbVoted    Verb = "VOTED"
	VerbDecided  Verb = "DECIDED"
	VerbInDoubt  Verb = "INDOUBT"
	VerbDone     Verb = "DONE"
	VerbPlan     Verb = "PLAN"
	VerbNoRecord Verb = "NORECORD"
	// A rollout in batches' witness of its plan (sh/witness.sh).
	VerbWitnessed Verb = "WITNESSED"
	VerbWitness   Verb = "WITNESS"
	VerbRWitness  Verb = "RWITNESS"
	// What the commands that only read or run say of unfinished records.
	VerbUnfinished Verb = "UNFINISHED"
)

// verbSpec is one reply verb: its fields, by name and in order, and what it
// means. The last field takes the rest of the line (a record, a path, a
// name: it may hold spaces). docs/protocol.md (the lock's verbs) and
// docs/store.md (the store's) list the same rows, and a test holds them and
// the shell's h_say calls to this table.
type verbSpec struct {
	verb   Verb
	fields []string
	// lastOptional: the last field may be absent (ERROR's text).
	lastOptional bool
	owner        owner
	doc          string
}

// owner is the package a verb or a code is about, and the doc that lists
// it.
type owner uint8

const (
	ofLock    owner = iota // package lock, docs/protocol.md
	ofStore                // package store, docs/store.md
	ofRollout              // package store's health-checked switch, docs/rollout.md
)

// holder are the fields of every verdict that names the holder of a lock
// (the shell's h_say_holder, [Verdict.Holder]): its age, the rule that lets
// anyone take it, what the exited rule found of its holder process, and its
// record.
var holder = []string{"age", "why", "proc", "record"}

// protocol is every reply verb; ParseVerdict accepts exactly these, each
// with its field count. Who may send each is in [Ops]; the codes of ERROR
// are the table's other half, [codes] (codes.go).
var protocol = []verbSpec{
	{verb: VerbLoaded, doc: "the host read the whole fragment (first line of every command)"},
	{verb: VerbFacts, fields: []string{"mach", "boot", "pidns", "init", "stat", "nap", "uid", "home"}, doc: "host facts (first command of a connection)"},
	{verb: VerbNoStore, doc: "no store; nothing was created"},
	{verb: VerbFree, doc: "no lock"},
	{verb: VerbLock, fields: holder, doc: "status of a held lock"},
	{verb: VerbDebris, fields: []string{"path"}, doc: "status: something an earlier version left that should be removed"},
	{verb: VerbHeld, fields: holder, doc: "waiting behind this holder (once per holder)"},
	{verb: VerbStolen, fields: holder, doc: "took this lock: a rule let anyone take it"},
	{verb: VerbBusy, fields: holder, doc: "still held when the wait ended"},
	{verb: VerbAcquired, fields: []string{"token"}, doc: "the host holds the lock for this command"},
	{verb: VerbHolding, fields: []string{"token"}, doc: "a manual hold is kept"},
	{verb: VerbAbandoned, doc: "the client left or asked to stop before anything ran"},
	{verb: VerbStarted, doc: "the command runs"},
	{verb: VerbReleased, doc: "released, owner-checked"},
	{verb: VerbKept, fields: []string{"token"}, doc: "a command under a manual hold leaves it held"},
	{verb: VerbFenced, doc: "the lease was lost while the run's command ran: it was stopped"},
	{verb: VerbRefreshed, fields: []string{"lease"}, doc: "a manual hold's lease was renewed"},
	{verb: VerbRun, fields: []string{"id", "start", "end", "status", "who", "cmd"}, doc: "runs: one run record"},
	{verb: VerbRunState, fields: []string{"start", "end", "status", "who", "cmd"}, doc: "logs: the run's record, last"},
	{verb: VerbCut, fields: []string{"stream", "bytes"}, doc: "logs: output a finished run no longer keeps"},
	{verb: VerbNoRun, fields: []string{"id"}, doc: "logs: no such run"},
	{verb: VerbCheck, fields: []string{"name", "status", "value", "detail"}, doc: "doctor: one item of the checklist"},
	{verb: VerbDoctor, doc: "doctor: the checklist is complete"},
	{verb: VerbRoot, fields: []string{"mntns", "dir", "rest"}, doc: "root: where the store's root is on the host: its mount namespace, the dev:ino of its nearest existing directory, the way from there"},
	{verb: VerbLost, fields: holder, doc: "the lock is someone else's now; left alone"},
	{verb: VerbNotHeld, doc: "nothing to release"},
	{verb: VerbExit, fields: []string{"status"}, doc: "the command's exit status"},
	{verb: VerbBroken, fields: holder, doc: "break removed this lock"},
	{verb: VerbNotStale, fields: holder, doc: "break refused: no rule lets anyone take the lock"},
	{verb: VerbNotOwner, fields: holder, doc: "a forced break refused: the lock has another token"},
	{verb: VerbError, fields: []string{"code", "text"}, lastOptional: true, doc: "the host could not do what was asked"},

	{verb: VerbPresent, owner: ofStore, fields: []string{"id"}, doc: "the runtime is there with this digest; nothing to upload"},
	{verb: VerbStage, owner: ofStore, fields: []string{"id", "share"}, doc: "the stage for the upload exists"},
	{verb: VerbPromoted, owner: ofStore, fields: []string{"id"}, doc: "this push put the runtime in place"},
	{verb: VerbStreaming, owner: ofStore, doc: "the promotion claimed the stage and reads the archive as the client says it is whole"},
	{verb: VerbYielded, owner: ofStore, fields: []string{"offset"}, doc: "the promotion gave the stage back, cut at offset, for a resume"},
	{verb: VerbActivated, owner: ofStore, fields: []string{"id", "previous"}, doc: "current points at id"},
	{verb: VerbCorrupt, owner: ofStore, fields: []string{"sha256"}, doc: "the uploaded archive has another digest; the stage is gone"},
	{verb: VerbDropped, owner: ofStore, doc: "a failed upload's stage is gone"},
	{verb: VerbReused, owner: ofStore, fields: []string{"pool-name", "path"}, doc: "a file of the runtime the host already has is reused: copied into the stage's pool and verified"},
	{verb: VerbResume, owner: ofStore, fields: []string{"id", "offset", "sha256"}, doc: "this push took over a cut upload of the runtime"},
	{verb: VerbResumable, owner: ofStore, fields: []string{"id"}, doc: "a stopped upload's stage is kept for the next push"},
	{verb: VerbRuntime, owner: ofStore, fields: []string{"id", "promoted", "size", "flags", "order", "name"}, doc: "one runtime in a list"},
	{verb: VerbHistory, owner: ofStore, fields: []string{"when", "action", "from", "to", "who"}, doc: "one switch of current"},
	{verb: VerbListed, owner: ofStore, doc: "the end of a list"},
	{verb: VerbNotFound, owner: ofStore, fields: []string{"id"}, doc: "no runtime with this id"},
	{verb: VerbNoPrevious, owner: ofStore, doc: "rollback has nowhere to go"},
	{verb: VerbPinned, owner: ofStore, fields: []string{"id"}, doc: "the pin was added"},
	{verb: VerbUnpinned, owner: ofStore, fields: []string{"id"}, doc: "the pin was removed"},
	{verb: VerbKeep, owner: ofStore, fields: []string{"why", "name"}, doc: "gc keeps it"},
	{verb: VerbDelete, owner: ofStore, fields: []string{"id", "state"}, doc: "gc's victim"},
	{verb: VerbSweep, owner: ofStore, fields: []string{"path", "state"}, doc: "a leftover gc removes"},
	{verb: VerbNoProc, owner: ofStore, doc: "gc cannot tell what processes use, and deletes nothing"},
	{verb: VerbFetched, owner: ofStore, fields: []string{"sha256", "bytes", "tries"}, doc: "the host fetched this blob from the registry and verified it"},
	{verb: VerbNoFetch, owner: ofStore, fields: []string{"why", "detail"}, doc: "the fetch ended here: the host gets the rest over SFTP"},
	{verb: VerbFetchEnd, owner: ofStore, fields: []string{"tool"}, doc: "the fetch is over; the tool it used"},

	{verb: VerbPrepared, owner: ofRollout, fields: []string{"id", "from", "to"}, doc: "the record is in place; nothing switched yet"},
	{verb: VerbRestarted, owner: ofRollout, fields: []string{"status", "ms"}, doc: "the restart command ended (status, or timeout) after ms"},
	{verb: VerbProbe, owner: ofRollout, fields: []string{"seq"}, doc: "a try starts: the client dials the dialled probes and answers probe seq ..."},
	{verb: VerbProbed, owner: ofRollout, fields: []string{"seq", "name", "verdict", "ms", "detail"}, doc: "one exec probe's result in a try"},
	{verb: VerbTry, owner: ofRollout, fields: []string{"seq", "verdict", "ms", "detail"}, doc: "a try's result, exec and dialled probes together"},
	{verb: VerbHealthy, owner: ofRollout, fields: []string{"id", "first_ok_ms", "stable_ms", "tries"}, doc: "the checks passed"},
	{verb: VerbUnhealthy, owner: ofRollout, fields: []string{"id", "why"}, doc: "the checks failed"},
	{verb: VerbReverted, owner: ofRollout, fields: []string{"id", "to", "from", "verdict"}, doc: "back on from; the verdict of its checks"},
	{verb: VerbSettled, owner: ofRollout, fields: []string{"id", "side", "runtime", "checks", "dialled", "why"}, doc: "the local rule finished an unfinished record on this side and runtime; its exec checks after the settle (healthy, unhealthy, unchecked, old, -), the dialled probes not run"},
	{verb: VerbBad, owner: ofRollout, fields: []string{"id", "when", "rollout", "why"}, doc: "list: the runtime before is marked bad here"},
	{verb: VerbRecord, owner: ofRollout, fields: []string{"id", "plan"}, doc: "rollout status: a record of the rollout (its own, or a revert of it) and its plan"},
	{verb: VerbRPart, owner: ofRollout, fields: []string{"id", "name", "value"}, doc: "rollout status: a part of the record before: a file (value file) or a link and its value"},
	{verb: VerbJournal, owner: ofRollout, fields: []string{"id", "path"}, doc: "rollout status: a record, or a part of it, that is not what hoist makes; not read further"},
	{verb: VerbROdd, owner: ofRollout, fields: []string{"id", "path"}, doc: "rollout status without ID: an entry named like another rollout's id that is not a record; not read further"},
	{verb: VerbRWitness, owner: ofRollout, fields: []string{"id"}, doc: "rollout status without ID: the latest rollout witnessed here, which a resume without ID counts as recorded"},
	{verb: VerbRStatus, owner: ofRollout, fields: []string{"id", "current"}, doc: "rollout status: the end; the rollout read (- none) and what current names now"},
	{verb: VerbVoted, owner: ofRollout, fields: []string{"vote"}, doc: "this host's vote, as written (ready, or aborted by a settler first)"},
	{verb: VerbDecided, owner: ofRollout, fields: []string{"decision"}, doc: "the decider's decision, as written (commit or abort)"},
	{verb: VerbInDoubt, owner: ofRollout, fields: []string{"id"}, doc: "voted ready and no outcome: nothing changed until the decision is learnt"},
	{verb: VerbDone, owner: ofRollout, fields: []string{"id", "side"}, doc: "the host finished: current and its service are on this side (to, from, overridden)"},
	{verb: VerbPlan, owner: ofRollout, fields: []string{"id", "from", "to", "index", "decider", "hosts", "opts"}, doc: "resume: the record here: from, to, its place in hosts and the decider's (- for a tombstone), a batch plan's options"},
	{verb: VerbNoRecord, owner: ofRollout, fields: []string{"id"}, doc: "resume: no record of the rollout here"},
	{verb: VerbWitnessed, owner: ofRollout, fields: []string{"id", "to"}, doc: "list, staging a rollout in batches: the witness of its plan is written here"},
	{verb: VerbWitness, owner: ofRollout, fields: []string{"id", "to", "hosts", "opts"}, doc: "resume, before PLAN or NORECORD: the witness of the plan here (- for each when it is not as hoist writes it)"},
	{verb: VerbUnfinished, owner: ofRollout, fields: []string{"id", "mode", "from", "to", "state", "hold"}, doc: "list, lock status, run: a record here with no done; its state as its parts say (prepared, switched, voted, decided); hold: held when the token its plan names owns the lock now, else -"},
}

// specs finds a verb's row.
var specs = rowsBy(protocol, func(s *verbSpec) Verb { return s.verb })

// rowsBy indexes a table's rows by their key, which each has once.
func rowsBy[K ~string, R any](rows []R, key func(*R) K) map[K]*R {
	m := map[K]*R{}
	for i := range rows {
		k := key(&rows[i])
		if _, dup := m[k]; dup {
			panic("shellcmd: " + string(k) + " listed twice")
		}
		m[k] = &rows[i]
	}
	return m
}
