package transporttest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/hoistdev/hoist/transport"
)

// The outcomes "contact lost" and "not started".

func withCancel(e *env) (context.Context, context.CancelFunc) { return context.WithCancel(e.ctx()) }

// blocked starts a command on tr that prints started and then waits, with
// no input or output, until release is called: then it says done, on the
// host, for release to read. A release that finds nobody to say done means
// the command did not run to its end.
func (e *env) blocked(ctx context.Context) (done <-chan error, release func()) {
	e.sh(fmt.Sprintf("mkfifo %s %s", e.path("go"), e.path("back")))
	out := newWatched()
	ch := make(chan error, 1)
	go func() {
		_, err := e.tr.Run(ctx, transport.Request{Stdout: out,
			Command: command(fmt.Sprintf("echo started; read x <%s; echo done >%s", e.path("go"), e.path("back")))})
		ch <- err
	}()
	out.started(e.t)
	return ch, func() {
		e.t.Helper()
		ctx, cancel := context.WithTimeout(e.ctx(), 20*time.Second)
		defer cancel()
		var out strings.Builder
		st, err := e.probe.Run(ctx, transport.Request{Stdout: &out,
			Command: command(fmt.Sprintf("echo go >%s; cat %s", e.path("go"), e.path("back")))})
		if err != nil || st != 0 || out.String() != "done\n" {
			e.t.Fatalf("the command left running did not run to its end (it is not waiting any more, or it was killed): %d, %v, %q",
				st, err, out.String())
		}
	}
}

// Cancelling ctx while the command runs: Run returns at once, with
// ErrUnknownOutcome and ctx's error, and the command is not killed: it
// runs to its end on the host.
func testCancel(t *testing.T, e *env) {
	ctx, cancel := withCancel(e)
	done, release := e.blocked(ctx)
	cancel()
	err := <-done // the command is still blocked: Run did not wait for it
	wantOutcome(t, "Run cancelled", err, transport.ErrUnknownOutcome)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Run cancelled: %v does not wrap context.Canceled", err)
	}
	release()
}

// Close while a command runs: Run returns with ErrUnknownOutcome, and the
// command keeps running on the host.
func testClose(t *testing.T, e *env) {
	ctx, cancel := context.WithTimeout(e.ctx(), 20*time.Second)
	defer cancel()
	done, release := e.blocked(ctx)
	if err := e.tr.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	err := <-done
	if errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Run during Close returned only when its context ended: %v", err)
	}
	wantOutcome(t, "Run during Close", err, transport.ErrUnknownOutcome)
	release()
}

// A ctx that is done before Run starts nothing: ErrNotStarted.
func testDoneContext(t *testing.T, e *env) {
	ctx, cancel := withCancel(e)
	cancel()
	_, err := e.tr.Run(ctx, transport.Request{Command: command("touch " + e.path("ran"))})
	wantOutcome(t, "Run with a done context", err, transport.ErrNotStarted)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Run with a done context: %v does not wrap context.Canceled", err)
	}
	if e.exists("ran") {
		t.Error("the command ran")
	}
}

// After Close, Run starts nothing: ErrNotStarted. Close again is harmless.
func testRunAfterClose(t *testing.T, e *env) {
	if err := e.tr.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	_, err := e.tr.Run(e.ctx(), transport.Request{Command: command("touch " + e.path("ran"))})
	wantOutcome(t, "Run after Close", err, transport.ErrNotStarted)
	if e.exists("ran") {
		t.Error("the command ran")
	}
	if err := e.tr.Close(); err != nil {
		t.Errorf("a second Close: %v", err)
	}
}

// A host that refuses to start the command: ErrNotStarted.
func testRefused(t *testing.T, e *env) {
	if e.target.Refusing == nil {
		t.Skip("the target has no host that refuses commands (Target.Refusing)")
	}
	tr := e.target.Refusing(t)
	_, err := tr.Run(e.ctx(), transport.Request{Command: command("exit 0")})
	wantOutcome(t, "Run on a host that refuses it", err, transport.ErrNotStarted)
}
