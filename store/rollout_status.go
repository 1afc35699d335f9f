package store

import (
	"context"
	"fmt"

	"github.com/hoistdev/hoist/lock"
	"github.com/hoistdev/hoist/shellcmd"
)

// RolloutRecord is one record of a rollout on a host
// (runtimes/.rollouts/ID, docs/rollout.md): the rollout's own, or a revert
// of it (RevertOf). Parts are its files and links as the host found them,
// by name: "file" for a file (restart, switched, log, closed), the value
// for a link (vote, decision, outcome, done).
type RolloutRecord struct {
	ID string
	// Plan is the plan's fields (decoded); Mode, From, To, Since and
	// RevertOf are read from it.
	Plan                   map[string]string
	Mode, From, To, Since  string
	RevertOf               string
	Parts                  []RecordPart
	Switched, Done, Closed bool
	// Trouble is the path of what is not what hoist makes (the record
	// directory, or one of its parts): the host did not read it further.
	Trouble string
}

// RecordPart is one file or link of a record.
type RecordPart struct{ Name, Value string }

// Part is the value of the record's part name ("" when absent).
func (r *RolloutRecord) Part(name string) string {
	for _, p := range r.Parts {
		if p.Name == name {
			return p.Value
		}
	}
	return ""
}

// RolloutStatus is what a host has recorded of one rollout.
type RolloutStatus struct {
	// ID is the rollout read: the one asked for, or the latest recorded
	// there ("" when none is).
	ID string
	// Own is the rollout's own record (nil when the host has none);
	// Reverts are the records of its reverts.
	Own     *RolloutRecord
	Reverts []*RolloutRecord
	// Current is what current names now ("" nothing).
	Current string
	// Odd, read when id is "", holds the path of each entry named like
	// another rollout's id that is not a record (a link, a file, a
	// directory without a plan), by that id: what the host would say as
	// a record's trouble were that id asked for.
	Odd map[string]string
	// Witnessed, read when id is "", is the latest rollout witnessed
	// there (runtimes/.rollouts/.plan-<id>, "" none): not a record, so
	// not ID's pick; a resume without ID counts it as recorded.
	Witnessed string
}

// The states [RolloutStatus.State] derives.
const (
	RSNoRecord   = "no-record"
	RSJournal    = "journal"
	RSPrepared   = "prepared"
	RSSwitched   = "switched"
	RSInDoubt    = "in-doubt"
	RSHealthy    = "healthy"
	RSReverted   = "reverted"
	RSOverridden = "overridden"
	RSUnfinished = "unfinished"
	RSUnhealthy  = "unhealthy"
)

// State is the host's state in the rollout, from its records: no-record;
// journal (a record is not what hoist makes); in-doubt (voted ready, with
// no outcome and no done); prepared (no switch yet) or switched (not
// finished); healthy (finished on to) or reverted (finished on from, by
// itself or by a revert of the rollout that finished); overridden;
// unfinished (a revert of it that has not finished); unhealthy (finished
// by the local rule, whose checks then failed on the runtime it settled
// on: the record's recheck part, or a revert's).
func (st *RolloutStatus) State() string {
	own := st.Own
	if own == nil {
		return RSNoRecord
	}
	for _, r := range append([]*RolloutRecord{own}, st.Reverts...) {
		if r.Trouble != "" {
			return RSJournal
		}
	}
	switch own.Part("done") {
	case "":
		switch {
		case own.Part("vote") == "ready" && own.Part("outcome") == "":
			return RSInDoubt
		case own.Switched:
			return RSSwitched
		}
		return RSPrepared
	case "overridden":
		return RSOverridden
	}
	if own.Part("recheck") == "unhealthy" {
		return RSUnhealthy
	}
	if own.Part("done") == "from" {
		return RSReverted
	}
	// Finished on to: a revert of the rollout may have taken it back.
	state := RSHealthy
	for _, r := range st.Reverts {
		switch {
		case r.Part("done") == "":
			return RSUnfinished
		case r.Part("recheck") == "unhealthy":
			return RSUnhealthy
		case r.Part("done") == "to":
			state = RSReverted
		}
	}
	return state
}

// RolloutStatus reads the records of rollout id on the host (its own and
// those of its reverts), or of the latest rollout recorded there when id
// is "": read-only, without the lock. A host without a store has
// recorded nothing.
func (s *Store) RolloutStatus(ctx context.Context, id string) (*RolloutStatus, error) {
	if id != "" && !ValidRolloutID(id) {
		return nil, fmt.Errorf("%q is not a rollout id (<UTC time>-<6 hex>, as rollout prints first)", id)
	}
	p := s.wire().Params()
	p.Health.ID = id
	r, err := s.wire().Exec(ctx, shellcmd.Render(shellcmd.OpRStatus, p), lock.Events{}, nil)
	if err != nil {
		return nil, err
	}
	st := &RolloutStatus{}
	var recs []*RolloutRecord
	var cur *RolloutRecord
	for _, v := range r.Verdicts {
		rp := v.Record()
		switch v.Verb {
		case shellcmd.VerbRecord:
			cur = &RolloutRecord{ID: rp.ID, Plan: rp.Plan}
			cur.Mode, cur.From, cur.To = cur.Plan["mode"], cur.Plan["from"], cur.Plan["to"]
			cur.Since, cur.RevertOf = cur.Plan["since"], cur.Plan["revert-of"]
			recs = append(recs, cur)
		case shellcmd.VerbJournal:
			if cur == nil || cur.ID != rp.ID {
				cur = &RolloutRecord{ID: rp.ID}
				recs = append(recs, cur)
			}
			cur.Trouble = rp.Path
		case shellcmd.VerbRPart:
			if cur == nil || rp.ID != cur.ID {
				continue
			}
			cur.Parts = append(cur.Parts, RecordPart{Name: rp.Name, Value: rp.Value})
			switch rp.Name {
			case "switched":
				cur.Switched = true
			case "done":
				cur.Done = true
			case "closed":
				cur.Closed = true
			}
		case shellcmd.VerbROdd:
			if st.Odd == nil {
				st.Odd = map[string]string{}
			}
			st.Odd[rp.ID] = rp.Path
		case shellcmd.VerbRWitness:
			st.Witnessed = rp.ID
		case shellcmd.VerbRStatus:
			st.ID, st.Current = v.RStatus()
		case shellcmd.VerbNoStore:
			return st, nil
		}
	}
	if err := s.err(r, "rollout status"); err != nil {
		return nil, err
	}
	if r.Last().Verb != shellcmd.VerbRStatus {
		return nil, s.err(r, "rollout status")
	}
	for _, rec := range recs {
		if rec.ID == st.ID && st.Own == nil {
			st.Own = rec
		} else {
			st.Reverts = append(st.Reverts, rec)
		}
	}
	return st, nil
}
