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

type activateOptions struct{ wait time.Duration }

func (a *app) activateCommand() *cobra.Command {
	o := activateOptions{wait: defaultWait}
	c := &cobra.Command{
		Use:   "activate REF",
		Short: "point current at a runtime; the old one becomes previous",
		Long:  "activate points current at the runtime REF, atomically, under the lock.\n" + refHelp,
		Example: `  hoist -H web1 activate app
  hoist -H web1 activate app-3f9c2a1b7e4d`,
		Args:              exactArgs(1, "REF"),
		ValidArgsFunction: a.completeRuntimes,
		RunE: func(_ *cobra.Command, args []string) error {
			return a.switchTo(args[0], "activate", o.wait)
		},
	}
	c.Flags().Var(durationValue{&o.wait}, "wait", "wait up to `D` for the lock; 0 makes one attempt")
	return a.holdFlag(c)
}

type rollbackOptions struct {
	to   string
	wait time.Duration
}

func (a *app) rollbackCommand() *cobra.Command {
	o := rollbackOptions{wait: defaultWait}
	c := &cobra.Command{
		Use:   "rollback [--to REF]",
		Short: "point current back at previous, or at any runtime",
		Long:  "rollback points current back at previous (and previous at what was current),\nor with --to at the runtime REF, under the lock.\n" + refHelp,
		Example: `  hoist -H web1,web2 rollback
  hoist -H web1 rollback --to app-3f9c2a1b7e4d`,
		Args: noArgs,
		RunE: func(*cobra.Command, []string) error { return a.switchTo(o.to, "rollback", o.wait) },
	}
	c.Flags().StringVar(&o.to, "to", "", "roll back to the runtime `REF` instead of previous")
	c.Flags().Var(durationValue{&o.wait}, "wait", "wait up to `D` for the lock; 0 makes one attempt")
	c.RegisterFlagCompletionFunc("to", a.completeRuntimes)
	return a.holdFlag(c)
}

// switchTo activates ref (verb activate), rolls back to it, or with an
// empty ref rolls back to previous.
func (a *app) switchTo(ref, verb string, wait time.Duration) error {
	return a.storeCommand(func(ctx context.Context, s *store.Store, _ <-chan struct{}) result {
		name := s.Lock().Transport().Target()
		var sw *store.Switch
		var err error
		switch {
		case ref == "":
			sw, err = s.Rollback(ctx, wait, a.waitEvents(name, wait))
		case verb == "activate":
			_, err = s.ByRef(ctx, ref, func(id string) (err error) {
				sw, err = s.Activate(ctx, id, wait, a.waitEvents(name, wait))
				return err
			})
		default:
			_, err = s.ByRef(ctx, ref, func(id string) (err error) {
				sw, err = s.RollbackTo(ctx, id, wait, a.waitEvents(name, wait))
				return err
			})
		}
		if err != nil {
			return result{outcome: outcome{err: err}}
		}
		prev := sw.Previous
		if prev == "" {
			prev = "nothing"
		}
		return result{
			data: fmt.Sprintf("%s: current is %s (was %s)", name, sw.Current, prev),
			json: &output.Activate{Current: sw.Current, Previous: sw.Previous},
		}
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
