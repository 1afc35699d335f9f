// Package output is the --json schema of hoist's commands, one type per
// object; scripts may decode into these.
//
// With --json, hoist prints one object per host and line on stdout. Every
// object is a [Result] (the host, whether it succeeded, its exit code and
// error) and, when the command got that far, the fields of its command:
// decode a line of hoist lock status into a [LockStatus], of hoist push
// into a [Push], and so on; the type of each command is named in its doc.
// A failed command's object may carry only the Result, so check
// [Result.OK] before the rest. The README's JSON section says what each
// field means; a test checks that it names every field of these types.
//
// The field names are a contract: fields are added, never renamed or
// removed. hoist prints the keys of each object in sorted order.
package output

// Result is what every object has: the target, whether the command
// succeeded there, and the exit code it comes to. A target whose store
// another target of the same command reached first was not worked on: its
// object says which target that was (SameStoreAs) and has nothing else.
type Result struct {
	Host        string `json:"host"`
	OK          bool   `json:"ok"`
	Exit        int    `json:"exit"`
	Error       string `json:"error,omitempty"`
	SameStoreAs string `json:"same_store_as,omitempty"`
}

// Head returns r. Every type of this package embeds a Result; Head reaches
// it whatever the type.
func (r *Result) Head() *Result { return r }

// Object is one line of --json output: a type of this package.
type Object interface{ Head() *Result }

// Unreached is a target that a signal stopped before it was reached
// (connecting, or waiting for its turn): nothing was done there.
type Unreached struct {
	Result
	Interrupted bool `json:"interrupted"`
}

// LockStatus is hoist lock status.
type LockStatus struct {
	Result
	Lock
	UnfinishedRollouts []UnfinishedRollout `json:"unfinished_rollouts,omitempty"`
}

// UnfinishedRollout is a rollout record a host keeps with no done (a
// rollout whose host command died, or one under way), as hoist list, lock
// status and run name it without settling it: its id, mode, from (empty
// for nothing), to, its state as its parts say, and whether it is under
// way.
type UnfinishedRollout struct {
	ID    string `json:"id"`
	Mode  string `json:"mode"`
	From  string `json:"from"`
	To    string `json:"to"`
	State string `json:"state"`
	// UnderWay: the hold its host command works under owns the store lock
	// (and, for lock status, no rule lets anyone take that lock): the
	// rollout is under way, or its host command died and the lock was not
	// released or taken since. False: it was interrupted, and hoist
	// rollout resume finishes it.
	UnderWay bool `json:"under_way"`
}

// Lock is the state of a store's lock, as lock status reports it and as
// other commands show the lock they met (a status object).
type Lock struct {
	Store  bool     `json:"store"`
	Locked bool     `json:"locked"`
	Stale  bool     `json:"stale"`
	Debris []string `json:"debris,omitempty"`
	// Held is there when Locked.
	*Held
}

// Held is what a held lock shows: its token and holder, its age and the
// rule, if any, that lets anyone take it.
type Held struct {
	Token string `json:"token"`
	// Record is the record as found, when it does not parse (empty when
	// there is none); Owner is the parsed record otherwise.
	Record           *string `json:"record,omitempty"`
	Owner            *Owner  `json:"owner,omitempty"`
	AgeSeconds       *int64  `json:"age_seconds"` // nil (null) when the host cannot tell
	Reason           string  `json:"reason"`
	Why              string  `json:"why"`
	BootMatch        *bool   `json:"boot_match,omitempty"`
	PIDNSMatch       *bool   `json:"pidns_match,omitempty"`
	LeaseSeconds     int64   `json:"lease_seconds"`
	ExpiresInSeconds *int64  `json:"expires_in_seconds"` // nil (null) when unknown
	HolderProcess    string  `json:"holder_process,omitempty"`
}

// Owner is a lock's owner record.
type Owner struct {
	Who          string `json:"who"`
	PID          int    `json:"pid"`
	Command      string `json:"command"`
	Message      string `json:"message"`
	Version      string `json:"version"`
	Since        string `json:"since"`
	Boot         string `json:"boot"`
	Machine      string `json:"machine"`
	PIDNS        string `json:"pidns"`
	Init         string `json:"init"`
	LeaseSeconds int64  `json:"lease_seconds"`
	HolderPID    string `json:"holder_pid"`
	HolderUID    string `json:"holder_uid"`
}

