package lock_test

import (
	"bytes"
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/hoistdev/hoist/lock"
)

// syncBuffer is a bytes.Buffer safe for a writer and a reader.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestLogsFollowStopsTheRun: a follower of a run (hoist logs -f, or a run's
// own client reattached) that asks to stop it (Ctrl-C) has the host stop
// the run, as the run's own client would: its "stop" line reaches the run's
// guardian, the command is stopped, and both the run and the follow end.
func TestLogsFollowStopsTheRun(t *testing.T) {
	onStepShells(t, func(t *testing.T, e *stepEnv) {
		ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
		defer cancel()
		out := &syncBuffer{}
		type ran struct {
			res *lock.RunResult
			err error
		}
		done := make(chan ran, 1)
		go func() {
			r, err := e.lock().Run(ctx, []string{"sh", "-c", "echo started; exec sleep 30"}, lock.RunOptions{Stdout: out, Grace: time.Second})
			done <- ran{r, err}
		}()
		for out.String() == "" {
			select {
			case <-ctx.Done():
				t.Fatal("the run never started")
			case <-time.After(20 * time.Millisecond):
			}
		}
		runs, err := e.lock().Runs(ctx)
		if err != nil || len(runs) != 1 {
			t.Fatalf("runs: %v %+v", err, runs)
		}
		stop := make(chan struct{})
		time.AfterFunc(300*time.Millisecond, func() { close(stop) })
		begin := time.Now()
		rec, err := e.lock().Logs(ctx, runs[0].ID, lock.LogOptions{Follow: true, Stop: stop})
		if err != nil || rec.End.IsZero() {
			t.Fatalf("the follow: %v %+v; want it to end with the run", err, rec)
		}
		r := <-done
		if r.err != nil && !errors.Is(r.err, context.Canceled) {
			t.Logf("the run ended: %v", r.err)
		}
		if r.res == nil || !r.res.Exited || r.res.Status == 0 {
			t.Fatalf("the run: %+v %v; want it stopped (a signal's status)", r.res, r.err)
		}
		t.Logf("stopped %v after the follower asked", time.Since(begin).Round(time.Millisecond))
	})
}
