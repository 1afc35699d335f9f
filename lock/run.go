package lock

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/google/uuid"

	"github.com/hoistdev/hoist/remote"
	"github.com/hoistdev/hoist/shellcmd"
	"github.com/hoistdev/hoist/transport"
)

// RunOptions configure [Lock.Run].
type RunOptions struct {
	// Wait bounds how long the host waits for the lock; zero makes one attempt.
	Wait time.Duration
	// Stdout and Stderr receive the command's output, relayed live.
	Stdout, Stderr io.Writer
	// Stop, when closed, asks the host to stop the command: it is sent
	// SIGTERM, and the host releases the lock when it exits. Before the
	// command starts, it makes the host stop waiting.
	Stop   <-chan struct{}
	Events Events
}

// RunResult is what the host reported about a run.
type RunResult struct {
	// Token is the owner token the run held the lock with.
	Token string
	// Started reports whether the command started.
	Started bool
	// Status is the command's exit status, valid when Exited.
	Status int
	Exited bool
	// Lost is set when the lock was no longer ours when the command ended
	// (taken as stale while it ran); the host did not touch the new lock.
	Lost *LostError
	// Stolen describes the lock the run took over, when it stole one.
	Stolen *State
	// ReleaseErr is set when the command ended but the host did not report
	// releasing the lock (a record it could not move, a host shell cut short): the lock
	// may stay held until the stale rule frees it.
	ReleaseErr error
	released   bool
}

// Run acquires the lock, runs argv and releases the lock in one host command.
// The host waits for the lock (up to opts.Wait), runs argv with its output
// going to files that it relays to opts.Stdout and opts.Stderr, releases the
// lock as soon as argv exits, and reports the exit status.
//
// If ctx is cancelled, or contact is lost, the command keeps running on the
// host and the host still releases the lock when it exits; the error then
// matches transport.ErrUnknownOutcome and the result says whether the
// command had started. Before the command starts, a cancelled or vanished
// client makes the host stop waiting and release anything it took.
func (l *Lock) Run(ctx context.Context, argv []string, opts RunOptions) (*RunResult, error) {
	if len(argv) == 0 {
		return nil, errors.New("run: no command given")
	}
	p := l.params(uuid.NewString())
	p.Wait = opts.Wait
	p.Argv = argv
	res := &RunResult{Token: p.Token}

	r, err := l.waiting(ctx, remote.Call{
		Fragment: shellcmd.Render(shellcmd.OpRun, p),
		Stdout:   orDiscard(opts.Stdout),
		Stderr:   orDiscard(opts.Stderr),
	}, opts.Events, opts.Stop, func(v shellcmd.Verdict, _ *control) {
		switch v.Verb {
		case shellcmd.Stolen:
			s := l.state(v.Field(1), v.Field(0), v.Field(2))
			res.Stolen = &s
		case shellcmd.Started:
			res.Started = true
			if opts.Events.Started != nil {
				opts.Events.Started()
			}
		case shellcmd.Released:
			res.released = true
		case shellcmd.Error:
			if res.Exited || res.Started {
				res.ReleaseErr = hostError(v)
			}
		case shellcmd.Lost:
			res.Lost = l.lost(v.Field(0))
		case shellcmd.Exit:
			res.Status, _ = strconv.Atoi(v.Field(0))
			res.Exited = true
		}
	})
	if err != nil {
		return res, err
	}
	if res.Exited {
		if !res.released && res.Lost == nil && res.ReleaseErr == nil {
			res.ReleaseErr = fmt.Errorf("the host did not report releasing the lock (exit %d)", r.Status)
		}
		return res, nil
	}
	if res.Started {
		// The host shell stopped after starting the command and before its
		// status: the command may still run, holding the lock.
		return res, transport.UnknownOutcome(fmt.Errorf("the host stopped reporting after the command started (exit %d)", r.Status))
	}
	v := r.Last()
	switch v.Verb {
	case shellcmd.Busy:
		return res, &BusyError{Holder: l.state(v.Field(0), "-", v.Field(1))}
	case shellcmd.Abandoned:
		return res, ErrAbandoned
	}
	return res, l.failure("run", r)
}

func orDiscard(w io.Writer) io.Writer {
	if w == nil {
		return io.Discard
	}
	return w
}
