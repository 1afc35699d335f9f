package lock

import (
	"errors"
	"fmt"

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
	ErrNotStealable = errors.New("the lock is held and no rule lets anyone take it (not stale, holder not exited, not from a previous boot)")
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
// says so with a code and the host's text. Its message is the sentence the
// protocol table gives the code ([shellcmd.Code.Explain]), for the lock's
// codes and the store's alike (package store reuses this type); a code the
// table does not know reads as the code and the text.
type HostError struct {
	Code   shellcmd.Code
	Detail string
	// Err is the error the code stands for, when there is one: ErrLockPath
	// (lockpath), ErrUnsafePath (path), and package store's ErrNoSpace
	// (space) and ErrIDTaken (foreign, collision).
	Err error
}

// hostError reads an ERROR verdict.
func hostError(v shellcmd.Verdict) *HostError {
	code, text := v.Failure()
	e := &HostError{Code: code, Detail: text}
	switch code {
	case shellcmd.CodeLockPath:
		e.Err = ErrLockPath
	case shellcmd.CodePath:
		e.Err = ErrUnsafePath
	}
	return e
}

func (e *HostError) Error() string { return shellcmd.Printable(e.Code.Explain(e.Detail)) }

// Unwrap is Err.
func (e *HostError) Unwrap() error { return e.Err }

func unexpected(op string, r fmt.Stringer) error {
	return fmt.Errorf("%s: unexpected reply %q from the host", op, shellcmd.Printable(r.String()))
}
