package lock

import (
	"context"
	"errors"
	"io"
	"time"

	"github.com/hoistdev/hoist/remote"
	"github.com/hoistdev/hoist/shellcmd"
)

// ErrNoRun: the host has no record of the run asked for (gc removes records
// after a week).
var ErrNoRun = errors.New("the host has no record of that run")

// RunRecord is what the host keeps of one run (runs/<id>/).
type RunRecord struct {
	ID    string
	Start time.Time
	// End is zero while the run goes on.
	End time.Time
	// Status is the exit status, valid when Exited. A run that ended
	// without anyone seeing its status (its host command was killed) has
	// End set and Exited false.
	Status int
	Exited bool
	Who    string
	// Command is the whole command line, as the client sent it.
	Command string
}

// Running reports whether the run had not ended when the host looked.
func (r RunRecord) Running() bool { return r.End.IsZero() }

// LogOptions configure [Lock.Logs].
type LogOptions struct {
	// Follow waits for the run to end, printing what it writes.
	Follow bool
	// Offsets are the bytes of stdout and stderr already seen; output
	// starts after them.
	Offsets [2]int64
	// Stdout and Stderr receive the output.
	Stdout, Stderr io.Writer
	// Stop, when closed, asks the host to stop the run (as its own
	// client's Ctrl-C does).
	Stop <-chan struct{}
	// Cut, when set, is told of output a finished run no longer keeps
	// (it keeps the last 64 KiB of each stream).
	Cut func(stream string, bytes int64)
}

// Runs lists the run records on the host, oldest first.
func (l *Lock) Runs(ctx context.Context) ([]RunRecord, error) {
	r, err := l.exec(ctx, remote.Call{Fragment: shellcmd.Render(shellcmd.OpRuns, l.params(""))})
	if err != nil {
		return nil, err
	}
	if r.Last().Verb != shellcmd.VerbListed {
		return nil, l.failure("runs", r)
	}
	var out []RunRecord
	for _, v := range r.Verdicts {
		if v.Verb == shellcmd.VerbRun {
			out = append(out, RunRecord(v.Run()))
		}
	}
	return out, nil
}

// Logs prints a run's output (from opts.Offsets) and returns its record;
// with opts.Follow it waits for the run to end. ErrNoRun when the host has
// no such run.
func (l *Lock) Logs(ctx context.Context, id string, opts LogOptions) (RunRecord, error) {
	if !ValidToken(id) {
		return RunRecord{}, badRun(id)
	}
	p := l.params("")
	p.Run, p.Offsets, p.Follow = id, opts.Offsets, opts.Follow
	var rec RunRecord
	r, err := l.waiting(ctx, remote.Call{
		Fragment: shellcmd.Render(shellcmd.OpLogs, p),
		Stdout:   orDiscard(opts.Stdout),
		Stderr:   orDiscard(opts.Stderr),
	}, Events{}, opts.Stop, func(v shellcmd.Verdict, _ *control) {
		if v.Verb == shellcmd.VerbCut && opts.Cut != nil {
			opts.Cut(v.Cut())
		}
	})
	if err != nil {
		return rec, err
	}
	v := r.Last()
	switch v.Verb {
	case shellcmd.VerbRunState:
		rec = RunRecord(v.Run())
		rec.ID = id
		return rec, nil
	case shellcmd.VerbNoRun:
		return rec, ErrNoRun
	}
	return rec, l.failure("logs", r)
}

func badRun(id string) error {
	return errors.New("\"" + shellcmd.Printable(id) + "\" is not a run id (hoist runs lists them)")
}
