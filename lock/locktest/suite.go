// Package locktest is the lock conformance suite: the same scenarios run
// against every transport and every kind of host (the local target, OpenSSH
// with each login shell, a busybox userland). Call [Run] from a test.
package locktest

import (
	"context"
	"errors"
	"fmt"
	"path"
	"strings"
	"testing"
	"time"

	"github.com/hoistdev/hoist/lock"
	"github.com/hoistdev/hoist/remote"
	"github.com/hoistdev/hoist/shellcmd"
	"github.com/hoistdev/hoist/transport"
)

// Target is a host to run the suite against.
type Target struct {
	// Dial opens a new connection to the host.
	Dial func(t testing.TB) transport.Transport
	// Dir is an absolute directory on the host, writable by the login,
	// under which every scenario makes its own store root.
	Dir string
}

// Run runs every scenario against target, in parallel.
func Run(t *testing.T, target Target) {
	for _, s := range scenarios {
		t.Run(s.name, func(t *testing.T) {
			t.Parallel()
			s.fn(t, newEnv(t, target))
		})
	}
}

var scenarios = []struct {
	name string
	fn   func(*testing.T, *env)
}{
	{"AcquireStatusRelease", testAcquireStatusRelease},
	{"TryAcquireOnMissingStoreCreatesNothing", testTryMissingStore},
	{"TryAcquireOnHeldLockIsBusy", testTryBusy},
	{"FreshLockIsKept", testFreshLockKept},
	{"StaleLockIsTaken", testStaleLockTaken},
	{"OwnerlessLockObeysAgeOnly", testOwnerlessLock},
	{"UnparsableRecordObeysAgeOnly", testUnparsableRecord},
	{"PreviousBootRecordIsTakenAtOnce", testPreviousBootRecord},
	{"EarlierVersionLockObeysAgeOnly", testEarlierVersionLock},
	{"DeadLockIsTakenAtOnce", testDeadLockIsTakenAtOnce},
	{"ForeignEntryInLockRefused", testForeignEntryInLockRefused},
	{"ReleaseNeverRemovesSuccessor", testReleaseKeepsSuccessor},
	{"HostReleaseNeverRemovesSuccessor", testHostReleaseKeepsSuccessor},
	{"ConcurrentStealsHaveOneWinner", testStealRace},
	{"WaiterTakesLockWhenReleased", testWaiterHandoff},
	{"CancelledWaiterLeavesNoLock", testCancelledWaiter},
	{"RunRelaysOutputAndStatus", testRunOutput},
	{"RunsNeverOverlap", testRunsNeverOverlap},
	{"HostReleasesAfterClientLeaves", testHostReleasesAfterDetach},
	{"StopRequestStopsCommand", testStopRequest},
	{"LockPathFileOrSymlinkRefused", testBadLockPath},
	{"BreakTakesOnlyStealableOrNamed", testBreak},
	{"HostileRootIsLiteral", testHostileRoot},
	{"LargeCommandLineRuns", testLargeCommandLine},
}

// env is one scenario's host and store.
type env struct {
	t      *testing.T
	target Target
	tr     transport.Transport
	root   lock.Root
	dir    string // the root as an absolute path on the host
}

func newEnv(t *testing.T, target Target) *env {
	name := strings.NewReplacer("/", "_", " ", "_").Replace(t.Name())
	dir := path.Join(target.Dir, fmt.Sprintf("%s-%d", name, time.Now().UnixNano()))
	e := &env{t: t, target: target, tr: target.Dial(t), dir: dir, root: lock.Root{Path: dir}}
	t.Cleanup(func() { e.tr.Close() })
	return e
}

// lock returns a Lock on a new connection, as a separate client would have.
func (e *env) lock() *lock.Lock {
	tr := e.target.Dial(e.t)
	e.t.Cleanup(func() { tr.Close() })
	l := lock.New(tr, e.root)
	l.Owner.Command = "locktest " + e.t.Name()
	return l
}

func (e *env) ctx() context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	e.t.Cleanup(cancel)
	return ctx
}

// sh runs a POSIX script on the host as the login and returns its stdout.
func (e *env) sh(script string) string {
	e.t.Helper()
	var out, errb strings.Builder
	st, err := e.tr.Run(e.ctx(), transport.Request{Command: remote.Loader, Stdin: remote.LoaderInput(script), Stdout: &out, Stderr: &errb})
	if err != nil || st != 0 {
		e.t.Fatalf("host script failed (status %d, %v): %s\nscript: %s", st, err, errb.String(), script)
	}
	return out.String()
}

func q(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

func (e *env) store() string { return e.dir + "/runtimes" }
func (e *env) lockDir() string {
	return e.store() + "/.store-lock"
}

// backdate sets the lock's mtime to age ago, by the host's clock.
func (e *env) backdate(p string, age time.Duration) {
	e.t.Helper()
	e.sh(fmt.Sprintf(`t=$(( $(date +%%s) - %d )); TZ=UTC0 touch -t "$(date -u -d @$t +%%Y%%m%%d%%H%%M.%%S 2>/dev/null || date -u -r $t +%%Y%%m%%d%%H%%M.%%S)" %s`,
		int(age.Seconds()), q(p)))
}

func (e *env) exists(p string) bool {
	return strings.TrimSpace(e.sh(fmt.Sprintf("if [ -e %s ] || [ -L %s ]; then echo yes; else echo no; fi", q(p), q(p)))) == "yes"
}

// debris lists what the store holds besides promoted runtimes and the lock.
func (e *env) debris() []string {
	out := strings.TrimSpace(e.sh(fmt.Sprintf("cd %s && ls -A", q(e.store()))))
	var extra []string
	for _, f := range strings.Split(out, "\n") {
		if f != "" && f != ".store-lock" {
			extra = append(extra, f)
		}
	}
	return extra
}

// record is the path of the lock's record, "" when there is none.
func (e *env) record() string {
	return strings.TrimSpace(e.sh(fmt.Sprintf("for f in %s/*/rec; do [ -f \"$f\" ] && echo \"$f\"; done; true", q(e.lockDir()))))
}

// token is the token of the lock's holder, "" when there is none.
func (e *env) token() string {
	p := e.record()
	if p == "" {
		return ""
	}
	r, ok := shellcmd.ParseRecord(strings.TrimSpace(e.sh("cat " + q(p))))
	if !ok || path.Base(path.Dir(p)) != r.Token {
		return ""
	}
	return r.Token
}

// backdateLock makes the lock's record age old, by the host's clock.
func (e *env) backdateLock(age time.Duration) {
	e.t.Helper()
	p := e.record()
	if p == "" {
		e.t.Fatal("no lock record to backdate")
	}
	e.backdate(p, age)
}

// editRecord rewrites the lock's record with a sed script.
func (e *env) editRecord(sed string) {
	e.t.Helper()
	e.sh(fmt.Sprintf(`f=%s; sed %s "$f" >"$f.x" && mv "$f.x" "$f"`, q(e.record()), q(sed)))
}

func (e *env) acquire(l *lock.Lock) *lock.Held {
	e.t.Helper()
	h, err := l.Acquire(e.ctx(), 0, lock.Events{})
	if err != nil {
		e.t.Fatalf("acquire: %v", err)
	}
	return h
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func wantBusy(t *testing.T, err error) *lock.BusyError {
	t.Helper()
	var busy *lock.BusyError
	if !errors.As(err, &busy) {
		t.Fatalf("want a busy lock, got %v", err)
	}
	return busy
}
