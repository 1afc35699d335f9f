package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/hoistdev/hoist/cmd/hoist/output"
	"github.com/hoistdev/hoist/lock"
)

func (a *app) runsCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "runs",
		Short: "the recent runs on each host: id, start, end, status, command",
		Long: `runs lists what hoist run ran on each host, oldest first: the run's id, when
it started and ended, its exit status (running, or unknown when its host
command was killed), who ran it and the command. The host keeps a record of
every run for a week (gc --keep-runs), with the last 64 KiB of its output:
hoist logs ID prints it. It changes nothing.`,
		Example: `  hoist -H web1 runs
  hoist -H web1,web2 runs --json`,
		Args: noArgs,
		RunE: func(*cobra.Command, []string) error {
			return a.lockFleet(func(ctx context.Context, l *lock.Lock) result {
				runs, err := l.Runs(ctx)
				if err != nil {
					return result{outcome: outcome{err: err}}
				}
				rows := []output.RunRecord{}
				t := newTable("ID", "STARTED", "ENDED", "STATUS", "WHO", "COMMAND")
				for _, r := range runs {
					rows = append(rows, runJSON(r))
					ended := "-"
					if !r.Running() {
						ended = r.End.Local().Format("2006-01-02 15:04:05")
					}
					t.row(r.ID, r.Start.Local().Format("2006-01-02 15:04:05"), ended, runStatus(r), r.Who, r.Command)
				}
				res := result{json: &output.Runs{Runs: rows}}
				if len(runs) == 0 {
					res.data = l.Transport().Target() + ": no runs"
				} else {
					res.data, res.table = t.String(), true
				}
				return res
			})
		},
	}
}

func runStatus(r lock.RunRecord) string {
	switch {
	case r.Running():
		return "running"
	case r.Exited:
		return fmt.Sprint(r.Status)
	}
	return "unknown"
}

func runJSON(r lock.RunRecord) output.RunRecord {
	obj := output.RunRecord{ID: r.ID, Started: r.Start.UTC().Format(time.RFC3339), Running: r.Running(),
		Who: r.Who, Command: r.Command}
	if !r.Running() {
		obj.Ended = r.End.UTC().Format(time.RFC3339)
	}
	if r.Exited {
		obj.ExitStatus = &r.Status
	}
	return obj
}

func (a *app) logsCommand() *cobra.Command {
	var follow bool
	c := &cobra.Command{
		Use:   "logs [-f] ID",
		Short: "print a run's output; -f follows it until it ends",
		Long: `logs prints the output of the run ID (hoist runs lists them; a unique prefix
of 8 or more characters will do) on one host: all of it while the run goes
on, the last 64 KiB of each stream once it ended. With -f it follows the
run until it ends, also a run whose client was killed or lost its
connection; Ctrl-C then asks the host to stop the run, as hoist run's own
Ctrl-C does.`,
		Example: `  hoist -H web1 logs 3f2a9c1e
  hoist -H web1 logs -f 3f2a9c1e-7d1b-4c1a-9f3e-2b8d4e6a0c11`,
		Args: exactArgs(1, "[-f] ID (a run's id, as hoist runs lists them)"),
		RunE: func(_ *cobra.Command, args []string) error { return a.logs(args[0], follow) },
	}
	c.Flags().BoolVarP(&follow, "follow", "f", false, "follow the run until it ends")
	return c
}

func (a *app) logs(id string, follow bool) error {
	targets, err := a.targets()
	if err != nil {
		return err
	}
	if len(targets) != 1 {
		return usageErr("logs works on one host: a run's id is its host's")
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stop := make(chan struct{})
	var once sync.Once
	a.interrupted(ctx, func(os.Signal) {
		if !follow {
			cancel()
			return
		}
		once.Do(func() { close(stop) })
		if a.reach.interrupt() {
			a.note("asking the host to stop the run; interrupt again to leave it running")
		}
	}, func(os.Signal) { cancel() })
	return a.fleet(ctx, func(ctx context.Context, l *lock.Lock) result {
		full, err := a.runID(ctx, l, id)
		if err != nil {
			return result{outcome: outcome{err: err}}
		}
		name := l.Transport().Target()
		stdout, stderr := io.Writer(a.stdout), io.Writer(a.con)
		if a.g.json {
			// stdout carries only the JSON result: the output goes to
			// stderr, by host, as run's does.
			pout, perr := newPrefixWriter(a.con, name+": "), newPrefixWriter(a.con, name+": ")
			defer pout.Flush()
			defer perr.Flush()
			stdout, stderr = pout, perr
		}
		rec, err := l.Logs(ctx, full, lock.LogOptions{Follow: follow, Stdout: stdout, Stderr: stderr, Stop: stop,
			Cut: func(stream string, n int64) {
				a.say(name, "the first %d bytes of its %s are no longer kept (a finished run keeps the last 64 KiB)", n, stream)
			}})
		if errors.Is(err, lock.ErrNoRun) {
			err = fmt.Errorf("%w: %s (hoist runs lists them; gc removes records after --keep-runs)", err, full)
		}
		if err != nil {
			return result{outcome: outcome{err: err}}
		}
		res := result{json: &output.Logs{RunRecord: runJSON(rec)}}
		switch {
		case rec.Running():
			a.say(name, "run %s is still running (hoist logs -f follows it)", full)
		case rec.Exited:
			a.say(name, "run %s ended with status %d", full, rec.Status)
			if follow {
				// Following a run ends like the run: with its status.
				res.ran, res.status = true, rec.Status
			}
		default:
			a.say(name, "run %s ended; its status is unknown (its host command was killed)", full)
		}
		return res
	})
}

// runID resolves a unique prefix of a run's id on the host.
func (a *app) runID(ctx context.Context, l *lock.Lock, id string) (string, error) {
	if lock.ValidToken(id) {
		return id, nil
	}
	if len(id) < 8 || strings.Trim(id, "0123456789abcdef-") != "" {
		return "", fmt.Errorf("%q is not a run id: give the id hoist runs lists, or 8 or more of its first characters", printable(id))
	}
	runs, err := l.Runs(ctx)
	if err != nil {
		return "", err
	}
	var found []string
	for _, r := range runs {
		if strings.HasPrefix(r.ID, id) {
			found = append(found, r.ID)
		}
	}
	switch len(found) {
	case 0:
		return "", fmt.Errorf("no run starts with %s (hoist runs lists them)", id)
	case 1:
		return found[0], nil
	}
	return "", fmt.Errorf("%d runs start with %s; give more of the id", len(found), id)
}
