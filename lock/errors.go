package lock

import (
	"errors"
	"fmt"
	"strings"

	"github.com/hoistdev/hoist/shellcmd"
)

var (
	// ErrBusy: the lock stayed held for the whole wait. See [BusyError].
	ErrBusy = errors.New("store lock is busy")
	// ErrNoStore: TryAcquire found no store, and did not create one.
	ErrNoStore = errors.New("nothing to lock: the store does not exist")
	// ErrLost: the lock's token is no longer ours; someone took it.
	ErrLost = errors.New("lock lost")
	// ErrNotHeld: there is no lock to release or break.
	ErrNotHeld = errors.New("the store lock is not held")
	// ErrNotStealable: Break without force found a lock no rule lets anyone take.
	ErrNotStealable = errors.New("the lock is held and neither stale nor from a previous boot")
	// ErrNotOwner: Break with force found a lock with another token.
	ErrNotOwner = errors.New("the lock has another token")
	// ErrNotHolder: a command under a manual hold found, before it did
	// anything, that the hold's token is not this store's lock. See
	// [NotHolderError].
	ErrNotHolder = errors.New("not the token of this store's lock")
	// ErrAbandoned: the host gave up because this client left or asked to
	// stop before the lock was taken (or before the client confirmed it).
	ErrAbandoned = errors.New("the host stopped waiting for the lock")
	// ErrLockPath: the lock path is a file or a symlink, or holds what hoist
	// does not make; it is left untouched.
	ErrLockPath = errors.New("the lock path is not a lock hoist made; refusing to touch it")
	// ErrUnsafePath: a directory of the store is a symlink, not a
	// directory, another user's, writable by others, or unreadable; nothing
	// was done.
	ErrUnsafePath = errors.New("a store directory failed the safety checks")
)

// BusyError is returned when the lock stayed held for the whole wait.
type BusyError struct {
	// Holder describes the lock as last seen.
	Holder State
}

func (e *BusyError) Error() string { return "store lock is busy: held by " + e.Holder.Describe() }
func (e *BusyError) Unwrap() error { return ErrBusy }

// LostError is returned when our token no longer holds the lock: another
// holder took it, it was removed, or its lease ran out before it was renewed.
type LostError struct {
	// Holder describes the lock as it is now, when there is one.
	Holder State
	// Expired: the record is still ours, but its lease ran out before it
	// was renewed, so a waiter may have judged it stale: it is not renewed.
	Expired bool
}

func (e *LostError) Error() string {
	switch {
	case e.Expired:
		return fmt.Sprintf("lock lost: its lease (%s) ran out before it was renewed", e.Holder.Lease)
	case !e.Holder.Locked:
		return "lock lost: the token does not hold it"
	}
	return "lock lost: now held by " + e.Holder.Describe()
}
func (e *LostError) Unwrap() error { return ErrLost }

// NotHolderError is returned when a command under a manual hold (Lock.Hold,
// hoist's --token) finds, in its first host command and before it does
// anything, that the token is not the one of this store's lock: a token of
// another store, a mistyped one, or a hold released or taken over long ago.
// Nothing was done. A hold whose own lease ran out is a *LostError.
type NotHolderError struct {
	Token string
	// Holder describes the lock as it is now, when there is one.
	Holder State
}

func (e *NotHolderError) Error() string {
	if !e.Holder.Locked {
		return fmt.Sprintf("%s is not the token of this store's lock: the store is not locked", e.Token)
	}
	return fmt.Sprintf("%s is not the token of this store's lock, which is held by %s", e.Token, e.Holder.Describe())
}
func (e *NotHolderError) Unwrap() error { return ErrNotHolder }

// HostError is an ERROR verdict: the host could not do what was asked, and
// says so with a code (shellcmd.Op lists each operation's codes) and a
// detail. The lock's codes read as sentences here ([Codes]); package store
// reads its own.
type HostError struct {
	Code   string
	Detail string
}

// hostError reads an ERROR verdict.
func hostError(v shellcmd.Verdict) *HostError {
	code, text := v.Failure()
	return &HostError{Code: code, Detail: text}
}

// pathProblems says what each h_pathok problem means, and what to do.
var pathProblems = map[string]string{
	"symlink":      "is a symlink; hoist never follows one out of the store: replace it with a real directory",
	"notdir":       "is not a directory: move it away, or choose another --root",
	"owner":        "belongs to another user: it must be owned by the login or by root (chown it, or choose another --root)",
	"writable":     "is writable by others, so anyone on the host could change what hoist installs: chmod o-w it",
	"unreadable":   "cannot be read by the login: fix its permissions",
	"unsearchable": "cannot be searched by the login, so hoist cannot tell what is in it: fix its permissions",
	"acl":          "has an ACL, which could let others write to it and which hoist cannot check: remove it (setfacl -b), or use plain modes",
	"nosticky":     "is writable by its group but has no sticky bit, so one member could swap another's scratch directory: chmod +t it",
}

// lockCodes are the lock's error codes and their sentences.
var lockCodes = map[string]func(detail string) string{
	"nohome": func(string) string {
		return "HOME is not set on the host, so a ~/ root cannot be resolved; pass an absolute --root"
	},
	"path": func(d string) string {
		problem, p, _ := strings.Cut(d, " ")
		if what, ok := pathProblems[problem]; ok {
			return p + " " + what
		}
		return "unsafe store path: " + d
	},
	"mkdir": func(d string) string {
		return "cannot create the store: " + d + "; check --root and its permissions"
	},
	"record": func(d string) string {
		return "cannot write the lock's owner record: " + d + "; check free space and permissions"
	},
	"lockpath": func(d string) string {
		what, p, _ := strings.Cut(d, " ")
		switch what {
		case "symlink":
			return p + " is a symlink, not the lock directory; hoist never follows one and touched nothing: remove it by hand if it is not meant to be there"
		case "file":
			return p + " is a file, not the lock directory; hoist touched nothing: remove it by hand if it is not meant to be there"
		}
		return p + " is in the lock directory but hoist never puts it there, so the lock is not hoist's; hoist touched nothing: remove it by hand if it is not meant to be there"
	},
	"release": func(d string) string {
		return "the lock is ours but its record could not be moved out (" + d + "); check permissions on the store"
	},
	"permission": func(d string) string {
		return "the lock could not be taken although a rule allows it: " + d + "; the login may not write the lock's directory (in a store a team shares, its directories need group write)"
	},
	"changed": func(string) string {
		return "the lock changed while it was being broken, and was left alone; run hoist lock status"
	},
}

// Codes lists the error codes package lock reads.
func Codes() []string {
	out := make([]string, 0, len(lockCodes))
	for c := range lockCodes {
		out = append(out, c)
	}
	return out
}

func (e *HostError) Error() string {
	if f, ok := lockCodes[e.Code]; ok {
		return shellcmd.Printable(f(e.Detail))
	}
	return shellcmd.Printable(strings.TrimSpace("host error: " + e.Code + " " + e.Detail))
}

// Unwrap maps lockpath to ErrLockPath and path to ErrUnsafePath.
func (e *HostError) Unwrap() error {
	switch e.Code {
	case "lockpath":
		return ErrLockPath
	case "path":
		return ErrUnsafePath
	}
	return nil
}

func unexpected(op string, r fmt.Stringer) error {
	return fmt.Errorf("%s: unexpected reply %q from the host", op, shellcmd.Printable(r.String()))
}
