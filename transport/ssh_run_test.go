package transport

import (
	"bytes"
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"
)

func runCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func TestSSHRunReturnsExitStatus(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	s := dialTest(t, ts.clientConfig(t))
	for _, want := range []int{0, 1, 3, 255} {
		got, err := s.Run(runCtx(t), Request{Command: "exit " + strconv.Itoa(want)})
		if err != nil || got != want {
			t.Errorf("exit %d: got %d, %v", want, got, err)
		}
	}
}

func TestSSHRunExitSignalIs128PlusNumber(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	s := dialTest(t, ts.clientConfig(t))
	for sig, want := range map[string]int{
		"TERM": 143, "KILL": 137, "HUP": 129, "INT": 130, "SEGV": 139, "USR1": 138, "USR2": 140,
		"PIPE": 141, "NOSUCHSIG": 255,
	} {
		got, err := s.Run(runCtx(t), Request{Command: "signal " + sig})
		if err != nil || got != want {
			t.Errorf("signal %s: got %d, %v; want %d", sig, got, err, want)
		}
	}
}

// slowWriter makes the output copy lag behind the exit status, so that a
// Run that returned on the status alone would lose output.
type slowWriter struct{ bytes.Buffer }

func (w *slowWriter) Write(p []byte) (int, error) {
	time.Sleep(time.Millisecond)
	return w.Buffer.Write(p)
}

func TestSSHRunCopiesAllOutputBeforeReturning(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	s := dialTest(t, ts.clientConfig(t))
	var stdout, stderr slowWriter
	status, err := s.Run(runCtx(t), Request{Command: "output 1048576 300001", Stdout: &stdout, Stderr: &stderr})
	if err != nil || status != 0 {
		t.Fatalf("Run: %d, %v", status, err)
	}
	if !bytes.Equal(stdout.Bytes(), pattern(1048576, 'o')) {
		t.Errorf("stdout: got %d bytes, want all 1048576 in order", stdout.Len())
	}
	if !bytes.Equal(stderr.Bytes(), pattern(300001, 'e')) {
		t.Errorf("stderr: got %d bytes, want all 300001 in order", stderr.Len())
	}
}

func TestSSHRunNilStdinStaysOpenUntilCancel(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	s := dialTest(t, ts.clientConfig(t))
	ctx, cancel := context.WithCancel(runCtx(t))
	done := make(chan error, 1)
	go func() {
		_, err := s.Run(ctx, Request{Command: "wait-stdin"})
		done <- err
	}()
	ts.expect(t, "started")
	ts.expectNone(t, 300*time.Millisecond) // no EOF while the client is there
	cancel()
	ts.expect(t, "stdin-eof")
	ts.expect(t, "closed")
	if err := <-done; !errors.Is(err, ErrUnknownOutcome) {
		t.Errorf("Run: %v, want ErrUnknownOutcome", err)
	}
}

func TestSSHRunNilStdinStaysOpenUntilClose(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	s := dialTest(t, ts.clientConfig(t))
	done := make(chan error, 1)
	go func() {
		_, err := s.Run(runCtx(t), Request{Command: "wait-stdin"})
		done <- err
	}()
	ts.expect(t, "started")
	ts.expectNone(t, 300*time.Millisecond)
	must(t, s.Close())
	ts.expect(t, "stdin-eof")
	if err := <-done; !errors.Is(err, ErrUnknownOutcome) || !errors.Is(err, errTransportClosed) {
		t.Errorf("Run: %v, want ErrUnknownOutcome because the transport was closed", err)
	}
}

func TestSSHRunStdinEOFReachesHost(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	s := dialTest(t, ts.clientConfig(t))
	var out bytes.Buffer
	status, err := s.Run(runCtx(t), Request{Command: "cat", Stdin: strings.NewReader("hello\nworld\n"), Stdout: &out})
	if err != nil || status != 0 {
		t.Fatalf("Run: %d, %v", status, err)
	}
	ts.expect(t, "started")
	ts.expect(t, "stdin-eof")
	if out.String() != "hello\nworld\n" {
		t.Errorf("stdout %q", out.String())
	}
}

type failingReader struct{ sent bool }

func (r *failingReader) Read(p []byte) (int, error) {
	if !r.sent {
		r.sent = true
		return copy(p, "partial"), nil
	}
	return 0, errors.New("disk on fire")
}

func TestSSHRunStdinReadErrorIsNotEOF(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	s := dialTest(t, ts.clientConfig(t))
	_, err := s.Run(runCtx(t), Request{Command: "cat", Stdin: &failingReader{}})
	if !errors.Is(err, ErrUnknownOutcome) || !strings.Contains(err.Error(), "disk on fire") {
		t.Errorf("Run: %v, want ErrUnknownOutcome mentioning the read error", err)
	}
}
