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
	// Codes are the ERROR codes it may end with. Package lock maps the
	// lock's codes to errors, package store the store's.
	Codes []string
}

// Allows reports whether op may say v (LOADED and FACTS belong to every
// command).
func (op *Op) Allows(v Verb) bool {
	return v == Loaded || v == FactsVerb || slices.Contains(op.Sends, v) || slices.Contains(op.Ends, v)
}

// EndsWith reports whether op may end with v.
func (op *Op) EndsWith(v Verb) bool { return slices.Contains(op.Ends, v) }

// The lock's waiting verdicts, what releasing may say, and the error codes
// of taking the lock.
var (
	waiting = []Verb{Held, Stolen, Acquired}
	// Kept: a command under a manual hold leaves the hold held.
	releasing = []Verb{Released, Lost, NotHeld, Kept}
	// Every operation starts with the path checks (h_setup).
	setupCodes = []string{"nohome", "path"}
	takeCodes  = []string{"nohome", "path", "mkdir", "lockpath", "record", "permission"}
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
	OpStatus = &Op{Name: "status", Sends: []Verb{Debris},
		Ends: []Verb{NoStore, Free, Lock, Error}, Codes: join(setupCodes, []string{"lockpath"})}
	OpAcquire = &Op{Name: "acquire", Sends: waiting,
		Ends: []Verb{Holding, Busy, NoStore, Abandoned, Lost, Error}, Codes: takeCodes}
	OpRun = &Op{Name: "run", Sends: join(waiting, []Verb{Started, Fenced}, releasing),
		Ends: []Verb{Exit, Lost, Busy, Abandoned, Error}, Codes: join(takeCodes, []string{"release"})}
	OpRelease = &Op{Name: "release", Ends: join(releasing, []Verb{Error}), Codes: join(setupCodes, []string{"release"})}
	OpBreak   = &Op{Name: "break", Ends: []Verb{Broken, NotStale, NotOwner, Free, NoStore, Error},
		Codes: join(setupCodes, []string{"lockpath", "changed", "permission"})}

	OpPushCheck = &Op{Name: "pushcheck", Sends: join(waiting, []Verb{Activated, NotFound, Resume, Have}, releasing),
		Ends:  []Verb{Present, Stage, Lost, Busy, Abandoned, Error},
		Codes: join(takeCodes, []string{"release", "switch", "foreign", "collision", "space", "stage", "nosha256"})}
	OpPromote = &Op{Name: "promote", Sends: join(waiting, []Verb{Present, Promoted, Activated, NotFound}),
		Ends:  join(releasing, []Verb{Corrupt, Busy, Abandoned, Error}),
		Codes: join(takeCodes, []string{"release", "switch", "foreign", "collision", "space", "stage", "nosha256", "unpack", "promote"})}
	OpRefresh = &Op{Name: "refresh", Ends: []Verb{Refreshed, Lost, NotHeld, NoStore, Error}, Codes: setupCodes}
	OpRuns    = &Op{Name: "runs", Sends: []Verb{RunLine}, Ends: []Verb{Listed, Error}, Codes: setupCodes}
	OpLogs    = &Op{Name: "logs", Sends: []Verb{Cut}, Ends: []Verb{RunState, NoRun, Error}, Codes: setupCodes}

	OpDropStage = &Op{Name: "dropstage", Ends: []Verb{Dropped, Error}, Codes: setupCodes}
	OpKeepStage = &Op{Name: "keepstage", Ends: []Verb{Resumable, Error}, Codes: setupCodes}
	OpList      = &Op{Name: "list", Sends: []Verb{Runtime}, Ends: []Verb{Listed, NoStore, Error}, Codes: setupCodes}
	OpHistory   = &Op{Name: "history", Sends: []Verb{History}, Ends: []Verb{Listed, NoStore, Error}, Codes: setupCodes}
	OpActivate  = &Op{Name: "activate", Sends: join(waiting, []Verb{Activated, NotFound}),
		Ends: join(releasing, []Verb{NotFound, NoStore, Busy, Abandoned, Error}), Codes: join(takeCodes, []string{"release", "switch"})}
	OpRollback = &Op{Name: "rollback", Sends: join(waiting, []Verb{Activated, NoPrevious, NotFound}),
		Ends: join(releasing, []Verb{NoPrevious, NotFound, NoStore, Busy, Abandoned, Error}), Codes: join(takeCodes, []string{"release", "switch"})}
	OpPin = &Op{Name: "pin", Sends: join(waiting, []Verb{Pinned, Unpinned, NotFound}),
		Ends: join(releasing, []Verb{NotFound, NoStore, Busy, Abandoned, Error}), Codes: join(takeCodes, []string{"release", "pin"})}
	OpGC = &Op{Name: "gc", Sends: join(waiting, []Verb{Keep, Delete, Sweep, NoProc}),
		Ends: join(releasing, []Verb{NoStore, Busy, Abandoned, Error}), Codes: join(takeCodes, []string{"release", "gc"})}
	// OpRoot is read-only: where the store's root is on the host.
	OpRoot = &Op{Name: "root", Ends: []Verb{RootVerb, Error}, Codes: setupCodes}
	// OpDoctor is read-only; it runs without h_setup (its Main is
	// h_op_doctor alone) and reports the path checks, whose ERROR it
	// captures, as CHECK lines. ERROR is listed for h_setup, which every
	// command carries.
	OpDoctor = &Op{Name: "doctor", Sends: []Verb{Check, NoStore, Free, Lock, Debris, Error}, Ends: []Verb{Doctor, Error},
		Codes: join(setupCodes, []string{"lockpath"})}
)

// Ops lists every operation.
var Ops = []*Op{OpStatus, OpAcquire, OpRun, OpRelease, OpBreak, OpRefresh, OpRuns, OpLogs, OpPushCheck, OpPromote,
	OpDropStage, OpKeepStage, OpList, OpHistory, OpActivate, OpRollback, OpPin, OpGC, OpDoctor, OpRoot}
