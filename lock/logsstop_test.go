package lock_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/hoistdev/hoist/lock"
)

// TestLogsFollowStopsTheRun: a follower of a run (hoist logs -f, or a run's
// own client reattached) that asks to stop it (Ctrl-C) has the host stop
// the run, as the run's own client would: its "stop" line reaches the run's
// guardian, the command is stopped, and both the run and the follow end.
func TestLogsFollowStopsTheRun(t *testing.T) {
	onStepShells(t, func(t *testing.T, e *stepEnv) {
		ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
		defer cancel()
		type ran struct {
			res *lock.RunResult
			err error
		}
		done, started := make(chan ran, 1), make(chan struct{})
		go func() {
			r, err := e.lock().Run(ctx, []string{"sleep", "30"}, lock.RunOptions{Grace: time.Second,
				Events: lock.Events{Started: func() { close(started) }}})
			done <- ran{r, err}
		}()
		select {
		case <-started:
		case <-ctx.Done():
			t.Fatal("the run never started")
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