// LockAcquire is hoist lock acquire: the token of the hold, or Interrupted.
type LockAcquire struct {
	Result
	Token       string `json:"token,omitempty"`
	Stolen      *Lock  `json:"stolen,omitempty"`
	Interrupted bool   `json:"interrupted,omitempty"`
}

// LockRelease is hoist lock release.
type LockRelease struct {
	Result
	Released bool `json:"released"`
}

// LockBreak is hoist lock break.
type LockBreak struct {
	Result
	Broken Lock `json:"broken"`
}

// LockRefresh is hoist lock refresh.
type LockRefresh struct {
	Result
	Refreshed    bool  `json:"refreshed"`
	LeaseSeconds int64 `json:"lease_seconds"`
}

// Run is hoist run.
type Run struct {
	Result
	Token        string `json:"token"`
	Run          string `json:"run"`
	Started      bool   `json:"started"`
	ExitStatus   int    `json:"exit_status"`
	Reattached   int    `json:"reattached,omitempty"`
	LockLost     bool   `json:"lock_lost,omitempty"`
	ReleaseError string `json:"release_error,omitempty"`
	Interrupted  bool   `json:"interrupted,omitempty"`
	// UnfinishedRollouts as LockStatus's.
	UnfinishedRollouts []UnfinishedRollout `json:"unfinished_rollouts,omitempty"`
}

// Runs is hoist runs.
type Runs struct {
	Result
	Runs []RunRecord `json:"runs"`
}

// Logs is hoist logs: the run's record.
type Logs struct {
	Result
	RunRecord
}

// RunRecord is a run kept on a host.
type RunRecord struct {
	ID         string `json:"id"`
	Started    string `json:"started"`
	Ended      string `json:"ended,omitempty"`
	Running    bool   `json:"running"`
	ExitStatus *int   `json:"exit_status"` // nil (null) while it runs or when nobody saw it
	Who        string `json:"who"`
	Command    string `json:"command"`
}

// Push is hoist push. Pushed is there once the push reached the host.
type Push struct {
	Result
	ID       string   `json:"id"`
	Stripped []string `json:"stripped"`
	Writable []string `json:"writable"`
	*Pushed
}

// Pushed is what a push did on the host.
type Pushed struct {
	Present       bool   `json:"present"`
	Promoted      bool   `json:"promoted"`
	UploadedBytes int64  `json:"uploaded_bytes"`
	Activated     bool   `json:"activated"`
	Previous      string `json:"previous"`
	Execs         int    `json:"execs"`
	ResumedAt     int64  `json:"resumed_at"`
	ReusedFiles   int    `json:"reused_files"`
	// Through a registry (push --via, push oci://).
	FetchedBlobs     int    `json:"fetched_blobs,omitempty"`
	FetchedBytes     int64  `json:"fetched_bytes,omitempty"`
	FetchResumes     int    `json:"fetch_resumes,omitempty"`
	FetchTool        string `json:"fetch_tool,omitempty"`
	Fallback         string `json:"fallback,omitempty"`
	SentFromRegistry bool   `json:"sent_from_registry,omitempty"`
	// Health is there when --activate ran the health-checked sequence.
	Health *Health `json:"health,omitempty"`
	// Settled are earlier rollouts' unfinished records the host settled
	// by the local rule before --activate switched, as Activate's.
	Settled []Settle `json:"settled,omitempty"`
}

// Publish is hoist publish: one object, about the registry (Host is the
// registry), not about a host.
type Publish struct {
	Result
	ID            string   `json:"id"`
	Name          string   `json:"name"`
	Digest        string   `json:"digest"`
	Sum           string   `json:"sum"`
	Reference     string   `json:"reference"`
	Tag           string   `json:"tag"`
	Manifest      string   `json:"manifest"`
	Pinned        string   `json:"pinned"`
	Blobs         int      `json:"blobs"`
	PresentBlobs  int      `json:"present_blobs"`
	MountedBlobs  int      `json:"mounted_blobs"`
	UploadedBlobs int      `json:"uploaded_blobs"`
	UploadedBytes int64    `json:"uploaded_bytes"`
	PackBytes     int64    `json:"pack_bytes"`
	ManifestBytes int64    `json:"manifest_bytes"`
	Stripped      []string `json:"stripped"`
	Writable      []string `json:"writable"`
}

