package store

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/hoistdev/hoist/lock"
	"github.com/hoistdev/hoist/remote"
	"github.com/hoistdev/hoist/shellcmd"
)

var (
	// ErrCorrupt: the archive on the host does not have the digest of the
	// one sent. The stage was removed; push again.
	ErrCorrupt = errors.New("the upload arrived corrupted (digest mismatch); nothing was installed")
	// ErrStopped: the push was asked to stop during its upload; nothing
	// was installed. The stage stays on the host, and the next push of the
	// runtime resumes the upload (gc removes it after the stale period).
	ErrStopped = errors.New("stopped during the upload; nothing was installed, and the next push of this runtime resumes it")
	// ErrNotFound: no verified runtime has that id on the host.
	ErrNotFound = errors.New("no such runtime on the host")
	// ErrNoStore: activate, rollback or pin found no store on the host;
	// nothing was created.
	ErrNoStore = errors.New("no store on this host yet; push a runtime first")
	// ErrNoPrevious: rollback found no previous runtime to go back to.
	ErrNoPrevious = errors.New("no previous runtime to roll back to")
	// ErrNoProcessCheck: gc could not tell which runtimes processes use
	// (neither /proc nor ps could be read), so it deleted nothing.
	ErrNoProcessCheck = errors.New("cannot tell which runtimes are in use (no readable /proc or ps); nothing was deleted")
	// ErrNoSpace: the host has too little free space for the runtime;
	// nothing was uploaded or unpacked. See [HostError] for the numbers.
	ErrNoSpace = errors.New("not enough free space on the host")
	// ErrIDTaken: runtimes/<id> on the host is not this runtime: another
	// tree whose id shares the first 12 digits of the digest, or something
	// hoist did not make. It is left alone.
	ErrIDTaken = errors.New("the runtime id is taken on the host by something else")
	// ErrStageReplaced: the file the upload opened in the stage is not the
	// archive the push's first command made there: in a store others may
	// rename things in, the stage's name was given to something else.
	// Nothing was written through it, and it is left where it is.
	ErrStageReplaced = errors.New("the stage on the host was not the one the push made when the upload opened it: someone renames entries in the store (its group may write it); nothing was written or removed: push again, and find out who if it happens again")
)

// HostError is an ERROR verdict of a store command, with one of the store's
// codes (the lock's are lock.HostError).
type HostError struct {
	Code   string
	Detail string
}

// storeCodes are the store's error codes and their sentences.
var storeCodes = map[string]func(detail string) string{
	"space": func(d string) string {
		need, free, _ := strings.Cut(d, " ")
		return fmt.Sprintf("not enough free space: the runtime needs %s in the store's filesystem, which has %s free; make room (hoist gc) and push again", kib(need), kib(free))
	},
	"foreign": func(d string) string {
		return d + " exists and hoist did not promote it (it has no mark in .meta); it is left alone: move it away, or push under another --name"
	},
	"collision": func(d string) string {
		id, digest, _ := strings.Cut(d, " ")
		return id + " on the host is another tree whose digest (" + digest + ") shares the id's 12 digits; it is left alone: push under another --name"
	},
	"unpack":   func(d string) string { return "the host could not unpack the upload: " + d },
	"promote":  func(d string) string { return "the host could not promote the runtime: " + d },
	"switch":   func(d string) string { return "the host could not switch current: " + d },
	"stage":    func(d string) string { return "the upload's stage: " + d },
	"pin":      func(d string) string { return "the host could not pin the runtime: " + d },
	"nosha256": func(d string) string { return "the host could not verify the upload: " + d },
	"gc":       func(d string) string { return "gc: " + d },
}

// Codes lists the error codes package store reads.
func Codes() []string {
	out := make([]string, 0, len(storeCodes))
	for c := range storeCodes {
		out = append(out, c)
	}
	return out
}

func (e *HostError) Error() string {
	return shellcmd.Printable(storeCodes[e.Code](e.Detail))
}

// Unwrap maps space to ErrNoSpace, and foreign and collision to ErrIDTaken.
func (e *HostError) Unwrap() error {
	switch e.Code {
	case "space":
		return ErrNoSpace
	case "foreign", "collision":
		return ErrIDTaken
	}
	return nil
}

// err reads the lock's and the store's errors in a reply (lock.Err), giving
// the store's codes their own sentences.
func (s *Store) err(r *remote.Reply, op string) error {
	err := s.l.Err(r, op)
	var he *lock.HostError
	if errors.As(err, &he) {
		if _, ok := storeCodes[he.Code]; ok {
			return &HostError{Code: he.Code, Detail: he.Detail}
		}
	}
	return err
}

func kib(field string) string {
	n, err := strconv.ParseInt(field, 10, 64)
	if err != nil {
		return field + " KiB"
	}
	return fmt.Sprintf("%.1f MiB", float64(n)/1024)
}
