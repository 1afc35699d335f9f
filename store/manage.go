package store

import (
	"context"
	"fmt"
	"time"

	"github.com/hoistdev/hoist/lock"
	"github.com/hoistdev/hoist/remote"
	"github.com/hoistdev/hoist/shellcmd"
)

// Runtime is one promoted, verified runtime.
type Runtime struct {
	ID       string
	Name     string
	Size     int64
	Promoted time.Time
	Current  bool
	Previous bool
	Pinned   bool
	// Bad is the runtime's bad mark on the host (it failed its checks
	// there), nil when it has none.
	Bad *shellcmd.BadMark
}

// List returns the runtimes hoist promoted, newest first: in the order the
// host promoted them, which each promotion records under the lock, as the
// host lists them (gc keeps the newest by the same order, ties included).
// It changes nothing; a missing store is an empty list.
func (s *Store) List(ctx context.Context) ([]Runtime, error) {
	l, err := s.Listing(ctx)
	if err != nil {
		return nil, err
	}
	return l.Runtimes, nil
}

// Listing is what a list finds on a host.
type Listing struct {
	// Runtimes are List's.
	Runtimes []Runtime
	// Unfinished are the rollout records the store keeps with no done (a
	// rollout whose host command died, or one under way), which the list
	// names and does not settle.
	Unfinished []shellcmd.UnfinishedRecord
	// NoStore reports that the host has no store at all.
	NoStore bool
	// Witnessed is the runtime the witness of a rollout's plan names, when
	// the list (StageList's) wrote one.
	Witnessed string
}

// Listing is List with the rollout records left unfinished, in the same
// host command. It changes nothing.
func (s *Store) Listing(ctx context.Context) (*Listing, error) {
	return s.listWith(ctx, s.wire().Params())
}

// StageList is List at the end of the staging of rollout (a rollout in
// batches, docs/rollout.md "Resume of a rollout in batches"): in the same
// host command the host writes the witness of the rollout's plan
// (runtimes/.rollouts/.plan-<rollout>), once, when ref (an id, a name, a
// prefix: what Resolve finds in the list) names a runtime there that is
// not current. witnessed is the runtime the witness names, "" when none
// was written (a host already on it, a runtime it does not have, a
// witness already there or one that could not be written: a resume then
// takes the host as one that did not vouch for the plan).
func (s *Store) StageList(ctx context.Context, rollout, ref string, plan BatchPlan) (_ []Runtime, witnessed string, _ error) {
	f, err := plan.Fields()
	if err != nil {
		return nil, "", err
	}
	p := s.wire().Params()
	p.Health.ID, p.Health.Plan, p.ID = rollout, f, ref
	l, err := s.listWith(ctx, p)
	if err != nil {
		return nil, "", err
	}
	return l.Runtimes, l.Witnessed, nil
}

// listWith is the list with params p.
func (s *Store) listWith(ctx context.Context, p shellcmd.Params) (*Listing, error) {
	r, err := s.wire().Exec(ctx, shellcmd.Render(shellcmd.OpList, p), lock.Events{}, nil)
	if err != nil {
		return nil, err
	}
	l := &Listing{}
	for _, v := range r.Verdicts {
		switch v.Verb {
		case shellcmd.VerbBad:
			if n := len(l.Runtimes); n > 0 && l.Runtimes[n-1].ID == v.Bad().ID {
				b := v.Bad()
				l.Runtimes[n-1].Bad = &b
			}
		case shellcmd.VerbRuntime:
			rt := v.Runtime()
			l.Runtimes = append(l.Runtimes, Runtime{ID: rt.ID, Name: rt.Name, Size: rt.Size, Promoted: rt.Promoted,
				Current: rt.Current, Previous: rt.Previous, Pinned: rt.Pinned})
		case shellcmd.VerbUnfinished:
			l.Unfinished = append(l.Unfinished, v.Unfinished())
		case shellcmd.VerbWitnessed:
			l.Witnessed = v.Rollout().To
		}
	}
	switch r.Last().Verb {
	case shellcmd.VerbListed, shellcmd.VerbNoStore:
		l.NoStore = r.Last().Verb == shellcmd.VerbNoStore
		return l, nil
	}
	return nil, s.err(r, "list")
}

