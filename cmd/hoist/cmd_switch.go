package main

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/hoistdev/hoist/cmd/hoist/output"
	"github.com/hoistdev/hoist/store"
)

const refHelp = `REF is a runtime's id, a unique prefix of one, or a name, meaning the
newest runtime of that name (see hoist list).`

type activateOptions struct {
	wait time.Duration
	checkFlags
}

// checksHelp is the part of activate's, rollback's and push's help about
// the health-checked switch.
const checksHelp = `
With --restart or a check (--check, --check-http, --check-tcp), the switch is
health-checked, in one host command under one hold of the lock: switch,
restart, then a try of every check each --check-interval until one passes
(within --check-deadline) and every try passes for --stable after it. If they
do not, current goes back to the runtime it replaced, which is restarted and
checked in turn, and the failed runtime is marked bad on that host. The host
finishes this alone if hoist is killed or cut off: it goes back unless the
new runtime was found healthy. Exit status 0: healthy; 3: it failed and the
host is back on the previous runtime, which passed; 4: it failed and so did
the revert (the message says what is active).`

func (a *app) activateCommand() *cobra.Command {
	o := activateOptions{wait: defaultWait, checkFlags: newCheckFlags()}
	c := &cobra.Command{
		Use:   "activate REF",
		Short: "point current at a runtime; the old one becomes previous",
		Long:  "activate points current at the runtime REF, atomically, under the lock. It refuses\na runtime marked bad on the host without --force.\n" + refHelp + "\n" + checksHelp,
		Example: `  hoist -H web1 activate app
  hoist -H web1 activate app-3f9c2a1b7e4d
  hoist -H web1 activate app --restart 'bin/restart' --check-http http://127.0.0.1:8080/up`,
		Args:              exactArgs(1, "REF"),
		ValidArgsFunction: a.completeRuntimes,
		RunE: func(_ *cobra.Command, args []string) error {
			return a.switchTo(args[0], "activate", o.wait, &o.checkFlags)
		},
	}
	c.Flags().Var(durationValue{&o.wait}, "wait", "wait up to `D` for the lock; 0 makes one attempt")
	o.checkFlags.add(c.Flags())
	return a.holdFlag(c)
}

type rollbackOptions struct {
	to   string
	wait time.Duration
	checkFlags
}

func (a *app) rollbackCommand() *cobra.Command {
	o := rollbackOptions{wait: defaultWait, checkFlags: newCheckFlags()}
	c := &cobra.Command{
		Use:   "rollback [--to REF]",
		Short: "point current back at previous, or at any runtime",
		Long:  "rollback points current back at previous (and previous at what was current),\nor with --to at the runtime REF, under the lock. Without --to it passes over a\nruntime marked bad on the host, to the newest one in the history that is not.\n" + refHelp + "\n" + checksHelp,
		Example: `  hoist -H web1,web2 rollback
  hoist -H web1 rollback --to app-3f9c2a1b7e4d`,
		Args: noArgs,
		RunE: func(*cobra.Command, []string) error { return a.switchTo(o.to, "rollback", o.wait, &o.checkFlags) },
	}
	c.Flags().StringVar(&o.to, "to", "", "roll back to the runtime `REF` instead of previous")
	c.Flags().Var(durationValue{&o.wait}, "wait", "wait up to `D` for the lock; 0 makes one attempt")
	o.checkFlags.add(c.Flags())
	c.RegisterFlagCompletionFunc("to", a.completeRuntimes)
	return a.holdFlag(c)
}

// switchTo activates ref (verb activate), rolls back to it, or with an
// empty ref rolls back to previous; health-checked when cf asks for it.
func (a *app) switchTo(ref, verb string, wait time.Duration, cf *checkFlags) error {
	checks, err := cf.checks()
	if err != nil {
		return err
	}
	return a.storeCommand(func(ctx context.Context, s *store.Store, stop <-chan struct{}) result {
		name := s.Lock().Transport().Target()
		checks := checks
		checks.Stop = stop
		var h *store.Health
		var err error
		switch {
		case ref == "":
			h, err = s.RollbackChecked(ctx, "", checks, wait, a.waitEvents(name, wait))
		case verb == "activate":
			_, err = s.ByRef(ctx, ref, func(id string) (err error) {
				h, err = s.ActivateChecked(ctx, id, checks, wait, a.waitEvents(name, wait))
				return err
			})
		default:
			_, err = s.ByRef(ctx, ref, func(id string) (err error) {
				h, err = s.RollbackChecked(ctx, id, checks, wait, a.waitEvents(name, wait))
				return err
			})
		}
		if h == nil {
			return result{outcome: outcome{err: err}}
		}
		_ = a.settles(name, h.Settled) // a failed one is err, the host's ERROR
		js := &output.Activate{Current: h.Current, Previous: h.From, Health: healthJSON(h), Settled: settlesJSON(h.Settled)}
		if err != nil {
			return result{outcome: outcome{err: err}, json: js}
		}
		prev := h.From
		if prev == "" {
			prev = "nothing"
		}
		r := result{data: fmt.Sprintf("%s: current is %s (was %s)", name, h.Current, prev), json: js}
		if l := healthLine(h); l != "" {
			r.data += "; " + l
		}
		return r
	})
}

type pinOptions struct{ wait time.Duration }

func (a *app) pinCommand(verb string) *cobra.Command {
	o := pinOptions{wait: defaultWait}
	short, long := "keep a runtime from garbage collection", "pin keeps the runtime REF from hoist gc, under the lock.\n"
	if verb == "unpin" {
		short, long = "let gc collect a pinned runtime again", "unpin lets hoist gc collect the runtime REF again, under the lock.\n"
	}
	c := &cobra.Command{
		Use:               verb + " REF",
		Short:             short,
		Long:              long + refHelp,
		Example:           fmt.Sprintf("  hoist -H web1 %s app\n  hoist -H web1 %s app-3f9c2a1b7e4d", verb, verb),
		Args:              exactArgs(1, "REF"),
		ValidArgsFunction: a.completeRuntimes,
		RunE: func(_ *cobra.Command, args []string) error {
			return a.storeCommand(func(ctx context.Context, s *store.Store, _ <-chan struct{}) result {
				name := s.Lock().Transport().Target()
				id, err := s.ByRef(ctx, args[0], func(id string) error {
					return s.Pin(ctx, id, verb == "unpin", o.wait, a.waitEvents(name, o.wait))
				})
				if err != nil {
					return result{outcome: outcome{err: err}}
				}
				return result{data: fmt.Sprintf("%s: %sned %s", name, verb, id), json: &output.Pin{ID: id, Pinned: verb == "pin", Unpinned: verb == "unpin"}}
			})
		},
	}
	c.Flags().Var(durationValue{&o.wait}, "wait", "wait up to `D` for the lock; 0 makes one attempt")
	return a.holdFlag(c)
}
