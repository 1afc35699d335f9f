package main

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/hoistdev/hoist/cmd/hoist/output"
	"github.com/hoistdev/hoist/lock"
)

func (a *app) lockCommand() *cobra.Command {
	c := &cobra.Command{
		Use:   "lock",
		Short: "show, take, release or break the store lock",
		Long: `lock works on the store lock of each host: status reads it, acquire takes it
for a manual hold and prints its token, release gives it back, break removes
a lock no one can be holding any more.`,
		Example: `  hoist -H web1 lock status
  token=$(hoist -H web1 lock acquire -m "db migration")
  hoist -H web1 lock release --token "$token"`,
		Args: func(c *cobra.Command, args []string) error {
			if len(args) > 0 {
				return unknownCommand(c, args[0])
			}
			return nil
		},
		// hoist lock alone shows this help: it is not an error.
		RunE: func(c *cobra.Command, _ []string) error { return c.Help() },
	}
	c.AddCommand(a.lockStatusCommand(), a.lockAcquireCommand(), a.lockRefreshCommand(), a.lockReleaseCommand(), a.lockBreakCommand())
	return c
}

// lockFleet runs fn on every host, stopping on the first interrupt and
// exiting on the second.
func (a *app) lockFleet(fn func(ctx context.Context, l *lock.Lock) result) error {
	return a.stoppable(func(ctx context.Context) error { return a.fleet(ctx, fn) })
}

// stoppable runs fn with a context the first interrupt cancels; the second
// exits.
func (a *app) stoppable(fn func(ctx context.Context) error) error {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	a.interrupted(ctx, func(os.Signal) { cancel() }, func(s os.Signal) { os.Exit(signalExit(s)) })
	return fn(ctx)
}

func (a *app) lockStatusCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "status",
		Short: "show the store lock: free or held, by whom, since when, stale or not",
		Long: `status shows the store lock of each host: free or held, the owner token, who
holds it (user@host, command, message), since when, its lease and when it
was last renewed, when it expires if not renewed, whether its holder
process is alive, whether it was recorded on this boot and in this PID
namespace, and whether a rule lets anyone take it now, and why. A host
that keeps an unfinished rollout record says so on stderr, with the
rollout status that shows it and, unless the record's hold owns the lock
and no rule lets anyone take it (under way), the rollout resume that
finishes it. It changes nothing.`,
		Example: `  hoist -H web1 lock status
  hoist -H web1,web2 lock status --json`,
		Args: noArgs,
		RunE: func(*cobra.Command, []string) error { return a.lockFleet(a.lockStatus) },
	}
}

func (a *app) lockStatus(ctx context.Context, l *lock.Lock) result {
	s, err := l.Status(ctx)
	if err != nil {
		return result{outcome: outcome{err: err}}
	}
	name := l.Transport().Target()
	r := result{json: &output.LockStatus{Lock: *stateJSON(s), UnfinishedRollouts: a.unfinished(name, s.Unfinished, &s)}}
	switch {
	case !s.Store:
		r.data = fmt.Sprintf("%s: free (no store yet)", name)
	case !s.Locked:
		r.data = fmt.Sprintf("%s: free", name)
	default:
		token := s.Record.Token
		if !s.RecordOK {
			token = "-"
		}
		r.data = fmt.Sprintf("%s: locked by %s; token %s; %s", name, s.Describe(), token, s.Reason())
		if p := s.Process(); p != "" && s.Why == "" {
			r.data += "; " + p
		}
		if match, known := s.BootMatch(); known && !match {
			r.data += "; recorded on another boot"
		} else if match, known := s.NSMatch(); known && !match {
			r.data += "; recorded in another PID namespace"
		}
	}
	for _, d := range s.Debris {
		r.more = append(r.more, fmt.Sprintf("%s: %s was left by an earlier hoist and nothing uses it; remove it (rm -r)", name, d))
	}
	return r
}

type releaseOptions struct{ token string }

func (a *app) lockReleaseCommand() *cobra.Command {
	var o releaseOptions
	c := &cobra.Command{
		Use:   "release --token TOKEN",
		Short: "release a manual hold, only if the lock still carries TOKEN",
		Long: `release removes the lock of each host if, and only if, it still carries
TOKEN, the token lock acquire printed. A lock with another token is left
alone.`,
		Example: `  hoist -H web1 lock release --token "$token"`,
		Args:    noArgs,
		RunE: func(*cobra.Command, []string) error {
			if o.token == "" {
				return usageErr("lock release needs --token TOKEN (the token lock acquire printed)")
			}
			return a.lockFleet(func(ctx context.Context, l *lock.Lock) result {
				if err := l.Release(ctx, o.token); err != nil {
					return result{outcome: outcome{err: releaseError(o.token, err)}}
				}
				a.say(l.Transport().Target(), "released")
				return result{json: &output.LockRelease{Released: true}}
			})
		},
	}
	c.Flags().StringVar(&o.token, "token", "", "the owner `TOKEN` of the hold")
	return c
}

// releaseError says that a release found another token: for a release, a
// *lock.LostError means exactly that the lock carries another token (for
// run it means the lock was taken over: "lock lost").
func releaseError(token string, err error) error {
	var lost *lock.LostError
	if !errors.As(err, &lost) {
		return err
	}
	holder := "the lock was removed"
	if lost.Holder.Locked {
		holder = "held by " + lost.Holder.Describe()
	}
	return fmt.Errorf("the token %s does not match the holder's (%s); check with hoist lock status", token, holder)
}
