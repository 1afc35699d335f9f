package lock

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"sync/atomic"
	"time"

	"github.com/hoistdev/hoist/remote"
	"github.com/hoistdev/hoist/shellcmd"
	"github.com/hoistdev/hoist/transport"
)

// RunOptions configure [Lock.Run].
type RunOptions struct {
	// Wait bounds how long the host waits for the lock; zero makes one attempt.
	Wait time.Duration
	// Grace is how long the command has between SIGTERM and SIGKILL when
	// it is stopped; zero means DefaultGrace.
	Grace time.Duration
	// Stdout and Stderr receive the command's output, relayed live.
	Stdout, Stderr io.Writer
	// Stop, when closed, asks the host to stop the command: its whole
	// process group gets SIGTERM, then SIGKILL after Grace, and the host
	// releases the lock once nothing of it is left. Before the command
	// starts, it makes the host stop waiting.
	Stop <-chan struct{}
	// Reconnect, when set, is how Run reaches the host again after contact
	// was lost: Run then follows the run's output from where it stopped
	// and reports its real exit status (up to Reattach attempts, with
	// backoff). Without it a lost contact is an unknown outcome.
	Reconnect func(context.Context) (transport.Transport, error)
	// Reattach bounds the reconnection attempts; zero means 6 (15 seconds
	// of backoff, plus each attempt's connection time).
	Reattach int
	// Reattached, when set, is called each time Run follows the run again
	// after contact was lost.
	Reattached func(attempt int)
	Events     Events
}

// RunResult is what the host reported about a run.
type RunResult struct {
	// ID names the run's record on the host (hoist logs ID): its token,
	// or under a manual hold a name of its own.
	ID string
	// Token is the owner token the run held the lock with: the first it
	// sent, or a spare after a spent attempt (the host said which).
	Token string
	// Started reports whether the command started.
	Started bool
	// Status is the command's exit status, valid when Exited.
	Status int
	Exited bool
	// Lost is set when the lock was no longer ours when the command ended
	// (taken after its lease ran out, or broken); the host did not touch
	// the new lock.
	Lost *LostError
	// Fenced is set when the lock was lost while the command ran: the host
	// stopped it (its whole group) at once.
	Fenced bool
	// Stolen describes the lock the run took over, when it stole one.
	Stolen *State
	// ReleaseErr is set when the command ended but the host did not report
	// releasing the lock (a record it could not move, a host shell cut short): the lock
	// may stay held until the stale rule frees it.
	ReleaseErr error
	// Reattached counts the times contact was lost and the run followed
	// again.
	Reattached int
	// Unfinished lists the rollout records the store keeps with no done,
	// as the host found them once it held the lock (Events.Unfinished
	// gets each as it comes): the run settles none of them.
	Unfinished []shellcmd.UnfinishedRecord
	released   bool
	// next are the spare tokens the host may have gone on with while this
	// client did not hear from it: the run's directory takes the name of
	// each in turn (docs/protocol.md, Create).
	next []string
}

// Run acquires the lock, runs argv and releases the lock in one host command
// (or, with l.Hold set, runs argv under that manual hold and leaves it held).
// The host waits for the lock (up to opts.Wait), runs argv in a process
// group of its own with its output going to files that it relays to
// opts.Stdout and opts.Stderr, renews the lease while argv runs, stops the
// group at once if the lock is lost, releases the lock when argv and
// everything it started have exited, and reports the exit status.
//
// If ctx is cancelled, or contact is lost and cannot be regained
// (opts.Reconnect), the command keeps running on the host and the host still
// releases the lock when it exits; the error then matches
// transport.ErrUnknownOutcome and names the run. Before the command starts,
// a cancelled or vanished client makes the host stop waiting and release
// anything it took.
func (l *Lock) Run(ctx context.Context, argv []string, opts RunOptions) (*RunResult, error) {
	if len(argv) == 0 {
		return nil, errors.New("run: no command given")
	}
	p := l.working()
	p.Wait = opts.Wait
	p.Grace = cmp.Or(opts.Grace, DefaultGrace)
	p.Argv = argv
	p.RunInfo = shellcmd.RunInfo(l.Owner.Who, argv)
	res := &RunResult{Token: p.Token, ID: p.Token, next: p.Spares}
	if p.Run != "" {
		res.ID, res.next = p.Run, nil
	}
	out := &counter{w: orDiscard(opts.Stdout)}
	errw := &counter{w: orDiscard(opts.Stderr)}
	acquired := false

	r, err := l.waiting(ctx, remote.Call{
		Fragment: shellcmd.Render(shellcmd.OpRun, p),
		Stdout:   out,
		Stderr:   errw,
	}, opts.Events, opts.Stop, func(v shellcmd.Verdict, _ *control) {
		switch v.Verb {
		case shellcmd.VerbAcquired:
			acquired = true
			if ours(p, v.Token()) {
				res.Token, res.next = v.Token(), nil
				if p.Run == "" {
					res.ID = res.Token
				}
			}
		case shellcmd.VerbStolen:
			s := l.state(v.Holder())
			res.Stolen = &s
		case shellcmd.VerbUnfinished:
			res.Unfinished = append(res.Unfinished, v.Unfinished())
			if opts.Events.Unfinished != nil {
				opts.Events.Unfinished(v.Unfinished())
			}
		case shellcmd.VerbStarted:
			res.Started = true
			if opts.Events.Started != nil {
				opts.Events.Started()
			}
		case shellcmd.VerbReleased, shellcmd.VerbKept:
			res.released = true
		case shellcmd.VerbFenced:
			res.Fenced = true
		case shellcmd.VerbError:
			if res.Exited || res.Started {
				res.ReleaseErr = hostError(v)
			}
		case shellcmd.VerbLost:
			res.Lost = l.lostAs(v.Holder(), res.Token)
		case shellcmd.VerbNotHeld:
			// Nothing to release: someone removed the lock meanwhile.
			res.Lost = l.lostAs(shellcmd.Holder{}, res.Token)
		case shellcmd.VerbExit:
			res.Status = v.ExitStatus()
			res.Exited = true
		}
	})
	if opts.Reconnect == nil {
		opts.Reconnect = l.Redial
	}
	if err != nil && isUnknown(err) && opts.Reconnect != nil && ctx.Err() == nil && !res.Exited {
		return res, l.reattach(ctx, res, out, errw, opts, err)
	}
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
		// status (it was killed): its guardian stops what is left of the
		// command, writes the run's end and releases. Follow it there.
		if err := l.follow(ctx, res, out, errw, opts); !noNews(err) {
			return res, err
		}
		return res, transport.UnknownOutcome(fmt.Errorf("the host stopped reporting after the command started (exit %d); follow it with hoist logs -f %s", r.Status, res.ID))
	}
	v := r.Last()
	switch v.Verb {
	case shellcmd.VerbBusy:
		return res, &BusyError{Holder: l.state(v.Holder())}
	case shellcmd.VerbAbandoned:
		return res, ErrAbandoned
	case shellcmd.VerbLost:
		err := l.lostUnder(v.Holder(), res.Token, acquired)
		var nh *NotHolderError
		if errors.As(err, &nh) {
			res.Lost = nil // never had it, so not lost
		}
		return res, err
	}
	return res, l.failure("run", r)
}

