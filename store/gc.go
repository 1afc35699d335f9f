package store

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/hoistdev/hoist/lock"
	"github.com/hoistdev/hoist/shellcmd"
)

// Kept is a runtime or stage gc left alone, and why: current, previous,
// pinned, in-use, newest, or fresh (a stage still being written).
type Kept struct{ ID, Why string }

// GCResult says what a collection did (or, with DryRun, would do).
type GCResult struct {
	// NoStore: there is no store; nothing was created.
	NoStore bool
	// Skipped: the lock was held; nothing was touched. Holder says by whom.
	Skipped bool
	Holder  lock.State
	Kept    []Kept
	// Deleted are the runtimes removed (planned, with DryRun).
	Deleted []string
	// Swept are the abandoned stages and leftovers removed (planned).
	Swept []string
	// Failed are victims that could not be removed completely; what is left
	// of each is in the store under a .trash- name, swept by a later gc.
	Failed []string
	DryRun bool
}

// GC collects garbage: it tries the lock once, never waits, and skips a busy
// store. It keeps current, previous, pinned runtimes and those a running
// process uses, plus the keep newest others; deletes the rest (each moved
// aside and checked again first); and sweeps stages nothing has written to
// for the stale period. With dryRun it only says what it would do.
func (s *Store) GC(ctx context.Context, keep int, dryRun bool, ev lock.Events) (*GCResult, error) {
	p := s.wire().Params()
	p.Keep, p.DryRun, p.KeepRuns = keep, dryRun, cmp.Or(s.KeepRuns, DefaultKeepRuns)
	r, err := s.wire().Exec(ctx, shellcmd.Render(shellcmd.OpGC, p), ev, nil)
	if err != nil {
		return nil, err
	}
	res := &GCResult{DryRun: dryRun}
	for _, v := range r.Verdicts {
		switch v.Verb {
		case shellcmd.VerbKeep:
			id, why := v.GCItem()
			res.Kept = append(res.Kept, Kept{ID: id, Why: why})
		case shellcmd.VerbDelete:
			if id, state := v.GCItem(); state == "failed" {
				res.Failed = append(res.Failed, id)
			} else {
				res.Deleted = append(res.Deleted, id)
			}
		case shellcmd.VerbSweep:
			path, _ := v.GCItem()
			res.Swept = append(res.Swept, path)
		case shellcmd.VerbNoProc:
			return res, ErrNoProcessCheck
		}
	}
	err = s.err(r, "gc")
	if err == nil && len(res.Failed) > 0 {
		err = fmt.Errorf("gc could not remove %s completely (what is left is under .trash- names, which a later gc sweeps); check permissions under the store", strings.Join(res.Failed, ", "))
	}
	var busy *lock.BusyError
	switch {
	case errors.As(err, &busy):
		res.Skipped, res.Holder = true, busy.Holder
		return res, nil
	case errors.Is(err, lock.ErrNoStore):
		res.NoStore = true
		return res, nil
	}
	return res, err
}
