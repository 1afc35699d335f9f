package main

import (
	"errors"
	"fmt"
	"os"
	"syscall"

	"github.com/hoistdev/hoist/lock"
	"github.com/hoistdev/hoist/store"
	"github.com/hoistdev/hoist/transport"
)

// Exit codes scripts and CI rely on (README, "Exit status"). A
// health-checked switch that failed is 3 (back on the previous runtime,
// which passed) or 4 (the revert failed too): store.UnhealthyError.
const (
	exitOK      = 0
	exitFailure = 1
	exitUsage   = 2
	// exitBusy: the lock could not be had within the wait (EX_TEMPFAIL).
	exitBusy = 75
	// exitUnknown: contact was lost before the host answered; what happened
	// there is unknown, and nothing was cleaned up on a guess.
	exitUnknown = 79
)

// outcome is what one host came to, as far as the exit status goes.
type outcome struct {
	// err is hoist's own failure on the host (busy, unknown, refused...).
	err error
	// ran: the command of hoist run ended on the host and status is its
	// exit status. It is the command's, never hoist's: a command that
	// exits 75 or 79 did not find the lock busy or lose contact.
	ran    bool
	status int
}

// exitInputs is everything the exit status depends on.
type exitInputs struct {
	err    error     // an error before any host was contacted (usage: 2)
	signal os.Signal // the first of SIGINT, SIGTERM, SIGHUP received
	hosts  []outcome // in the order the targets were given
}

// exitStatus is the one place hoist chooses its exit status:
//
//   - a signal decides: 129 (SIGHUP), 130 (SIGINT), 143 (SIGTERM);
//   - an error before any host: 2 for a bad command line, else 1;
//   - then the hosts, worst first: 79 (outcome unknown) from any host; else
//     the first host, in the order given, that failed (1, or the exit
//     status of the command hoist run ran there); else 75 (lock busy);
//     else 0.
func exitStatus(v exitInputs) int {
	if v.signal != nil {
		return signalExit(v.signal)
	}
	if v.err != nil {
		return errorCode(v.err)
	}
	// Worst first: rank 3 unknown, 2 failure, 1 busy, 0 success. Only a
	// worse rank replaces the code, so among failures the first host wins.
	worst, code := 0, exitOK
	for _, h := range v.hosts {
		rank, c := 0, exitOK
		switch {
		case h.err != nil:
			c = errorCode(h.err)
			switch c {
			case exitUnknown:
				rank = 3
			case exitBusy:
				rank = 1
			default:
				rank = 2
			}
		case h.ran && h.status != 0:
			rank, c = 2, h.status
		}
		if rank > worst {
			worst, code = rank, c
		}
	}
	return code
}

// errorCode is the code of one error of hoist's own.
func errorCode(err error) int {
	var ue *usageError
	var ce *codeError
	var he *store.UnhealthyError
	switch {
	case errors.As(err, &ue):
		return exitUsage
	case errors.As(err, &he):
		return he.ExitCode()
	case errors.Is(err, store.ErrSettledUnhealthy):
		return 4
	case errors.As(err, &ce):
		return ce.code
	case errors.Is(err, transport.ErrUnknownOutcome):
		return exitUnknown
	case errors.Is(err, lock.ErrBusy):
		return exitBusy
	}
	return exitFailure
}

func signalExit(s os.Signal) int {
	switch s {
	case syscall.SIGHUP:
		return 129
	case syscall.SIGINT:
		return 130
	case syscall.SIGTERM:
		return 143
	}
	return 128
}

// usageError is a bad command line: exit 2, one line on stderr.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usageErr(format string, args ...any) error {
	return &usageError{msg: fmt.Sprintf(format, args...)}
}

// codeError ends hoist with code after what it had to say was said (hoist
// alone prints its usage and exits 2).
type codeError struct{ code int }

func (e *codeError) Error() string { return fmt.Sprintf("exit %d", e.code) }
