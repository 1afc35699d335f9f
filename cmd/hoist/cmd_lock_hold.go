package main

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/hoistdev/hoist/cmd/hoist/output"
	"github.com/hoistdev/hoist/lock"
)

type acquireOptions struct {
	wait    time.Duration
	message string
	try     bool
}

func (a *app) lockAcquireCommand() *cobra.Command {
	o := acquireOptions{wait: defaultWait}
	c := &cobra.Command{
		Use:   "acquire [--wait D] [-m TEXT] [--try]",
		Short: "take the lock for a manual hold; prints the token",
		Long: `acquire takes the store lock of each host for a manual hold and prints its
owner token, which lock release needs. It waits on the host up to --wait;
--try makes one attempt and never creates the store. Interrupted, it
releases what it had just taken.`,
		Example: `  token=$(hoist -H web1 lock acquire -m "db migration")
  hoist -H web1 lock acquire --try`,
		Args: noArgs,
		RunE: func(*cobra.Command, []string) error {
			if len(o.message) > lock.MaxField {
				return usageErr("--message is longer than %d bytes", lock.MaxField)
			}
			return a.lockFleet(func(ctx context.Context, l *lock.Lock) result { return a.lockAcquire(ctx, l, o) })
		},
	}
	f := c.Flags()
	f.Var(durationValue{&o.wait}, "wait", "wait up to `D` for the lock; 0 makes one attempt")
	f.StringVarP(&o.message, "message", "m", "", "why the lock is held, shown to others (`TEXT`)")
	f.BoolVar(&o.try, "try", false, "one attempt; never create the store")
	return c
}

// lockAcquire takes a manual hold and prints its token. If this process is
// interrupted after the host confirmed the hold, the hold is released again
// (owner-checked) before exiting.
func (a *app) lockAcquire(ctx context.Context, l *lock.Lock, o acquireOptions) result {
	l.Owner.Message = o.message
	name := l.Transport().Target()
	var mu sync.Mutex
	var confirmed string
	wait := o.wait
	if o.try {
		wait = 0
	}
	ev := a.waitEvents(name, wait)
	ev.Acquired = func(token string) {
		a.con.clearLive()
		a.log.Debug("the host holds the lock for us", "host", name, "token", token)
		mu.Lock()
		confirmed = token
		mu.Unlock()
	}
	// One host, plain output: the token is printed before the host is told
	// the hold is taken, so a hold whose token nobody could read (hoist
	// lock acquire | true) is released by the host instead of kept.
	early := !a.multi && !a.g.json
	if early {
		ev.Confirm = func(token string) error {
			_, err := fmt.Fprintln(a.stdout, token)
			return err
		}
	}
	var held *lock.Held
	var err error
	if o.try {
		held, err = l.TryAcquire(ctx, ev)
	} else {
		held, err = l.Acquire(ctx, o.wait, ev)
	}
	a.con.clearLive()
	if ctx.Err() != nil {
		mu.Lock()
		token := confirmed
		mu.Unlock()
		if token == "" {
			a.say(name, "interrupted: stopped waiting; nothing is held")
			return result{json: &output.LockAcquire{Interrupted: true}}
		}
		rctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		defer cancel()
		if rerr := l.Release(rctx, token); rerr == nil {
			a.say(name, "interrupted: released the lock it had just taken")
		} else {
			a.say(name, "interrupted: could not release token %s: %v", token, rerr)
		}
		return result{json: &output.LockAcquire{Interrupted: true}}
	}
	if err != nil {
		return result{outcome: outcome{err: err}}
	}
	obj := &output.LockAcquire{Token: held.Token}
	r := result{json: obj}
	switch {
	case a.multi:
		r.data = name + " " + held.Token
	case !early:
		r.data = held.Token
	}
	if held.Stolen != nil {
		obj.Stolen = stateJSON(*held.Stolen)
	}
	return r
}

type breakOptions struct {
	force bool
	token string
}

func (a *app) lockBreakCommand() *cobra.Command {
	var o breakOptions
	c := &cobra.Command{
		Use:   "break [--force --token TOKEN]",
		Short: "remove a lock a rule frees (stale, holder exited, previous boot); with --force, the lock of TOKEN",
		Long: `break removes the store lock of each host if a rule lets anyone take it: it
is stale (not renewed for more than its lease), its holder process has exited
with everything it started, or it was recorded on a previous boot. With
--force --token TOKEN it removes the lock whose token is TOKEN whatever its
age (- names a lock without a readable record): only when you know its
holder is gone.`,
		Example: `  hoist -H web1 lock break
  hoist -H web1 lock break --force --token 0f0e0d0c-0b0a-4908-8706-050403020100`,
		Args: noArgs,
		RunE: func(*cobra.Command, []string) error {
			if o.force && o.token == "" {
				return usageErr("--force needs --token TOKEN (see hoist lock status)")
			}
			return a.lockFleet(func(ctx context.Context, l *lock.Lock) result {
				s, err := l.Break(ctx, o.force, o.token)
				if err != nil {
					if s.Locked {
						err = fmt.Errorf("%w: held by %s; %s", err, s.Describe(), s.Reason())
					}
					return result{outcome: outcome{err: err}}
				}
				a.say(l.Transport().Target(), "broke the lock of %s (%s)", s.Describe(), s.Reason())
				return result{json: &output.LockBreak{Broken: *stateJSON(s)}}
			})
		},
	}
	c.Flags().BoolVar(&o.force, "force", false, "break the lock of --token even if it is not stale")
	c.Flags().StringVar(&o.token, "token", "", "the owner `TOKEN` of the lock to break (- for one without a readable record)")
	return c
}

func (a *app) lockRefreshCommand() *cobra.Command {
	var token string
	c := &cobra.Command{
		Use:   "refresh --token TOKEN",
		Short: "renew the lease of a manual hold",
		Long: `refresh renews the lease of the manual hold TOKEN on each host, if the lock
still carries TOKEN and its lease has not run out: a hold that is not
renewed within its lease (--lease of lock acquire, default 20m) may be
taken by anyone waiting. A hold whose lease ran out is not renewed (a
waiter may have judged it stale already): acquire again.`,
		Example: `  token=$(hoist -H db1 --lease 2h lock acquire -m "db migration")
  hoist -H db1 lock refresh --token "$token"`,
		Args: noArgs,
		RunE: func(*cobra.Command, []string) error {
			if token == "" {
				return usageErr("lock refresh needs --token TOKEN (the token lock acquire printed)")
			}
			if !lock.ValidToken(token) {
				return usageErr("--token %q is not a lock token: use the token hoist lock acquire printed", printable(token))
			}
			return a.lockFleet(func(ctx context.Context, l *lock.Lock) result {
				lease, err := l.Refresh(ctx, token)
				if errors.Is(err, lock.ErrNotHeld) {
					err = fmt.Errorf("lock lost: the lock is free (released, or broken); acquire it again")
				}
				if err != nil {
					return result{outcome: outcome{err: err}}
				}
				a.say(l.Transport().Target(), "renewed: the hold lasts another %s unless renewed", lease)
				return result{json: &output.LockRefresh{Refreshed: true, LeaseSeconds: seconds(lease)}}
			})
		},
	}
	c.Flags().StringVar(&token, "token", "", "the owner `TOKEN` of the hold")
	return c
}
