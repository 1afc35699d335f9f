package transport

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestSSHRunCancelClosesSessionWithoutSignal(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	s := dialTest(t, ts.clientConfig(t))
	ctx, cancel := context.WithCancel(runCtx(t))
	done := make(chan error, 1)
	go func() {
		_, err := s.Run(ctx, Request{Command: "hang"})
		done <- err
	}()
	ts.expect(t, "started")
	cancel()
	err := <-done
	if !errors.Is(err, ErrUnknownOutcome) || !errors.Is(err, context.Canceled) {
		t.Errorf("Run: %v, want ErrUnknownOutcome and context.Canceled", err)
	}
	ts.expect(t, "closed after requests ") // channel closed, no "signal" request
	if errors.Is(err, ErrNotStarted) {
		t.Errorf("Run: %v matches ErrNotStarted", err)
	}
}

// watchedWriter records writes that happen after Run returned.
type watchedWriter struct {
	mu       sync.Mutex
	n        int
	returned atomic.Bool
	late     atomic.Int64
}

func (w *watchedWriter) Write(p []byte) (int, error) {
	if w.returned.Load() {
		w.late.Add(1)
	}
	w.mu.Lock()
	w.n += len(p)
	w.mu.Unlock()
	return len(p), nil
}

func TestSSHRunWritesNoOutputAfterReturning(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	s := dialTest(t, ts.clientConfig(t))
	ctx, cancel := context.WithCancel(runCtx(t))
	var out watchedWriter
	done := make(chan error, 1)
	go func() {
		_, err := s.Run(ctx, Request{Command: "spew", Stdout: &out})
		out.returned.Store(true)
		done <- err
	}()
	ts.expect(t, "started")
	time.Sleep(50 * time.Millisecond) // let output flow
	cancel()
	if err := <-done; !errors.Is(err, ErrUnknownOutcome) {
		t.Fatalf("Run: %v", err)
	}
	time.Sleep(200 * time.Millisecond)
	if n := out.late.Load(); n > 0 {
		t.Errorf("%d writes to Stdout after Run returned", n)
	}
}

func TestSSHRunConnectionDroppedIsUnknownOutcome(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	s := dialTest(t, ts.clientConfig(t))
	_, err := s.Run(runCtx(t), Request{Command: "drop"})
	if !errors.Is(err, ErrUnknownOutcome) || errors.Is(err, ErrNotStarted) {
		t.Fatalf("Run: %v, want ErrUnknownOutcome", err)
	}
	// The connection is gone: the next command cannot start.
	if _, err := s.Run(runCtx(t), Request{Command: "exit 0"}); !errors.Is(err, ErrNotStarted) {
		t.Errorf("Run after drop: %v, want ErrNotStarted", err)
	}
}

func TestSSHRunSessionOpenRefusedIsNotStarted(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, func(ts *testServer) { ts.refuseSessions = true })
	s := dialTest(t, ts.clientConfig(t))
	_, err := s.Run(runCtx(t), Request{Command: "exit 0"})
	if !errors.Is(err, ErrNotStarted) || errors.Is(err, ErrUnknownOutcome) {
		t.Errorf("Run: %v, want ErrNotStarted", err)
	}
}

// A host that has as many sessions open as it allows (sshd's MaxSessions)
// is asked again for a moment, by Run and by SFTP: the place of a session
// that just closed is free once the host has reaped it.
func TestSSHSessionsFullIsAskedAgain(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, func(ts *testServer) { ts.fullSessions = 3 })
	s := dialTest(t, ts.clientConfig(t))
	if st, err := s.Run(runCtx(t), Request{Command: "exit 0"}); err != nil || st != 0 {
		t.Fatalf("Run past 3 refusals: %d, %v", st, err)
	}
	ts.mu.Lock()
	ts.fullSessions = 2
	ts.mu.Unlock()
	c, err := s.SFTP()
	if err != nil {
		t.Fatalf("SFTP past 2 refusals: %v", err)
	}
	c.Close()
	// A host that stays full: Run gives up, nothing started.
	ts.mu.Lock()
	ts.fullSessions = 1000
	ts.mu.Unlock()
	if _, err := s.Run(runCtx(t), Request{Command: "exit 0"}); !errors.Is(err, ErrNotStarted) {
		t.Errorf("Run on a host that stays full: %v, want ErrNotStarted", err)
	}
}

func TestSSHRunExecRefusedIsNotStarted(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, func(ts *testServer) { ts.refuseExec = true })
	s := dialTest(t, ts.clientConfig(t))
	_, err := s.Run(runCtx(t), Request{Command: "exit 0"})
	if !errors.Is(err, ErrNotStarted) || errors.Is(err, ErrUnknownOutcome) {
		t.Errorf("Run: %v, want ErrNotStarted", err)
	}
}

func TestSSHRunAfterCloseIsNotStarted(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	s := dialTest(t, ts.clientConfig(t))
	must(t, s.Close())
	if _, err := s.Run(runCtx(t), Request{Command: "exit 0"}); !errors.Is(err, ErrNotStarted) {
		t.Errorf("Run: %v, want ErrNotStarted", err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

func TestSSHMaxSessionsLimitsConcurrency(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	cfg := ts.clientConfig(t)
	cfg.MaxSessions = 2
	s := dialTest(t, cfg)

	var wg sync.WaitGroup
	errs := make(chan error, 5)
	for range 5 {
		wg.Go(func() {
			status, err := s.Run(runCtx(t), Request{Command: "block"})
			if err == nil && status != 0 {
				err = errors.New("status " + strconv.Itoa(status))
			}
			errs <- err
		})
	}
	waitFor(t, func() bool { ts.mu.Lock(); defer ts.mu.Unlock(); return ts.active == 2 })
	time.Sleep(200 * time.Millisecond) // give a third session every chance to start

	// A Run waiting for a slot gives up with its context: nothing ran.
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if _, err := s.Run(ctx, Request{Command: "exit 0"}); !errors.Is(err, ErrNotStarted) || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Run waiting for a slot: %v, want ErrNotStarted and DeadlineExceeded", err)
	}

	close(ts.release)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Errorf("Run: %v", err)
		}
	}
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if ts.peak != 2 {
		t.Errorf("peak concurrent sessions %d, want 2", ts.peak)
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not reached")
		}
		time.Sleep(5 * time.Millisecond)
	}
}
