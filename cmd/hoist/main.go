// Command hoist installs runtimes onto hosts over SSH, into a store guarded by
// a lock on each host. This file holds the entry point; root.go the global
// flags; each command lives in a cmd_*.go file with its own options, and
// every decision is the library's.
//
// The command line is built with cobra and pflag, as kubectl, gh, hugo and
// restic build theirs: a tree of commands that each carry their own flags,
// help and examples (`hoist CMD --help`, `-h`, `hoist help CMD`, which never
// act), global flags that are persistent and so accepted before or after
// the command, shell completion for bash, zsh, fish and PowerShell, and
// errors for unknown commands and flags, all without a parser of our own.
package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"sync"
	"syscall"

	"golang.org/x/term"
)

func main() {
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	a := newApp(os.Stdout, os.Stderr, sigs)
	a.stdoutTTY = term.IsTerminal(int(os.Stdout.Fd()))
	a.con.tty = term.IsTerminal(int(os.Stderr.Fd()))
	if w, _, err := term.GetSize(int(os.Stderr.Fd())); err == nil {
		a.con.cols = w
	}
	os.Exit(a.execute(os.Args[1:]))
}

// app is one invocation: the global options, where it writes, and what
// the hosts came to.
type app struct {
	stdout    io.Writer // data: results, tables, --json
	stdoutTTY bool
	con       *console // for people: stderr
	signals   <-chan os.Signal
	args      []string // as given, for the lock's owner record
	g         globals
	log       *slog.Logger

	multi bool // several targets: output names the host

	mu       sync.Mutex
	outcomes []outcome     // by target, in the order given
	signal   os.Signal     // the first one received
	held     *bytes.Buffer // stdout kept back while bars are drawn
	printed  bool          // something went to stdout already
	keys     *passphrases  // passphrases given for identity files

	reach *reaching // the hosts not reached yet, which an interrupt ends at once

	doctorVia *registryCheck // doctor --via: the registry each host is asked to reach

	helpErr error // --help asked of a command that does not exist
}

func newApp(stdout, stderr io.Writer, signals <-chan os.Signal) *app {
	return &app{stdout: stdout, con: &console{w: stderr}, signals: signals, log: discardLogger(), reach: newReaching()}
}

// execute runs the command line args and returns the exit status.
func (a *app) execute(args []string) int {
	a.args = args
	root := a.rootCommand()
	root.SetArgs(args)
	err := root.Execute()
	if err == nil && a.helpErr != nil {
		err = a.helpErr
	}
	var ce *codeError
	var ue *usageError
	switch {
	case err == nil, errors.As(err, &ce):
	case errors.As(err, &ue):
		a.con.line(fmt.Sprintf("hoist: %s; see hoist --help", printable(ue.msg)))
	default:
		a.con.line("hoist: " + printable(err.Error()))
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	return exitStatus(exitInputs{err: err, signal: a.signal, hosts: a.outcomes})
}

// say prints a message about host for people on stderr, unless --quiet.
func (a *app) say(host, format string, args ...any) {
	if !a.g.quiet {
		a.con.line(fmt.Sprintf("hoist: %s: %s", printable(host), printable(fmt.Sprintf(format, args...))))
	}
}

// note prints a message that concerns no host in particular.
func (a *app) note(format string, args ...any) {
	if !a.g.quiet {
		a.con.line("hoist: " + printable(fmt.Sprintf(format, args...)))
	}
}
