package store

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/hoistdev/hoist/lock"
	"github.com/hoistdev/hoist/shellcmd"
)

// AmbiguousError is a runtime reference that matches several runtimes.
type AmbiguousError struct {
	Ref        string
	Candidates []string // ids, newest first
}

func (e *AmbiguousError) Error() string {
	return fmt.Sprintf("%q matches %d runtimes: %s; give more of the id", e.Ref, len(e.Candidates), strings.Join(e.Candidates, ", "))
}

// Resolve finds the runtime ref names among rts (as List returns them,
// newest first): a full id; else a name, meaning the newest runtime of that
// name; else a prefix of exactly one id. An unknown ref is ErrNotFound, a
// prefix of several ids an *AmbiguousError listing them.
func Resolve(rts []Runtime, ref string) (string, error) {
	for _, rt := range rts {
		if rt.ID == ref {
			return rt.ID, nil
		}
	}
	for _, rt := range rts {
		if rt.Name == ref {
			return rt.ID, nil
		}
	}
	var ids []string
	for _, rt := range rts {
		if strings.HasPrefix(rt.ID, ref) {
			ids = append(ids, rt.ID)
		}
	}
	switch {
	case ref == "" || len(ids) == 0:
		return "", fmt.Errorf("%w: nothing is called %q", ErrNotFound, ref)
	case len(ids) > 1:
		return "", &AmbiguousError{Ref: ref, Candidates: ids}
	}
	return ids[0], nil
}

// Resolve finds the runtime ref names on the host (see the function
// Resolve), with one read-only host command. A host without a store is
// ErrNoStore.
func (s *Store) Resolve(ctx context.Context, ref string) (string, error) {
	l, err := s.Listing(ctx)
	switch {
	case err != nil:
		return "", err
	case l.NoStore:
		return "", ErrNoStore
	}
	return Resolve(l.Runtimes, ref)
}

var idRE = regexp.MustCompile(`-[0-9a-f]{12}$`)

// ByRef runs do with the id ref names and returns that id. A ref shaped
// like an id is tried as one first, so that the usual case (a script that
// knows its id) costs no listing; only when the host has no runtime of that
// id is it resolved (Resolve), as a name or a prefix, and do run again.
func (s *Store) ByRef(ctx context.Context, ref string, do func(id string) error) (string, error) {
	if ValidName(ref) && idRE.MatchString(ref) {
		if err := do(ref); !errors.Is(err, ErrNotFound) {
			return ref, err
		}
	}
	id, err := s.Resolve(ctx, ref)
	if err != nil {
		return "", err
	}
	return id, do(id)
}

// Switched is one switch of current, as the host's history keeps it.
type Switched struct {
	When time.Time
	// Action is what switched it: push (with --activate), activate or
	// rollback.
	Action   string
	From, To string // runtime ids; From is "" when nothing was current
	// Who, Command and Version are the client's, from its lock record.
	Who, Command, Version string
}

// History returns the last switches of current on the host (up to 200),
// oldest first, from <root>/history, which the host appends to under the
// lock. It changes nothing; a missing store has no history.
func (s *Store) History(ctx context.Context) ([]Switched, error) {
	r, err := s.wire().Exec(ctx, shellcmd.Render(shellcmd.OpHistory, s.wire().Params()), lock.Events{}, nil)
	if err != nil {
		return nil, err
	}
	var out []Switched
	for _, v := range r.Verdicts {
		if v.Verb != shellcmd.VerbHistory {
			continue
		}
		l := v.History()
		out = append(out, Switched{When: l.When, Action: l.Action, From: l.From, To: l.To,
			Who: l.Who.Who, Command: l.Who.Command, Version: l.Who.Version})
	}
	switch r.Last().Verb {
	case shellcmd.VerbListed, shellcmd.VerbNoStore:
		return out, nil
	}
	return nil, s.err(r, "history")
}
