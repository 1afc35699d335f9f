// Package transporttest is the conformance suite of [transport.Transport]:
// the contract of package transport (exactly one of three outcomes: an exit
// status, [transport.ErrNotStarted], [transport.ErrUnknownOutcome]) and of
// the methods of Transport and [transport.Uploader], run the same way
// against every implementation and every kind of host (the local target,
// OpenSSH under each login shell). Call [Run] from a test.
//
// The cases look at the host only through transports of the target: each
// makes a scratch directory there (mktemp -d), and the commands it runs are
// POSIX sh, started as exec /bin/sh -c '…' as package remote starts its
// own, so that any login shell passes them on.
package transporttest

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/hoistdev/hoist/transport"
)

// Target is a host to run the suite against.
type Target struct {
	// Dial opens a new connection to the host. The suite may close it; it
	// may be closed again when the test ends.
	Dial func(t testing.TB) transport.Transport
	// Refusing, when set, opens a connection to a host that refuses to
	// start any command (over SSH, an sshd with MaxSessions 0).
	Refusing func(t testing.TB) transport.Transport
}

// Run runs every case against target, in parallel.
func Run(t *testing.T, target Target) {
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			c.fn(t, newEnv(t, target))
		})
	}
}

var cases = []struct {
	name string
	fn   func(*testing.T, *env)
}{
	{"ExitStatus", testExitStatus},
	{"SignalIs128PlusNumber", testSignal},
	{"OutputCompleteBeforeReturn", testOutputComplete},
	{"NoOutputAfterReturn", testNoOutputAfterReturn},
	{"NilWritersDiscard", testNilWriters},
	{"StdinDeliveredThenEOF", testStdinDelivered},
	{"NilStdinOpenUntilClientLeaves", testNilStdinOpen},
	{"OpenedOnceBeforeOutput", testOpened},
	{"ConcurrentRuns", testConcurrent},
	{"CancelIsUnknownAndCommandRunsOn", testCancel},
	{"CloseIsUnknownAndCommandRunsOn", testClose},
	{"DoneContextStartsNothing", testDoneContext},
	{"RunAfterCloseStartsNothing", testRunAfterClose},
	{"RefusedStartIsNotStarted", testRefused},
	{"UploadCreatesPrivateFile", testUploadCreates},
	{"UploadRefusesWhatExists", testUploadRefusesExisting},
	{"UploadExistingFromOffset", testUploadExisting},
	{"UploadCheckBeforeWriting", testUploadCheck},
}

// env is one case's host: tr, the transport under test, and probe, another
// connection to the same host that looks at it.
type env struct {
	t      *testing.T
	target Target
	tr     transport.Transport
	probe  transport.Transport
	dir    string // a scratch directory on the host, absolute
}

func newEnv(t *testing.T, target Target) *env {
	e := &env{t: t, target: target, tr: target.Dial(t), probe: target.Dial(t)}
	t.Cleanup(func() { e.tr.Close() })
	e.dir = strings.TrimSpace(e.sh(`mktemp -d "${TMPDIR:-/tmp}/transporttest.XXXXXX"`))
	if !strings.HasPrefix(e.dir, "/") {
		t.Fatalf("mktemp -d on the host: %q", e.dir)
	}
	t.Cleanup(func() {
		e.sh("rm -rf " + e.dir)
		e.probe.Close()
	})
	return e
}

// ctx is a context for one step; a step that hangs fails the test.
func (e *env) ctx() context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	e.t.Cleanup(cancel)
	return ctx
}

// command is script, POSIX sh, as a command line for any login shell:
// bash, dash, zsh, fish, tcsh and the rest all pass a single-quoted word on
// as it is, given no quote, backslash, ! or line break in it.
func command(script string) string {
	if strings.ContainsAny(script, "'\\!\n") {
		panic("transporttest: a script with a quote, backslash, ! or line break: " + script)
	}
	return "exec /bin/sh -c '" + script + "'"
}

// sh runs script on the host through the probe and returns its stdout; it
// fails the test unless the script exits 0.
func (e *env) sh(script string) string {
	e.t.Helper()
	var out, errb strings.Builder
	st, err := e.probe.Run(e.ctx(), transport.Request{Command: command(script), Stdout: &out, Stderr: &errb})
	if err != nil || st != 0 {
		e.t.Fatalf("on the host (status %d, %v): %s\nscript: %s", st, err, errb.String(), script)
	}
	return out.String()
}

// exists reports whether the path under the scratch directory exists.
func (e *env) exists(name string) bool {
	e.t.Helper()
	return strings.TrimSpace(e.sh("if [ -e "+e.path(name)+" ]; then echo yes; fi")) == "yes"
}

func (e *env) path(name string) string { return e.dir + "/" + name }

// wantOutcome fails the test unless err wraps want and not the other
// outcome error.
func wantOutcome(t *testing.T, what string, err, want error) {
	t.Helper()
	other := transport.ErrNotStarted
	if want == transport.ErrNotStarted {
		other = transport.ErrUnknownOutcome
	}
	if !errors.Is(err, want) || errors.Is(err, other) {
		t.Fatalf("%s: got %v; want an error wrapping %q (and not %q)", what, err, want, other)
	}
}
