package transporttest

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hoistdev/hoist/transport"
)

// The outcome "the command ran and exited": its status, nil error.

func testExitStatus(t *testing.T, e *env) {
	for _, want := range []int{0, 1, 3, 75, 255} {
		got, err := e.tr.Run(e.ctx(), transport.Request{Command: command("exit " + strconv.Itoa(want))})
		if err != nil || got != want {
			t.Errorf("exit %d: got %d, %v", want, got, err)
		}
	}
}

// A command killed by a signal reports 128 plus its number, as a shell
// would. (HUP and INT are left out: a test run in the background may have
// them ignored, and a shell cannot undo that.)
func testSignal(t *testing.T, e *env) {
	for sig, want := range map[string]int{"TERM": 143, "KILL": 137, "ALRM": 142, "PIPE": 141} {
		got, err := e.tr.Run(e.ctx(), transport.Request{Command: command("kill -" + sig + " $$; sleep 5")})
		if err != nil || got != want {
			t.Errorf("kill -%s: got %d, %v; want %d", sig, got, err, want)
		}
	}
}

// yes is what yes WORD | head -c n prints.
func yes(word string, n int) []byte {
	return bytes.Repeat([]byte(word+"\n"), n/(len(word)+1)+1)[:n]
}

// The output is all there when Run returns a status, however slow the
// writers: none of it arrives later.
func testOutputComplete(t *testing.T, e *env) {
	stdout, stderr := newWatched(), newWatched()
	stdout.slow, stderr.slow = true, true
	st, err := e.tr.Run(e.ctx(), transport.Request{Command: command("yes o | head -c 1048576; yes e | head -c 300001 >&2"),
		Stdout: stdout, Stderr: stderr})
	stdout.returned.Store(true)
	stderr.returned.Store(true)
	if err != nil || st != 0 {
		t.Fatalf("Run: %d, %v", st, err)
	}
	out, errs := stdout.String(), stderr.String()
	if out != string(yes("o", 1048576)) {
		t.Errorf("stdout: got %d bytes when Run returned, want all 1048576 in order", len(out))
	}
	if errs != string(yes("e", 300001)) {
		t.Errorf("stderr: got %d bytes when Run returned, want all 300001 in order", len(errs))
	}
	time.Sleep(100 * time.Millisecond)
	if n := stdout.late.Load() + stderr.late.Load(); n > 0 {
		t.Errorf("%d writes ended after Run returned", n)
	}
}

// watchedWriter counts the writes that end after Run returned, and says
// when output first arrives. A slow one takes a millisecond a write, so
// that a Run that returned on the exit status alone would be caught with
// output still on its way.
type watchedWriter struct {
	slow     bool
	mu       sync.Mutex
	buf      bytes.Buffer
	first    chan struct{}
	once     sync.Once
	returned atomic.Bool
	late     atomic.Int64
}

func newWatched() *watchedWriter { return &watchedWriter{first: make(chan struct{})} }

func (w *watchedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	if w.slow {
		time.Sleep(time.Millisecond)
	}
	w.buf.Write(p)
	w.mu.Unlock()
	w.once.Do(func() { close(w.first) })
	if w.returned.Load() {
		w.late.Add(1)
	}
	return len(p), nil
}

