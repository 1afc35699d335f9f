package shellcmd

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Verb is the first word of a protocol line.
type Verb string

// The verbs of the protocol; docs/protocol.md and docs/store.md say what each
// means, and [Ops] which operation may send which.
const (
	Loaded    Verb = "LOADED"
	FactsVerb Verb = "FACTS"
	NoStore   Verb = "NOSTORE"
	Free      Verb = "FREE"
	Lock      Verb = "LOCK"
	Debris    Verb = "DEBRIS"
	Held      Verb = "HELD"
	Stolen    Verb = "STOLEN"
	Busy      Verb = "BUSY"
	Acquired  Verb = "ACQUIRED"
	Holding   Verb = "HOLDING"
	Abandoned Verb = "ABANDONED"
	Started   Verb = "STARTED"
	Released  Verb = "RELEASED"
	Lost      Verb = "LOST"
	NotHeld   Verb = "NOTHELD"
	Exit      Verb = "EXIT"
	Broken    Verb = "BROKEN"
	NotStale  Verb = "NOTSTALE"
	NotOwner  Verb = "NOTOWNER"
	Error     Verb = "ERROR"
	Refreshed Verb = "REFRESHED"
	Kept      Verb = "KEPT"
	Fenced    Verb = "FENCED"
	NoRun     Verb = "NORUN"
	RunLine   Verb = "RUN"
	RunState  Verb = "RUNSTATE"
	Cut       Verb = "CUT"
	// The store's.
	Present    Verb = "PRESENT"
	Stage      Verb = "STAGE"
	Promoted   Verb = "PROMOTED"
	Activated  Verb = "ACTIVATED"
	Corrupt    Verb = "CORRUPT"
	Runtime    Verb = "RT"
	History    Verb = "HIST"
	Listed     Verb = "LISTED"
	NotFound   Verb = "NOTFOUND"
	NoPrevious Verb = "NOPREVIOUS"
	Pinned     Verb = "PINNED"
	Unpinned   Verb = "UNPINNED"
	Keep       Verb = "KEEP"
	Delete     Verb = "DELETE"
	Sweep      Verb = "SWEEP"
	NoProc     Verb = "NOPROC"
	Dropped    Verb = "DROPPED"
	Have       Verb = "HAVE"
	Resume     Verb = "RESUME"
	Resumable  Verb = "RESUMABLE"
	// Where the store's root is (the fleet's look before it works).
	RootVerb Verb = "ROOT"
	// The doctor's: CHECK name status value detail, then DOCTOR.
	Check  Verb = "CHECK"
	Doctor Verb = "DOCTOR"
)

// fieldCount is each verb's number of fields; the last field takes the rest
// of the line (a record, a home directory, a name). ERROR is a code and free
// text.
var fieldCount = map[Verb]int{
	Loaded: 0, FactsVerb: 8, NoStore: 0, Free: 0, Lock: 4, Debris: 1, Held: 2, Stolen: 3,
	Busy: 2, Acquired: 1, Holding: 1, Abandoned: 0, Started: 0, Released: 0, Lost: 1,
	NotHeld: 0, Exit: 1, Broken: 3, NotStale: 2, NotOwner: 2, Error: -1,
	Present: 1, Stage: 2, Promoted: 1, Activated: 2, Corrupt: 1, Runtime: 6, History: 5, Listed: 0,
	NotFound: 1, NoPrevious: 0, Pinned: 1, Unpinned: 1, Keep: 2, Delete: 2, Sweep: 2,
	NoProc: 0, Dropped: 0, Have: 2, Resume: 3, Resumable: 1,
	Refreshed: 1, Kept: 1, Fenced: 0, NoRun: 1, RunLine: 6, RunState: 5, Cut: 2,
	Check: 4, Doctor: 0, RootVerb: 3,
}

// Verdict is one protocol line: a verb and its fields.
type Verdict struct {
	Verb Verb
	// Fields are the space-separated fields after the verb. The last field
	// of a verdict that ends with a record is the rest of the line. An
	// ERROR's fields are its code and, when there is one, its text.
	Fields []string
}

// ErrVerdict reports a protocol line that does not parse, or that the
// operation does not send. It is never read as success: the caller treats
// the outcome as unknown or the lock as held.
var ErrVerdict = errors.New("unrecognized reply from the host")

// ParseVerdict parses the text after the marker. It accepts exactly the known
// verbs with their field counts.
func ParseVerdict(text string) (Verdict, error) {
	verb, rest, _ := strings.Cut(text, " ")
	n, ok := fieldCount[Verb(verb)]
	if !ok {
		return Verdict{}, fmt.Errorf("%w: %q", ErrVerdict, text)
	}
	v := Verdict{Verb: Verb(verb)}
	switch {
	case n < 0: // ERROR code [text]
		if rest == "" {
			return Verdict{}, fmt.Errorf("%w: %q", ErrVerdict, text)
		}
		code, detail, _ := strings.Cut(rest, " ")
		v.Fields = []string{code}
		if detail != "" {
			v.Fields = append(v.Fields, detail)
		}
		return v, nil
	case n == 0:
		if rest != "" {
			return Verdict{}, fmt.Errorf("%w: %q", ErrVerdict, text)
		}
		return v, nil
	}
	v.Fields = strings.SplitN(rest, " ", n)
	if len(v.Fields) != n || hasEmpty(v.Fields) {
		return Verdict{}, fmt.Errorf("%w: %q", ErrVerdict, text)
	}
	if v.Verb == Exit {
		if _, err := strconv.Atoi(v.Fields[0]); err != nil {
			return Verdict{}, fmt.Errorf("%w: %q", ErrVerdict, text)
		}
	}
	return v, nil
}

func hasEmpty(fs []string) bool {
	for _, f := range fs {
		if f == "" {
			return true
		}
	}
	return false
}

// Field returns field i, or "" when absent.
func (v Verdict) Field(i int) string {
	if i < len(v.Fields) {
		return v.Fields[i]
	}
	return ""
}

// Age reads an age field: seconds, or -1 when the host could not tell ("-").
func Age(field string) int64 {
	n, err := strconv.ParseInt(field, 10, 64)
	if err != nil || field == "-" {
		return -1
	}
	return n
}

func (v Verdict) String() string {
	return strings.TrimSpace(string(v.Verb) + " " + strings.Join(v.Fields, " "))
}