// reattach follows the run again after contact was lost (cause): it
// reconnects with backoff and runs Logs from the offsets this client has,
// until the run's status arrives or the attempts run out.
func (l *Lock) reattach(ctx context.Context, res *RunResult, out, errw *counter, opts RunOptions, cause error) error {
	attempts := opts.Reattach
	if attempts <= 0 {
		attempts = 6
	}
	delay := 500 * time.Millisecond
	for i := 1; i <= attempts; i++ {
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return unknownRun(res, cause)
		case <-t.C:
		}
		delay = min(2*delay, 4*time.Second)
		tr, err := opts.Reconnect(ctx)
		if err != nil {
			cause = err
			continue
		}
		res.Reattached++
		if opts.Reattached != nil {
			opts.Reattached(i)
		}
		other := l.on(tr)
		err = other.follow(ctx, res, out, errw, opts)
		for errors.Is(err, ErrNoRun) && !res.Started && len(res.next) > 0 {
			// Not under this name: the host may have gone on with the
			// next token, and the directory left this name for that one
			// in one rename.
			res.ID, res.Token, res.next = res.next[0], res.next[0], res.next[1:]
			err = other.follow(ctx, res, out, errw, opts)
		}
		switch {
		case errors.Is(err, ErrNoRun) && !res.Started:
			return fmt.Errorf("contact was lost before the command started, and the host did not start it (%v)", cause)
		case noNews(err):
			cause = err
			continue
		}
		return err
	}
	return unknownRun(res, cause)
}

// noNews reports whether err, from following a run, says nothing about
// the run itself: contact was lost again, or the follow's own command never
// started (a kept connection that reconnect reached just before it died).
// Either way the run's outcome is still unknown, never "did not start".
func noNews(err error) bool {
	return isUnknown(err) || errors.Is(err, transport.ErrNotStarted)
}

// follow follows the run res.ID on l's host from the offsets this client
// has, until it ends, and fills in res from its record.
func (l *Lock) follow(ctx context.Context, res *RunResult, out, errw *counter, opts RunOptions) error {
	st, err := l.Logs(ctx, res.ID, LogOptions{Follow: true, Offsets: [2]int64{out.n.Load(), errw.n.Load()},
		Stdout: out, Stderr: errw, Stop: opts.Stop})
	switch {
	case err != nil:
		return err
	case st.Exited:
		res.Started, res.Exited, res.Status, res.released = true, true, st.Status, true
		return nil
	}
	// The run ended and nobody saw its status: its host command was
	// killed, and the guardian released the lock.
	res.Started = true
	return fmt.Errorf("the run %s ended, but its exit status is unknown: its host command was killed", res.ID)
}

func unknownRun(res *RunResult, cause error) error {
	other := ""
	if len(res.next) > 0 {
		// It may have gone on with a spare token, under that id.
		other = " (or, if the host had to take another token, under the id hoist runs lists for it once it started)"
	}
	return transport.UnknownOutcome(fmt.Errorf("%v; the run %s may still be running on the host, which releases the lock when it ends; follow it with hoist logs -f %s%s", cause, res.ID, res.ID, other))
}

// counter counts the bytes written through it: the offsets a reattached
// run's output resumes from.
type counter struct {
	w io.Writer
	n atomic.Int64
}

func (c *counter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n.Add(int64(n))
	return n, err
}

func orDiscard(w io.Writer) io.Writer {
	if w == nil {
		return io.Discard
	}
	return w
}
