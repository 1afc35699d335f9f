package main

import (
	"errors"
	"fmt"
	"os"
	"syscall"
	"testing"

	"github.com/hoistdev/hoist/lock"
	"github.com/hoistdev/hoist/transport"
)

// TestExitStatus is the table of exit codes, one host at a time.
func TestExitStatus(t *testing.T) {
	unknown := transport.UnknownOutcome(errors.New("connection lost"))
	busy := fmt.Errorf("promote: %w", &lock.BusyError{})
	for _, tc := range []struct {
		name string
		v    exitInputs
		want int
	}{
		{"success", exitInputs{hosts: []outcome{{}}}, 0},
		{"failure", exitInputs{hosts: []outcome{{err: errors.New("refused")}}}, 1},
		{"usage", exitInputs{err: usageErr("unknown flag --x")}, 2},
		{"usage on a host", exitInputs{hosts: []outcome{{err: usageErr("-o x")}}}, 2},
		{"failure before any host", exitInputs{err: errors.New("artifact refused")}, 1},
		{"hoist alone", exitInputs{err: &codeError{code: exitUsage}}, 2},
		{"busy", exitInputs{hosts: []outcome{{err: busy}}}, 75},
		{"unknown outcome", exitInputs{hosts: []outcome{{err: unknown}}}, 79},
		{"lock lost is a failure", exitInputs{hosts: []outcome{{err: &lock.LostError{}}}}, 1},
		{"SIGINT", exitInputs{signal: os.Interrupt, hosts: []outcome{{err: unknown}}}, 130},
		{"SIGTERM", exitInputs{signal: syscall.SIGTERM}, 143},
		{"SIGHUP", exitInputs{signal: syscall.SIGHUP, hosts: []outcome{{ran: true, status: 3}}}, 129},
		{"run: the command's status", exitInputs{hosts: []outcome{{ran: true, status: 7}}}, 7},
		{"run: the command succeeded", exitInputs{hosts: []outcome{{ran: true}}}, 0},
		// A command that exits 75 or 79 did not find the lock busy or lose
		// contact: its status is passed on as it is.
		{"run: the command exits 75", exitInputs{hosts: []outcome{{ran: true, status: 75}}}, 75},
		{"run: the command exits 79", exitInputs{hosts: []outcome{{ran: true, status: 79}}}, 79},
		{"no hosts", exitInputs{}, 0},
	} {
		if got := exitStatus(tc.v); got != tc.want {
			t.Errorf("%s: exit %d, want %d", tc.name, got, tc.want)
		}
	}
}

// TestExitStatusRanksHosts: with several hosts the worst outcome wins,
// deterministically: unknown (79), then failures (the first host in the
// order given that failed, whichever finished first), then busy (75), then
// success. A command's own 75 or 79 ranks as a failure.
func TestExitStatusRanksHosts(t *testing.T) {
	unknown := outcome{err: transport.UnknownOutcome(errors.New("cut"))}
	busy := outcome{err: &lock.BusyError{}}
	failed := outcome{err: errors.New("refused")}
	ok := outcome{}
	ran := func(status int) outcome { return outcome{ran: true, status: status} }
	for _, tc := range []struct {
		name  string
		hosts []outcome
		want  int
	}{
		{"all ok", []outcome{ok, ok, ok}, 0},
		{"busy beats ok", []outcome{ok, busy, ok}, 75},
		{"failure beats busy", []outcome{busy, failed, ok}, 1},
		{"unknown beats failure", []outcome{failed, unknown, busy}, 79},
		{"unknown beats a command's status", []outcome{ran(3), unknown}, 79},
		{"the first failure in order", []outcome{ok, ran(3), ran(4), failed}, 3},
		{"the first failure in order, hoist's", []outcome{busy, failed, ran(4)}, 1},
		// Were a command's 75 read as busy, the failure would win; were its
		// 79 read as unknown, it would win over the failure.
		{"a command's 75 is a failure, first in order", []outcome{ran(75), failed}, 75},
		{"a command's 79 is a failure, not unknown", []outcome{failed, ran(79)}, 1},
		{"a command's 79 beats busy", []outcome{busy, ran(79)}, 79},
		{"a command's 0 is success", []outcome{ran(0), busy}, 75},
	} {
		if got := exitStatus(exitInputs{hosts: tc.hosts}); got != tc.want {
			t.Errorf("%s: exit %d, want %d", tc.name, got, tc.want)
		}
	}
}
