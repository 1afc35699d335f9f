package shellcmd

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

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
// verbs ([protocol]) with their field counts.
func ParseVerdict(text string) (Verdict, error) {
	verb, rest, _ := strings.Cut(text, " ")
	spec, ok := specs[Verb(verb)]
	if !ok {
		return Verdict{}, fmt.Errorf("%w: %q", ErrVerdict, text)
	}
	v := Verdict{Verb: spec.verb}
	n := len(spec.fields)
	if n == 0 {
		if rest != "" {
			return Verdict{}, fmt.Errorf("%w: %q", ErrVerdict, text)
		}
		return v, nil
	}
	v.Fields = strings.SplitN(rest, " ", n)
	if spec.lastOptional && len(v.Fields) == n && v.Fields[n-1] == "" {
		v.Fields = v.Fields[:n-1] // ERROR code, with no text
	}
	if len(v.Fields) != n && !(spec.lastOptional && len(v.Fields) == n-1) || hasEmpty(v.Fields) {
		return Verdict{}, fmt.Errorf("%w: %q", ErrVerdict, text)
	}
	if v.Verb == VerbExit {
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