// Mux is hoist mux check, stop and exit: the connection kept to a host.
type Mux struct {
	Result
	Master           bool   `json:"master"`
	Socket           string `json:"socket,omitempty"`
	OpenSSHMasterPID int    `json:"openssh_master_pid,omitempty"`
	PID              int    `json:"pid,omitempty"`
	Since            string `json:"since,omitempty"`
	Clients          int    `json:"clients,omitempty"`
	Version          string `json:"version,omitempty"`
	PersistSeconds   int64  `json:"persist_seconds,omitempty"`
}

// List is hoist list.
type List struct {
	Result
	Runtimes []Runtime `json:"runtimes"`
	// UnfinishedRollouts as LockStatus's.
	UnfinishedRollouts []UnfinishedRollout `json:"unfinished_rollouts,omitempty"`
}

// Runtime is a runtime in a store.
type Runtime struct {
	ID       string `json:"id"`
	Name     string `json:"name"`
	Size     int64  `json:"size"`
	Promoted string `json:"promoted"`
	Active   bool   `json:"active"`
	Previous bool   `json:"previous"`
	Pinned   bool   `json:"pinned"`
	// Bad is there when the runtime is marked bad on the host.
	Bad *BadMark `json:"bad,omitempty"`
}

// BadMark is a runtime's bad mark: it failed its checks on the host.
type BadMark struct {
	When    string `json:"when"`
	Why     string `json:"why"`
	Rollout string `json:"rollout"`
}

// History is hoist history.
type History struct {
	Result
	History []HistoryEntry `json:"history"`
}

// HistoryEntry is one switch of current.
type HistoryEntry struct {
	When    string `json:"when"`
	Action  string `json:"action"`
	From    string `json:"from"`
	To      string `json:"to"`
	Who     string `json:"who"`
	Command string `json:"command"`
}

// Activate is hoist activate and hoist rollback.
type Activate struct {
	Result
	Current  string `json:"current"`
	Previous string `json:"previous"`
	// Health is there when the health-checked sequence ran.
	Health *Health `json:"health,omitempty"`
	// Settled are earlier rollouts' unfinished records the host settled
	// first, by the local rule.
	Settled []Settle `json:"settled,omitempty"`
}

// Settle is an earlier rollout's unfinished record that a host settled by
// the local rule (docs/rollout.md, "The local rule"): the side it
// finished on and the runtime current names, and how the record's exec
// checks went after the settle.
type Settle struct {
	Rollout string `json:"rollout"`
	Side    string `json:"side"`
	Runtime string `json:"runtime"`
	// Checks: healthy, unhealthy, unchecked (the record has none), old (a
	// record that does not keep them: not re-run), "" (nothing restarted).
	Checks string `json:"checks"`
	// Dialled is how many HTTP and TCP checks the record had, which the
	// local rule does not run.
	Dialled int    `json:"dialled"`
	Why     string `json:"why,omitempty"`
}

// Health is a health-checked switch: the new runtime's restart and probes,
// and the revert's when it failed.
type Health struct {
	ID            string `json:"id"`
	From          string `json:"from"`
	To            string `json:"to"`
	Healthy       bool   `json:"healthy"`
	Why           string `json:"why,omitempty"`
	Check         Phase  `json:"check"`
	Revert        *Phase `json:"revert,omitempty"`
	RevertVerdict string `json:"revert_verdict,omitempty"`
}

// Phase is one restart and its probe loop.
type Phase struct {
	RestartStatus string `json:"restart_status"`
	RestartMS     int64  `json:"restart_ms"`
	FirstOKMS     int64  `json:"first_ok_ms"`
	StableMS      int64  `json:"stable_ms"`
	Tries         []Try  `json:"tries"`
}

