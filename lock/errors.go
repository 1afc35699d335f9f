package lock

import (
	"errors"
	"fmt"
	"strings"
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
	// ErrAbandoned: the host gave up because this client left or asked to
	// stop before the lock was taken (or before the client confirmed it).
	ErrAbandoned = errors.New("the host stopped waiting for the lock")
	// ErrLockPath: the lock path is a file or a symlink; it is left untouched.
	ErrLockPath = errors.New("the lock path is not a directory (a file or a symlink); refusing to touch it")
)

// BusyError is returned when the lock stayed held for the whole wait.
type BusyError struct {
	// Holder describes the lock as last seen.
	Holder State
}

func (e *BusyError) Error() string { return "store lock is busy: held by " + e.Holder.Describe() }
func (e *BusyError) Unwrap() error { return ErrBusy }

// LostError is returned when our token was replaced by another holder's.
type LostError struct {
	// Holder describes the lock that replaced ours, when there is one.
	Holder State
}

func (e *LostError) Error() string {
	if !e.Holder.Locked {
		return "lock lost: it was removed"
	}
	return "lock lost: now held by " + e.Holder.Describe()
}
func (e *LostError) Unwrap() error { return ErrLost }

// HostError is an ERROR verdict: the host could not do what was asked.
type HostError struct {
	Code   string
	Detail string
}

func (e *HostError) Error() string {
	switch e.Code {
	case "nohome":
		return "HOME is not set on the host, so a ~/ root cannot be resolved; pass an absolute --root"
	case "mkdir":
		return "cannot create the store: " + e.Detail + "; check --root and its permissions"
	case "record":
		return "cannot write the lock's owner record: " + e.Detail + "; check free space and permissions"
	case "lockpath":
		return fmt.Sprintf("the lock path %s is a file or a symlink, not a directory; refusing to touch it; remove it by hand if it is not meant to be there", e.Detail)
	case "unpack", "promote", "switch", "stage", "nosha256":
		return "the host could not " + map[string]string{
			"unpack": "unpack the upload", "promote": "promote the runtime", "switch": "switch current",
			"stage": "find the upload", "nosha256": "verify the upload",
		}[e.Code] + ": " + e.Detail
	case "guard":
		return "the steal guard stayed busy; retry, and if it persists run hoist lock status"
	}
	return strings.TrimSpace("host error: " + e.Code + " " + e.Detail)
}

// Unwrap maps lockpath to ErrLockPath.
func (e *HostError) Unwrap() error {
	if e.Code == "lockpath" {
		return ErrLockPath
	}
	return nil
}

func unexpected(op string, r fmt.Stringer) error {
	return fmt.Errorf("%s: unexpected reply %q from the host", op, r.String())
}