// Switch says what an activation or a rollback did.
type Switch struct {
	// Current is the runtime current now points at; Previous is what it
	// pointed at before ("" when nothing did).
	Current, Previous string
}

// Activate points current at id, under the lock (waiting up to wait), and
// records the old target as previous. The switch is a rename over the old
// pointer: current never disappears, even for a moment.
func (s *Store) Activate(ctx context.Context, id string, wait time.Duration, ev lock.Events) (*Switch, error) {
	if !ValidName(id) {
		return nil, fmt.Errorf("%w: %q is not a runtime id", ErrNotFound, id)
	}
	p := s.wire().Params()
	p.ID, p.Wait = id, wait
	return s.switchTo(ctx, shellcmd.Render(shellcmd.OpActivate, p), ev)
}

// Rollback points current back at previous, and previous at what was
// current, under the lock.
func (s *Store) Rollback(ctx context.Context, wait time.Duration, ev lock.Events) (*Switch, error) {
	return s.RollbackTo(ctx, "", wait, ev)
}

// RollbackTo is Rollback to the runtime id, any runtime on the host (""
// means previous). It is an activation that the history records as a
// rollback.
func (s *Store) RollbackTo(ctx context.Context, id string, wait time.Duration, ev lock.Events) (*Switch, error) {
	if id != "" && !ValidName(id) {
		return nil, fmt.Errorf("%w: %q is not a runtime id", ErrNotFound, id)
	}
	p := s.wire().Params()
	p.ID, p.Wait = id, wait
	return s.switchTo(ctx, shellcmd.Render(shellcmd.OpRollback, p), ev)
}

func (s *Store) switchTo(ctx context.Context, fr shellcmd.Fragment, ev lock.Events) (*Switch, error) {
	r, err := s.wire().Exec(ctx, fr, ev, nil)
	if err != nil {
		return nil, err
	}
	var sw *Switch
	for _, v := range r.Verdicts {
		switch v.Verb {
		case shellcmd.VerbActivated:
			sw = &Switch{}
			sw.Current, sw.Previous = v.Activated()
		case shellcmd.VerbNotFound:
			return nil, ErrNotFound
		case shellcmd.VerbNoPrevious:
			return nil, ErrNoPrevious
		case shellcmd.VerbNoStore:
			return nil, ErrNoStore
		}
	}
	if err := s.err(r, "activate"); err != nil {
		return sw, err
	}
	if sw == nil {
		return nil, s.err(&remote.Reply{Status: r.Status, Noise: r.Noise}, "activate")
	}
	return sw, nil
}

// Pin keeps id from garbage collection (unpin: lets it go again), under
// the lock.
func (s *Store) Pin(ctx context.Context, id string, unpin bool, wait time.Duration, ev lock.Events) error {
	if !ValidName(id) {
		return fmt.Errorf("%w: %q is not a runtime id", ErrNotFound, id)
	}
	p := s.wire().Params()
	p.ID, p.Unpin, p.Wait = id, unpin, wait
	r, err := s.wire().Exec(ctx, shellcmd.Render(shellcmd.OpPin, p), ev, nil)
	if err != nil {
		return err
	}
	done := false
	for _, v := range r.Verdicts {
		switch v.Verb {
		case shellcmd.VerbNotFound:
			return ErrNotFound
		case shellcmd.VerbNoStore:
			return ErrNoStore
		case shellcmd.VerbPinned, shellcmd.VerbUnpinned:
			done = true
		}
	}
	if err := s.err(r, "pin"); err != nil {
		return err
	}
	if !done {
		return s.err(&remote.Reply{Status: r.Status, Noise: r.Noise}, "pin")
	}
	return nil
}
