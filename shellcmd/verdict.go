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
	// fields are the space-separated fields after the verb, as [protocol]
	// names them; the last is the rest of the line. An ERROR's are its
	// code and, when there is one, its text. The readers (replies.go) read
	// them by name.
	fields []string
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
	v.fields = strings.SplitN(rest, " ", n)
	if spec.lastOptional && len(v.fields) == n && v.fields[n-1] == "" {
		v.fields = v.fields[:n-1] // ERROR code, with no text
	}
	if len(v.fields) != n && !(spec.lastOptional && len(v.fields) == n-1) || hasEmpty(v.fields) {
		return Verdict{}, fmt.Errorf("%w: %q", ErrVerdict, text)
	}
	if v.Verb == VerbExit {
		if _, err := strconv.Atoi(v.fields[0]); err != nil {
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

func (v Verdict) String() string {
	return strings.TrimSpace(string(v.Verb) + " " + strings.Join(v.fields, " "))
}
