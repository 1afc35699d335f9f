package shellcmd

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Verdict is one protocol line: a verb and its fields.
type Verdict struct {
	Verb string
	// Fields are the space-separated fields after the verb. The last field
	// of a verdict that ends with a record is the rest of the line.
	Fields []string
}

// ErrVerdict reports a protocol line that does not parse. It is never read as
// success: the caller treats the outcome as unknown or the lock as held.
var ErrVerdict = errors.New("unrecognized reply from the host")

// verbs maps each verb to its field count; the last field takes the rest of
// the line. FACTS ends with the home directory, which may contain spaces.
var verbs = map[string]int{
	"FACTS":     4, // boot stat nap home
	"NOSTORE":   0,
	"FREE":      0,
	"LOCK":      3, // age why record
	"HELD":      2, // age record
	"STOLEN":    3, // why age record
	"BUSY":      2, // age record
	"ACQUIRED":  1, // token
	"HOLDING":   1, // token
	"ABANDONED": 0,
	"STARTED":   0,
	"RELEASED":  0,
	"LOST":      1, // record
	"NOTHELD":   0,
	"EXIT":      1, // status
	"BROKEN":    3, // why age record
	"NOTSTALE":  2, // age record
	"NOTOWNER":  2, // age record
	"ERROR":     -1,
	// The store.
	"PRESENT":    1, // id
	"STAGE":      1, // id
	"PROMOTED":   1, // id
	"ACTIVATED":  2, // id previous
	"CORRUPT":    1, // sha256 found
	"RT":         5, // id promoted size flags name
	"LISTED":     0,
	"NOTFOUND":   1, // id
	"NOPREVIOUS": 0,
	"PINNED":     1, // id
	"UNPINNED":   1, // id
	"KEEP":       2, // id why
	"DELETE":     2, // id plan|done
	"SWEEP":      2, // name plan|done
	"NOPROC":     0,
	"DROPPED":    0,
}

// ParseVerdict parses the text after the marker. It accepts exactly the known
// verbs with their field counts.
func ParseVerdict(text string) (Verdict, error) {
	verb, rest, _ := strings.Cut(text, " ")
	n, ok := verbs[verb]
	if !ok {
		return Verdict{}, fmt.Errorf("%w: %q", ErrVerdict, text)
	}
	v := Verdict{Verb: verb}
	switch {
	case n < 0: // ERROR: free text
		if rest != "" {
			v.Fields = []string{rest}
		}
		return v, nil
	case n == 0:
		if rest != "" {
			return Verdict{}, fmt.Errorf("%w: %q", ErrVerdict, text)
		}
		return v, nil
	}
	v.Fields = strings.SplitN(rest, " ", n)
	if len(v.Fields) != n || slicesHasEmpty(v.Fields) {
		return Verdict{}, fmt.Errorf("%w: %q", ErrVerdict, text)
	}
	if verb == "EXIT" {
		if _, err := strconv.Atoi(v.Fields[0]); err != nil {
			return Verdict{}, fmt.Errorf("%w: %q", ErrVerdict, text)
		}
	}
	return v, nil
}

func slicesHasEmpty(fs []string) bool {
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
	return strings.TrimSpace(v.Verb + " " + strings.Join(v.Fields, " "))
}
