package shellcmd

import "slices"

// Op is one host command of the protocol: the shell function h_op_<Name>
// and what it may say. The functions it ships are found from its code
// ([Op.Functions]); the verdicts and error codes are declared here, and a
// test reads the shell files to check that they are exactly those the
// operation's functions can say.
type Op struct {
	Name string
	// Sends are the verdicts it may say on the way; Ends are those it may
	// end with. A reply with any other verb is ErrVerdict.
	Sends, Ends []Verb
	// Codes are the ERROR codes it may end with (each one row of
	// [codes], with the package that reads it and its sentence).
	Codes []Code
	// NoSetup runs h_op_<Name> without h_setup first, which ends a command
	// on a store that fails its path checks: for the doctor, which reports
	// those checks instead of stopping on them.
	NoSetup bool
}

// main is the lines that run op, after its definitions.
func (op *Op) main() string {
	if op.NoSetup {
		return "h_op_" + op.Name + "\n"
	}
	return "h_setup\nh_op_" + op.Name + "\n"
}

// Allows reports whether op may say v (LOADED and FACTS belong to every
// command).
func (op *Op) Allows(v Verb) bool {
	return v == VerbLoaded || v == VerbFacts || slices.Contains(op.Sends, v) || slices.Contains(op.Ends, v)
}

// EndsWith reports whether op may end with v.
func (op *Op) EndsWith(v Verb) bool { return slices.Contains(op.Ends, v) }

// The lock's waiting verdicts, what releasing may say, and the error codes
// of taking the lock.
var (
	waiting = []Verb{VerbHeld, VerbStolen, VerbAcquired}
	// Kept: a command under a manual hold leaves the hold held.
	releasing = []Verb{VerbReleased, VerbLost, VerbNotHeld, VerbKept}
	// Every operation starts with the path checks (h_setup).
	setupCodes = []Code{CodeNoHome, CodePath}
	takeCodes  = []Code{CodeNoHome, CodePath, CodeMkdir, CodeLockPath, CodeRecord, CodePermission}
	// A health-checked switch's verdicts (sh/health.sh).
	health = []Verb{VerbPrepared, VerbRestarted, VerbProbe, VerbProbed, VerbTry, VerbHealthy, VerbUnhealthy, VerbReverted}
	// What settling an unfinished record may say (sh/journal.sh), for a
	// command that switches current without a sequence of its own (push
	// --activate): the record's exec checks' verdicts, then SETTLED.
	settleCodes = []Code{CodeJournal, CodeInDoubt, CodeUnhealthy}
	settling    = []Verb{VerbProbe, VerbProbed, VerbTry, VerbSettled}
)

func join[T any](lists ...[]T) []T {
	var out []T
	for _, l := range lists {
		out = append(out, l...)
	}
	return out
}

