package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/hoistdev/hoist/cmd/hoist/output"
	"github.com/hoistdev/hoist/lock"
	"github.com/hoistdev/hoist/store"
)

type gcOptions struct {
	keep     int
	dryRun   bool
	keepRuns time.Duration
}

func (a *app) gcCommand() *cobra.Command {
	o := gcOptions{keep: 2}
	c := &cobra.Command{
		Use:   "gc",
		Short: "delete what nothing needs; tries the lock once, never waits",
		Long: `gc deletes the runtimes nothing needs: it keeps current, previous, pinned
runtimes, those a running process uses, and the N newest others; it sweeps
abandoned uploads and the records of runs older than --keep-runs. It tries
the lock once: a busy store is skipped (exit 0),
and a host without a store has nothing to collect.`,
		Example: `  hoist --hosts-file fleet.txt gc --keep 3
  hoist -H web1 gc --keep 0 --dry-run`,
		Args: noArgs,
		RunE: func(*cobra.Command, []string) error {
			if o.keepRuns < time.Minute {
				return usageErr("--keep-runs is at least 1m (gc judges ages in minutes)")
			}
			return a.gc(o)
		},
	}
	c.Flags().Var(countValue{&o.keep, 0}, "keep", "keep the `N` newest runtimes beyond the protected ones")
	c.Flags().BoolVar(&o.dryRun, "dry-run", false, "say what gc would do, change nothing")
	o.keepRuns = store.DefaultKeepRuns
	c.Flags().Var(durationValue{&o.keepRuns}, "keep-runs", "keep the records of finished runs (hoist runs, hoist logs) for `D`, at least 1m")
	return a.holdFlag(c)
}

func (a *app) gc(o gcOptions) error {
	return a.storeCommand(func(ctx context.Context, s *store.Store, _ <-chan struct{}) result {
		name := s.Lock().Transport().Target()
		s.KeepRuns = o.keepRuns
		// gc never waits: a busy store is reported as skipped, not waited on.
		res, err := s.GC(ctx, o.keep, o.dryRun, lock.Events{Stole: a.waitEvents(name, 0).Stole})
		if err != nil {
			return result{outcome: outcome{err: err}}
		}
		obj := &output.GC{Skipped: res.Skipped, NothingToCollect: res.NoStore, DryRun: res.DryRun,
			Deleted: orEmpty(res.Deleted), Swept: orEmpty(res.Swept), Kept: []output.Kept{}}
		for _, k := range res.Kept {
			obj.Kept = append(obj.Kept, output.Kept{ID: k.ID, Why: k.Why})
		}
		switch {
		case res.NoStore:
			return result{data: name + ": nothing to collect (no store)", json: obj}
		case res.Skipped:
			obj.Holder = stateJSON(res.Holder)
			return result{data: fmt.Sprintf("%s: skipped: store busy (held by %s)", name, res.Holder.Describe()), json: obj}
		}
		verb := "deleted"
		if res.DryRun {
			verb = "would delete"
		}
		var parts []string
		for _, k := range res.Kept {
			parts = append(parts, k.ID+" ("+k.Why+")")
		}
		line := fmt.Sprintf("%s: kept %s; %s %s; swept %s", name, listOrNone(parts), verb,
			listOrNone(res.Deleted), listOrNone(res.Swept))
		return result{data: line, json: obj}
	})
}

func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func listOrNone(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ", ")
}

func size(n int64) string {
	switch {
	case n >= 1<<30:
		return strconv.FormatFloat(float64(n)/(1<<30), 'f', 1, 64) + " GiB"
	case n >= 1<<20:
		return strconv.FormatFloat(float64(n)/(1<<20), 'f', 1, 64) + " MiB"
	case n >= 1<<10:
		return strconv.FormatFloat(float64(n)/(1<<10), 'f', 1, 64) + " KiB"
	}
	return strconv.FormatInt(n, 10) + " B"
}
