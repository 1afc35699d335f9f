package main

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/hoistdev/hoist/lock"
	"github.com/hoistdev/hoist/shellcmd"
	"github.com/hoistdev/hoist/store"
	"github.com/hoistdev/hoist/transport"
)

// explain adds what to do to library errors that do not already say it.
func explain(err error) string {
	var busy *lock.BusyError
	var lost *lock.LostError
	switch {
	case errors.Is(err, transport.ErrUnknownOutcome):
		return fmt.Sprintf("%v; the host may still be acting on it and releases the lock by itself; check with hoist lock status", err)
	case errors.As(err, &busy):
		return fmt.Sprintf("%v; wait longer with --wait, or see hoist lock status", err)
	case errors.Is(err, lock.ErrNotHolder):
		return err.Error() + "; nothing was done: check the token given with --token or HOIST_LOCK_TOKEN (hoist lock status shows the holder's)"
	case errors.As(err, &lost) && lost.Expired:
		return fmt.Sprintf("%v; nothing more was done under it: acquire the lock again", err)
	case errors.As(err, &lost) && !lost.Holder.Locked:
		return fmt.Sprintf("%v: the lock is free (released, or broken); nothing more was done under it", err)
	case errors.As(err, &lost):
		return fmt.Sprintf("%v; nothing more was done under the old token, and the holder was left alone", err)
	case errors.Is(err, lock.ErrNoStore):
		return err.Error() + "; nothing was created"
	case errors.Is(err, lock.ErrNotHeld):
		return err.Error() + "; nothing to do"
	case errors.Is(err, lock.ErrNotStealable):
		return err.Error() + "; wait for it, or break it with --force --token TOKEN if you know its holder is gone"
	case errors.Is(err, lock.ErrNotOwner):
		return err.Error() + "; check the token with hoist lock status"
	case errors.Is(err, lock.ErrAbandoned):
		return err.Error() + "; nothing is held"
	case errors.Is(err, store.ErrNotFound):
		return err.Error() + "; see hoist list"
	}
	return err.Error()
}

// commandLine is the command line for the lock's owner record.
func commandLine(args []string) string {
	// The record is readable by whoever can read the store: a command run
	// under the lock is named by its program only, since its arguments may
	// carry secrets.
	for i, a := range args {
		if a == "--" && i+2 < len(args) {
			args = append(args[:i+2:i+2], "…")
			break
		}
	}
	s := "hoist " + strings.Join(args, " ")
	if len(s) > 200 {
		n := 200
		for !utf8.RuneStart(s[n]) {
			n--
		}
		s = s[:n] + "…"
	}
	return s
}

// printable makes text safe for a terminal, on one line: names, records
// and errors may come from a host or from another user of it, and must not
// carry control sequences, nor line breaks that would print rows or
// messages of their own (shellcmd.Printable escapes them all).
func printable(text string) string { return shellcmd.Printable(text) }

// printableRows is printable for a block whose line breaks are hoist's own
// (a table whose cells are printable already), each line kept.
func printableRows(text string) string {
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		lines[i] = shellcmd.Printable(l)
	}
	return strings.Join(lines, "\n")
}