// The operations.
var (
	OpStatus = &Op{Name: "status", Sends: []Verb{VerbDebris, VerbUnfinished},
		Ends: []Verb{VerbNoStore, VerbFree, VerbLock, VerbError}, Codes: join(setupCodes, []Code{CodeLockPath})}
	OpAcquire = &Op{Name: "acquire", Sends: waiting,
		Ends: []Verb{VerbHolding, VerbBusy, VerbNoStore, VerbAbandoned, VerbLost, VerbError}, Codes: takeCodes}
	OpRun = &Op{Name: "run", Sends: join(waiting, []Verb{VerbUnfinished, VerbStarted, VerbFenced}, releasing),
		Ends: []Verb{VerbExit, VerbLost, VerbBusy, VerbAbandoned, VerbError}, Codes: join(takeCodes, []Code{CodeRelease})}
	OpRelease = &Op{Name: "release", Ends: join(releasing, []Verb{VerbError}), Codes: join(setupCodes, []Code{CodeRelease})}
	OpBreak   = &Op{Name: "break", Ends: []Verb{VerbBroken, VerbNotStale, VerbNotOwner, VerbFree, VerbNoStore, VerbError},
		Codes: join(setupCodes, []Code{CodeLockPath, CodeChanged, CodePermission})}

	OpPushCheck = &Op{Name: "pushcheck", Sends: join(waiting, settling, []Verb{VerbActivated, VerbNotFound, VerbResume, VerbReused}, releasing),
		Ends:  []Verb{VerbPresent, VerbStage, VerbLost, VerbBusy, VerbAbandoned, VerbError},
		Codes: join(takeCodes, settleCodes, []Code{CodeRelease, CodeSwitch, CodeForeign, CodeCollision, CodeSpace, CodeStage, CodeNoSHA256})}
	OpPromote = &Op{Name: "promote", Sends: join(waiting, settling, []Verb{VerbPresent, VerbPromoted, VerbActivated, VerbNotFound}),
		Ends:  join(releasing, []Verb{VerbCorrupt, VerbBusy, VerbAbandoned, VerbError}),
		Codes: join(takeCodes, settleCodes, []Code{CodeRelease, CodeSwitch, CodeForeign, CodeCollision, CodeSpace, CodeStage, CodeNoSHA256, CodeUnpack, CodePromote})}
	// OpStream is OpPromote begun with the upload (stream.sh): it may
	// also give the stage back (YIELDED).
	OpStream = &Op{Name: "stream", Sends: join(waiting, settling, []Verb{VerbStreaming, VerbPresent, VerbPromoted, VerbActivated, VerbNotFound}),
		Ends:  join(releasing, []Verb{VerbCorrupt, VerbYielded, VerbBusy, VerbAbandoned, VerbError}),
		Codes: join(takeCodes, settleCodes, []Code{CodeRelease, CodeSwitch, CodeForeign, CodeCollision, CodeSpace, CodeStage, CodeNoSHA256, CodeUnpack, CodePromote})}
	// OpPushStream is OpPushCheck and, where it staged the runtime without
	// taking the lock, OpStream in the same command (push.sh).
	OpPushStream = &Op{Name: "pushstream", Sends: join(waiting, settling, []Verb{VerbActivated, VerbNotFound, VerbResume, VerbReused, VerbStage, VerbStreaming, VerbPresent, VerbPromoted}, releasing),
		Ends:  join(releasing, []Verb{VerbPresent, VerbStage, VerbCorrupt, VerbYielded, VerbBusy, VerbAbandoned, VerbError}),
		Codes: join(takeCodes, settleCodes, []Code{CodeRelease, CodeSwitch, CodeForeign, CodeCollision, CodeSpace, CodeStage, CodeNoSHA256, CodeUnpack, CodePromote})}
	OpRefresh = &Op{Name: "refresh", Ends: []Verb{VerbRefreshed, VerbLost, VerbNotHeld, VerbNoStore, VerbError}, Codes: setupCodes}
	OpRuns    = &Op{Name: "runs", Sends: []Verb{VerbRun}, Ends: []Verb{VerbListed, VerbError}, Codes: setupCodes}
	OpLogs    = &Op{Name: "logs", Sends: []Verb{VerbCut}, Ends: []Verb{VerbRunState, VerbNoRun, VerbError}, Codes: setupCodes}

	// OpFetch: a push through a registry, between the first command and
	// the promotion (fetch.sh).
	OpFetch = &Op{Name: "fetch", Sends: []Verb{VerbFetched, VerbNoFetch}, Ends: []Verb{VerbFetchEnd, VerbError}, Codes: join(setupCodes, []Code{CodeStage})}
	// OpReach is the doctor's registry item: read-only, and run without
	// h_setup (it needs no store).
	OpReach     = &Op{Name: "reach", Ends: []Verb{VerbCheck, VerbError}, Codes: setupCodes, NoSetup: true}
	OpDropStage = &Op{Name: "dropstage", Ends: []Verb{VerbDropped, VerbError}, Codes: setupCodes}
	OpKeepStage = &Op{Name: "keepstage", Ends: []Verb{VerbResumable, VerbError}, Codes: setupCodes}
	OpList      = &Op{Name: "list", Sends: []Verb{VerbRuntime, VerbBad, VerbWitnessed, VerbUnfinished}, Ends: []Verb{VerbListed, VerbNoStore, VerbError}, Codes: setupCodes}
	OpHistory   = &Op{Name: "history", Sends: []Verb{VerbHistory}, Ends: []Verb{VerbListed, VerbNoStore, VerbError}, Codes: setupCodes}
	OpActivate  = &Op{Name: "activate", Sends: join(waiting, health, []Verb{VerbActivated, VerbNotFound, VerbSettled}),
		Ends: join(releasing, []Verb{VerbNotFound, VerbNoStore, VerbBusy, VerbAbandoned, VerbError}), Codes: join(takeCodes, settleCodes, []Code{CodeRelease, CodeSwitch, CodeBad})}
	OpRollback = &Op{Name: "rollback", Sends: join(waiting, health, []Verb{VerbActivated, VerbNoPrevious, VerbNotFound, VerbSettled}),
		Ends: join(releasing, []Verb{VerbNoPrevious, VerbNotFound, VerbNoStore, VerbBusy, VerbAbandoned, VerbError}), Codes: join(takeCodes, settleCodes, []Code{CodeRelease, CodeSwitch, CodeBad})}
	OpPin = &Op{Name: "pin", Sends: join(waiting, []Verb{VerbPinned, VerbUnpinned, VerbNotFound}),
		Ends: join(releasing, []Verb{VerbNotFound, VerbNoStore, VerbBusy, VerbAbandoned, VerbError}), Codes: join(takeCodes, []Code{CodeRelease, CodePin})}
	OpGC = &Op{Name: "gc", Sends: join(waiting, []Verb{VerbKeep, VerbDelete, VerbSweep, VerbNoProc}),
		Ends: join(releasing, []Verb{VerbNoStore, VerbBusy, VerbAbandoned, VerbError}), Codes: join(takeCodes, []Code{CodeRelease, CodeGC})}
	// OpRStatus is read-only and takes no lock: the records of a rollout
	// (sh/records.sh).
	OpRStatus = &Op{Name: "rstatus", Sends: []Verb{VerbRecord, VerbRPart, VerbJournal, VerbROdd, VerbRWitness}, Ends: []Verb{VerbRStatus, VerbNoStore, VerbError}, Codes: setupCodes}
	// OpRollout is one host's part in an --atomic rollout, OpResume the
	// settling of one rollout's record (sh/rollout.sh).
	OpRollout = &Op{Name: "rollout", Sends: join(waiting, health, []Verb{VerbActivated, VerbNotFound, VerbVoted, VerbDecided, VerbInDoubt, VerbDone, VerbSettled}),
		Ends:  join(releasing, []Verb{VerbNotFound, VerbNoStore, VerbBusy, VerbAbandoned, VerbError}),
		Codes: join(takeCodes, settleCodes, []Code{CodeRelease, CodeSwitch, CodeBad})}
	// The resume carries the probe loop for the local rule's checks,
	// which runs it quietly (no PROBE, PROBED or TRY is said there).
	OpResume = &Op{Name: "resume", Sends: join(waiting, []Verb{VerbActivated, VerbNotFound, VerbWitness, VerbPlan, VerbNoRecord, VerbDecided, VerbInDoubt, VerbDone, VerbSettled,
		VerbProbe, VerbProbed, VerbTry}),
		Ends:  join(releasing, []Verb{VerbPlan, VerbNoRecord, VerbNoStore, VerbBusy, VerbAbandoned, VerbError}),
		Codes: join(takeCodes, settleCodes, []Code{CodeRelease, CodeSwitch})}
	// OpRoot is read-only: where the store's root is on the host.
	OpRoot = &Op{Name: "root", Ends: []Verb{VerbRoot, VerbError}, Codes: setupCodes}
	// OpDoctor is read-only; it runs without h_setup (NoSetup) and
	// reports the path checks, whose ERROR it captures, as CHECK lines.
	// ERROR is listed for h_setup, which every command carries.
	OpDoctor = &Op{Name: "doctor", Sends: []Verb{VerbCheck, VerbNoStore, VerbFree, VerbLock, VerbDebris, VerbUnfinished, VerbError}, Ends: []Verb{VerbDoctor, VerbError},
		Codes: join(setupCodes, []Code{CodeLockPath}), NoSetup: true}
)

// Ops lists every operation.
var Ops = []*Op{OpStatus, OpAcquire, OpRun, OpRelease, OpBreak, OpRefresh, OpRuns, OpLogs, OpPushCheck, OpPushStream, OpPromote, OpStream, OpFetch, OpReach,
	OpDropStage, OpKeepStage, OpList, OpHistory, OpActivate, OpRollback, OpPin, OpGC, OpDoctor, OpRoot, OpRStatus, OpRollout, OpResume}
