// Package transport carries commands and bytes to a host.
//
// A [Transport] runs one command line through the host's login shell, the way
// OpenSSH's sshd does for an "exec" request, and reports exactly one of three
// outcomes:
//
//   - the command ran and exited: Run returns its status and a nil error
//     (a command killed by a signal reports 128 plus the signal number);
//   - the command could not start: the error wraps [ErrNotStarted], and
//     nothing ran on the host;
//   - contact was lost before an exit status arrived: the error wraps
//     [ErrUnknownOutcome]. The host may still be running the command, may
//     have finished it, or may never have started it. Callers must not treat
//     this as a failure to clean up after.
//
// Two implementations exist: [SSH] (x/crypto/ssh, one connection per host
// reused for every command, a session per command) and [Local] (/bin/sh on
// this machine, the built-in target "local").
//
// An SSH connection can also outlive the process that made it, as OpenSSH's
// ControlMaster and ControlPersist keep one: [DialShared] connects through
// a master process holding the connection ([StartMaster], [ServeMaster]),
// and returns the same [SSH], with the same outcomes, as [DialSSH]
// (docs/connections.md).
//
// Transports do not interpret the command line: package remote builds it.
//
// # Where things live
//
//   - transport.go: [Transport], [Request] and the outcomes; local.go:
//     [Local]; upload.go, sftp.go: [Uploader], the SFTP upload over
//     several streams, resumable at an offset.
//   - ssh.go, ssh_dial.go, ssh_run.go: [DialSSH], the handshake and a
//     command's session; ssh_errors.go: the errors DialSSH returns;
//     ssh_auth*.go, ssh_hostkey*.go: authentication and known_hosts;
//     ssh_keepalive.go: the keepalives that detect a dead link;
//     ssh_target.go: a target's parts; ssh_proxy.go: ProxyCommand.
//   - sshconfig*.go, sshtokens.go: the OpenSSH configuration, resolved as
//     ssh -G resolves it ([ResolveConfig], [SSHConfig]).
//   - mux_*.go: the kept connection ([DialShared], [StartMaster]).
//   - dialhost.go: [HostDialer], connections to an address as the host
//     sees it (direct-tcpip), for health checks.
//   - transporttest: the conformance suite every transport passes.
package transport

import (
	"context"
	"errors"
	"io"
)

// LocalTarget is the name of the built-in target that runs on this machine.
const LocalTarget = "local"

// ErrUnknownOutcome reports that contact with the host was lost before the
// command's exit status arrived. The command may still be running.
var ErrUnknownOutcome = errors.New("contact lost before an exit status arrived, outcome unknown")

// ErrNotStarted reports that the command could not be started; nothing ran.
var ErrNotStarted = errors.New("command did not start")

// Request is one command for a host.
type Request struct {
	// Command is the command line handed to the host's login shell.
	Command string
	// Stdin, when not nil, is copied to the command's standard input until it
	// returns EOF, at which point the command's standard input is closed.
	// A nil Stdin leaves the command's standard input open and empty for the
	// whole run, so that a host-side reader sees EOF only when the client
	// goes away.
	Stdin io.Reader
	// Stdout and Stderr receive the command's output; nil discards it.
	Stdout, Stderr io.Writer
	// Opened, when set, is called once the command has a session on the
	// host (over SSH: the channel is open; the command is not sent yet).
	Opened func()
}

// Transport runs commands on one host. Implementations are safe for
// concurrent use. Package transporttest checks an implementation against
// this contract.
type Transport interface {
	// Run runs req and returns the command's exit status. The output is
	// copied to req.Stdout and req.Stderr completely before Run returns a
	// status, and nothing is written to them once Run has returned.
	//
	// When ctx is cancelled while the command runs, Run stops waiting,
	// closes the command's input and output (the host sees its client go
	// away) and returns an error wrapping both ctx.Err() and
	// ErrUnknownOutcome: the command itself is not killed. A ctx that is
	// done already starts nothing: the error wraps ctx.Err() and
	// ErrNotStarted.
	Run(ctx context.Context, req Request) (int, error)
	// Target names the host in messages, for example "deploy@web1:22".
	Target() string
	// Close releases the connection. Commands still running on the host
	// keep running there: their Runs return errors wrapping
	// ErrUnknownOutcome. A Run after Close starts nothing and returns an
	// error wrapping ErrNotStarted. Close may be called more than once.
	Close() error
}

// outcomeError carries ErrUnknownOutcome or ErrNotStarted together with the
// cause, so both match errors.Is.
type outcomeError struct {
	kind  error
	cause error
}

func (e *outcomeError) Error() string {
	if e.cause == nil {
		return e.kind.Error()
	}
	return e.kind.Error() + ": " + e.cause.Error()
}

func (e *outcomeError) Unwrap() []error {
	if e.cause == nil {
		return []error{e.kind}
	}
	return []error{e.kind, e.cause}
}

// UnknownOutcome wraps cause so that errors.Is(err, ErrUnknownOutcome) holds.
func UnknownOutcome(cause error) error { return &outcomeError{ErrUnknownOutcome, cause} }

// NotStarted wraps cause so that errors.Is(err, ErrNotStarted) holds.
func NotStarted(cause error) error { return &outcomeError{ErrNotStarted, cause} }