// Try is one try of every probe.
type Try struct {
	Seq    int     `json:"seq"`
	OK     bool    `json:"ok"`
	MS     int64   `json:"ms"`
	Detail string  `json:"detail,omitempty"`
	Probes []Probe `json:"probes"`
}

// Probe is one probe's result in a try.
type Probe struct {
	Name   string `json:"name"`
	OK     bool   `json:"ok"`
	MS     int64  `json:"ms"`
	Detail string `json:"detail,omitempty"`
}

// Pin is hoist pin and hoist unpin.
type Pin struct {
	Result
	ID       string `json:"id"`
	Pinned   bool   `json:"pinned,omitempty"`
	Unpinned bool   `json:"unpinned,omitempty"`
}

// GC is hoist gc.
type GC struct {
	Result
	Skipped          bool     `json:"skipped"`
	Holder           *Lock    `json:"holder,omitempty"`
	NothingToCollect bool     `json:"nothing_to_collect"`
	DryRun           bool     `json:"dry_run"`
	Kept             []Kept   `json:"kept"`
	Deleted          []string `json:"deleted"`
	Swept            []string `json:"swept"`
}

// Kept is a runtime gc kept, and why.
type Kept struct {
	ID  string `json:"id"`
	Why string `json:"why"`
}

// Doctor is hoist doctor.
type Doctor struct {
	Result
	Target  Target  `json:"target"`
	Checks  []Check `json:"checks"`
	Summary Summary `json:"summary"`
	Lock    *Lock   `json:"lock,omitempty"`
}

// Target is the target as resolved, before connecting: Identity lists the
// identity files to offer, Missing those of them that do not exist, Agent
// the ssh-agent socket whose keys are offered too, and Key the identity the
// host accepted ("-" until connected).
type Target struct {
	User     string   `json:"user"`
	Host     string   `json:"host"`
	Port     string   `json:"port"`
	Jump     string   `json:"jump"`
	Identity string   `json:"identity"`
	Missing  []string `json:"missing"`
	Agent    string   `json:"agent"`
	Key      string   `json:"key"`
}

// Check is one item of the doctor's checklist. Value is one word for
// scripts; Detail says it for people; Fix, for an item that is not ok,
// what to do.
type Check struct {
	Name   string `json:"name"`
	Status string `json:"status"`
	Value  string `json:"value"`
	Detail string `json:"detail"`
	Fix    string `json:"fix,omitempty"`
}

// Summary counts the checks by status.
type Summary struct {
	OK   int `json:"ok"`
	Warn int `json:"warn"`
	Fail int `json:"fail"`
}

// Rollout is one host of hoist rollout.
type Rollout struct {
	Result
	Rollout string `json:"rollout"`
	// State: switched, reverted, unchanged, skipped, failed, in-doubt or
	// unhealthy.
	State string `json:"state"`
	From  string `json:"from"`
	To    string `json:"to"`
	// Batch is the batch the host was switched in, from 1; 0: none.
	Batch  int     `json:"batch"`
	Health *Health `json:"health,omitempty"`
	Revert *Health `json:"revert,omitempty"`
	// Settled are earlier (or, for a resume, this) rollouts' unfinished
	// records the host settled by the local rule.
	Settled []Settle `json:"settled,omitempty"`
}

// RolloutStatus is one host of hoist rollout status.
type RolloutStatus struct {
	Result
	// Rollout is the rollout read ("" when none is recorded there).
	Rollout string `json:"rollout"`
	// State: no-record, journal, prepared, switched, in-doubt, healthy,
	// reverted, unhealthy, overridden or unfinished.
	State   string          `json:"state"`
	Current string          `json:"current"`
	Records []RolloutRecord `json:"records"`
}

// RolloutRecord is one record of a rollout on a host: its own, or a
// revert's.
type RolloutRecord struct {
	ID       string `json:"id"`
	Mode     string `json:"mode"`
	From     string `json:"from"`
	To       string `json:"to"`
	Since    string `json:"since"`
	RevertOf string `json:"revert_of"`
	// Parts: each file ("file") and link (its value) of the record.
	Parts   map[string]string `json:"parts"`
	Trouble string            `json:"trouble"`
}