func (w *watchedWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// started waits for the command's first output.
func (w *watchedWriter) started(t *testing.T) {
	t.Helper()
	select {
	case <-w.first:
	case <-time.After(30 * time.Second):
		t.Fatal("the command printed nothing")
	}
}

// Nothing reaches Stdout or Stderr once Run has returned, even when it
// returns on a cancel while output flows.
func testNoOutputAfterReturn(t *testing.T, e *env) {
	out, errw := newWatched(), newWatched()
	out.slow, errw.slow = true, true
	ctx, cancel := withCancel(e)
	done := make(chan error, 1)
	go func() {
		_, err := e.tr.Run(ctx, transport.Request{Command: command("yes out & yes err >&2"), Stdout: out, Stderr: errw})
		out.returned.Store(true)
		errw.returned.Store(true)
		done <- err
	}()
	out.started(t)
	cancel()
	wantOutcome(t, "Run cancelled while output flows", <-done, transport.ErrUnknownOutcome)
	time.Sleep(200 * time.Millisecond)
	if n := out.late.Load() + errw.late.Load(); n > 0 {
		t.Errorf("%d writes to Stdout or Stderr after Run returned", n)
	}
}

// A nil Stdout and Stderr discard the output; the command is not held up.
func testNilWriters(t *testing.T, e *env) {
	st, err := e.tr.Run(e.ctx(), transport.Request{Command: command("yes o | head -c 4194304; yes e | head -c 1048576 >&2; exit 4")})
	if err != nil || st != 4 {
		t.Fatalf("Run with nil writers: %d, %v; want 4", st, err)
	}
}

// A Stdin is copied to the command whole, then closed: the command sees
// EOF and ends.
func testStdinDelivered(t *testing.T, e *env) {
	in := yes("stdin", 1<<20)
	var out bytes.Buffer
	st, err := e.tr.Run(e.ctx(), transport.Request{Command: command("cat; echo end"), Stdin: bytes.NewReader(in), Stdout: &out})
	if err != nil || st != 0 {
		t.Fatalf("Run: %d, %v", st, err)
	}
	if want := append(in, "end\n"...); !bytes.Equal(out.Bytes(), want) {
		t.Errorf("the command printed %d bytes; want the %d of stdin in order, then end (after EOF)", out.Len(), len(in))
	}
}

// A nil Stdin stays open and empty while the client is there: a reader on
// the host sees EOF only once the client goes away.
func testNilStdinOpen(t *testing.T, e *env) {
	e.sh("mkfifo " + e.path("back"))
	out := newWatched()
	ctx, cancel := withCancel(e)
	done := make(chan error, 1)
	go func() {
		_, err := e.tr.Run(ctx, transport.Request{Stdout: out,
			Command: command(fmt.Sprintf("echo started; cat >/dev/null; touch %s; echo eof >%s", e.path("eof"), e.path("back")))})
		done <- err
	}()
	out.started(t)
	time.Sleep(300 * time.Millisecond)
	if e.exists("eof") {
		t.Fatal("the command saw EOF on a nil Stdin while the client is there")
	}
	cancel()
	wantOutcome(t, "Run cancelled", <-done, transport.ErrUnknownOutcome)
	if got := e.sh("cat " + e.path("back")); got != "eof\n" {
		t.Fatalf("after the client left, the command said %q; want eof", got)
	}
}

// Opened is called once, before any output arrives.
func testOpened(t *testing.T, e *env) {
	var opened atomic.Int32
	var before atomic.Bool
	out := writerFunc(func(p []byte) (int, error) {
		if opened.Load() == 0 {
			before.Store(true)
		}
		return len(p), nil
	})
	st, err := e.tr.Run(e.ctx(), transport.Request{Command: command("echo out; echo err >&2"), Stdout: out, Stderr: out,
		Opened: func() { opened.Add(1) }})
	if err != nil || st != 0 {
		t.Fatalf("Run: %d, %v", st, err)
	}
	if n := opened.Load(); n != 1 || before.Load() {
		t.Fatalf("Opened called %d times (want 1), output before it: %v", n, before.Load())
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// Runs at the same time on one transport each get their own status and
// output.
func testConcurrent(t *testing.T, e *env) {
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			var out strings.Builder
			st, err := e.tr.Run(e.ctx(), transport.Request{Command: command(fmt.Sprintf("echo run %d; sleep 0.2 || sleep 1; exit %d", i, i)), Stdout: &out})
			if err != nil || st != i || out.String() != fmt.Sprintf("run %d\n", i) {
				t.Errorf("run %d of 8 at once: status %d, %v, output %q", i, st, err, out.String())
			}
		})
	}
	wg.Wait()
}
