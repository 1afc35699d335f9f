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

	"github.com/hoistdev/hoist/cmd/hoist/output"
	"github.com/hoistdev/hoist/lock"
	"github.com/hoistdev/hoist/shellcmd"
	"github.com/hoistdev/hoist/transport"
)

type runOptions struct{ wait, grace time.Duration }

func (a *app) runCommand() *cobra.Command {
	o := runOptions{wait: defaultWait, grace: lock.DefaultGrace}
	c := &cobra.Command{
		Use:   "run [--wait D] [--grace D] [--token T] -- CMD [ARG...]",
		Short: "run CMD on each host under the store lock",
		Long: `run runs CMD on each host under the store lock, in one host command that
acquires, runs and releases; the host releases the lock itself when CMD
and everything it started have ended, even if hoist was killed or lost the
connection. Arguments are passed as they are, never through a shell (use
sh -c '...' for shell syntax). CMD's output is relayed live; hoist exits
with CMD's exit status.

CMD starts where the login starts: on an SSH host, the login's home
directory (so "hoist run -- ./migrate" looks for ~/migrate, and exits 127
when there is none: cd first, sh -c 'cd /srv/app && ./migrate'); on the
local target, the current directory.

CMD runs in a session of its own. While it runs the host renews the lock's
lease (--lease) every quarter lease; if the lock is lost anyway (a frozen
host, a forced break), the host stops CMD at once. What CMD leaves running
when it exits is stopped too before the lock is released: start a service
through the service manager, not with &.

If the connection drops, hoist reconnects and follows CMD's output from
where it stopped, and exits with CMD's real status; a host that stays
unreachable gives exit 79 and names the run (hoist logs -f ID).

The first Ctrl-C asks the host to stop CMD: its whole process group gets
SIGTERM, then SIGKILL after --grace; a second one detaches: CMD carries on,
and the host releases the lock when it ends. With --token, CMD runs under
that manual hold (hoist lock acquire), which stays held.

A host that keeps an unfinished rollout record says so on stderr, before
CMD starts, with the rollout status that shows it and, when its hold does
not own the store lock (interrupted), the rollout resume that finishes it;
run settles nothing.`,
		Example: `  hoist -H web1,web2 run -- systemctl restart app
  hoist -H web1 run --wait 0 -- sh -c 'cd /srv/app && ./migrate'`,
		Args: func(c *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usageErr("run needs a command: hoist run [--wait D] -- CMD [ARG...]")
			}
			return nil
		},
		RunE: func(_ *cobra.Command, args []string) error {
			if o.grace < time.Second {
				return usageErr("--grace is at least 1s: a stopped command gets that long between SIGTERM and SIGKILL")
			}
			return a.run(args, o)
		},
	}
	c.Flags().Var(durationValue{&o.wait}, "wait", "wait up to `D` for the lock; 0 makes one attempt")
	c.Flags().Var(durationValue{&o.grace}, "grace", "a stopped CMD gets `D` between SIGTERM and SIGKILL")
	// Flags end at CMD: "hoist run ls -l" runs ls -l.
	c.Flags().SetInterspersed(false)
	return a.holdFlag(c)
}

// run runs argv on every host under the store lock. The first Ctrl-C (or
// SIGTERM, SIGHUP) ends at once the hosts not reached yet, asks the others
// to stop the command, which then releases the lock itself, and waits up
// to --grace and 5s more for the outcome; a second one detaches and leaves
// the host to finish and release.
func (a *app) run(argv []string, o runOptions) error {
	ctx, detach := context.WithCancel(context.Background())
	defer detach()
	stop := make(chan struct{})
	var stopOnce sync.Once
	sig := a.interrupted(ctx,
		func(os.Signal) {
			stopOnce.Do(func() { close(stop) })
			if a.reach.interrupt() {
				a.note("asking the host to stop the command; interrupt again to detach")
			}
			time.AfterFunc(o.grace+5*time.Second, detach)
		},
		func(os.Signal) { detach() })
	return a.fleet(ctx, func(ctx context.Context, l *lock.Lock) result {
		return a.runOn(ctx, l, argv, o, stop, sig)
	})
}

func (a *app) runOn(ctx context.Context, l *lock.Lock, argv []string, o runOptions, stop chan struct{}, sig func() os.Signal) result {
	name := l.Transport().Target()
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
	// Said as the host finds them, before CMD's output.
	ev.Unfinished = func(u shellcmd.UnfinishedRecord) { a.sayUnfinished(name, u, nil) }
	res, err := l.Run(ctx, argv, lock.RunOptions{Wait: o.wait, Grace: o.grace, Stdout: stdout, Stderr: stderr,
		Stop: stop, Events: ev, Reattached: func(int) {
			a.say(name, "contact lost; reconnected, following the run")
		}})
	a.con.clearLive()
	if res == nil {
		return result{outcome: outcome{err: err}}
	}
	obj := &output.Run{Token: res.Token, Run: res.ID, Started: res.Started, Reattached: res.Reattached, UnfinishedRollouts: unfinishedJSON(res.Unfinished, nil)}
	r := result{json: obj}
	if res.Fenced {
		a.say(name, "lock lost while the command ran: the host stopped it")
		obj.LockLost = true
	}
	if res.Lost != nil && !res.Fenced {
		if res.Lost.Expired {
			a.say(name, "%v", res.Lost)
		} else {
			a.say(name, "%v; the new holder was left alone", res.Lost)
		}
		obj.LockLost = true
	}
	if res.ReleaseErr != nil {
		a.say(name, "the command ended, but the lock may still be held: %v; see hoist lock status", res.ReleaseErr)
		obj.ReleaseError = res.ReleaseErr.Error()
	}
	switch s := sig(); {
	case err != nil && errors.Is(err, transport.ErrUnknownOutcome) && s != nil:
		if res.Started {
			a.say(name, "detached: the command keeps running on the host, which releases the lock when it ends")
		} else {
			a.say(name, "detached while waiting: the host stops waiting and releases anything it took")
		}
		r.signal, obj.Interrupted = s, true
	case err != nil && errors.Is(err, lock.ErrAbandoned) && s != nil:
		a.say(name, "stopped waiting for the lock; nothing was run")
		r.signal, obj.Interrupted = s, true
	case err != nil:
		if errors.Is(err, transport.ErrUnknownOutcome) && res.Started {
			err = fmt.Errorf("%w; the command had started", err)
		}
		r.err = err
	case s != nil && l.Hold != "":
		a.say(name, "stopped: the command exited with status %d; the hold stays", res.Status)
		r.signal, obj.Interrupted = s, true
	case s != nil:
		a.say(name, "stopped: the command exited with status %d; lock released", res.Status)
		r.signal, obj.Interrupted = s, true
	default:
		r.ran, r.status = true, res.Status
	}
	obj.ExitStatus = res.Status
	return r
}
