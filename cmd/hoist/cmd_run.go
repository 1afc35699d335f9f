package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/hoistdev/hoist/lock"
	"github.com/hoistdev/hoist/transport"
)

type runOptions struct{ wait time.Duration }

func (a *app) runCommand() *cobra.Command {
	o := runOptions{wait: defaultWait}
	c := &cobra.Command{
		Use:   "run [--wait D] -- CMD [ARG...]",
		Short: "run CMD on each host under the store lock",
		Long: `run runs CMD on each host under the store lock, in one host command that
acquires, runs and releases; the host releases the lock itself when CMD
ends, even if hoist was killed or lost the connection. Arguments are passed
as they are, never through a shell (use sh -c '...' for shell syntax).
CMD's output is relayed live; hoist exits with CMD's exit status.

The first Ctrl-C asks the host to stop CMD (SIGTERM) and waits up to 10s
for the outcome; a second one detaches: CMD carries on, and the host
releases the lock when it ends.`,
		Example: `  hoist -H web1,web2 run -- systemctl restart app
  hoist -H web1 run --wait 0 -- sh -c 'cd /srv/app && ./migrate'`,
		Args: func(c *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usageErr("run needs a command: hoist run [--wait D] -- CMD [ARG...]")
			}
			return nil
		},
		RunE: func(_ *cobra.Command, args []string) error { return a.run(args, o) },
	}
	c.Flags().Var(durationValue{&o.wait}, "wait", "wait up to `D` for the lock; 0 makes one attempt")
	// Flags end at CMD: "hoist run ls -l" runs ls -l.
	c.Flags().SetInterspersed(false)
	return c
}

// run runs argv on every host under the store lock. The first Ctrl-C (or
// SIGTERM, SIGHUP) asks the host to stop the command, which then releases
// the lock itself, and waits up to stopGrace for the outcome; a second one
// detaches and leaves the host to finish and release.
func (a *app) run(argv []string, o runOptions) error {
	ctx, detach := context.WithCancel(context.Background())
	defer detach()
	stop := make(chan struct{})
	var stopOnce sync.Once
	sig := a.interrupted(ctx,
		func(os.Signal) {
			stopOnce.Do(func() { close(stop) })
			a.note("asking the host to stop the command; interrupt again to detach")
			time.AfterFunc(stopGrace, detach)
		},
		func(os.Signal) { detach() })
	return a.fleet(ctx, func(ctx context.Context, l *lock.Lock) result {
		return a.runOn(ctx, l, argv, o, stop, sig)
	})
}

func (a *app) runOn(ctx context.Context, l *lock.Lock, argv []string, o runOptions, stop chan struct{}, sig func() os.Signal) result {
	name := l.Host().Name()
	stdout, stderr := io.Writer(a.stdout), io.Writer(a.con)
	if a.multi || a.g.json {
		out := a.stdout
		if a.g.json {
			out = a.con // stdout carries only the JSON results
		}
		pout, perr := newPrefixWriter(out, name+": "), newPrefixWriter(a.con, name+": ")
		defer pout.Flush()
		defer perr.Flush()
		stdout, stderr = pout, perr
	}
	ev := a.waitEvents(name, o.wait)
	ev.Started = a.con.clearLive
	res, err := l.Run(ctx, argv, lock.RunOptions{Wait: o.wait, Stdout: stdout, Stderr: stderr, Stop: stop, Events: ev})
	a.con.clearLive()
	r := result{json: map[string]any{"token": res.Token, "started": res.Started}}
	if res.Lost != nil {
		a.say(name, "%v; the new holder was left alone", res.Lost)
		r.json["lock_lost"] = true
	}
	if res.ReleaseErr != nil {
		a.say(name, "the command ended, but the lock may still be held: %v; see hoist lock status", res.ReleaseErr)
		r.json["release_error"] = res.ReleaseErr.Error()
	}
	switch s := sig(); {
	case err != nil && errors.Is(err, transport.ErrUnknownOutcome) && s != nil:
		if res.Started {
			a.say(name, "detached: the command keeps running on the host, which releases the lock when it ends")
		} else {
			a.say(name, "detached while waiting: the host stops waiting and releases anything it took")
		}
		r.signal, r.json["interrupted"] = s, true
	case err != nil && errors.Is(err, lock.ErrAbandoned) && s != nil:
		a.say(name, "stopped waiting for the lock; nothing was run")
		r.signal, r.json["interrupted"] = s, true
	case err != nil:
		if errors.Is(err, transport.ErrUnknownOutcome) && res.Started {
			err = fmt.Errorf("%w; the command had started", err)
		}
		r.err = err
	case s != nil:
		a.say(name, "stopped: the command exited with status %d; lock released", res.Status)
		r.signal, r.json["interrupted"] = s, true
	default:
		r.ran, r.status = true, res.Status
	}
	r.json["exit_status"] = res.Status
	return r
}
