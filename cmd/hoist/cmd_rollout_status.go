package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/hoistdev/hoist/cmd/hoist/output"
	"github.com/hoistdev/hoist/store"
)

func (a *app) rolloutStatusCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "status [ID]",
		Short: "what each host has recorded of a rollout, read-only",
		Long: `rollout status reads, on each host, the records of rollout ID (its own,
and those of the reverts of --on-fail revert) without the lock, and says
the host's state in it: prepared (nothing switched yet), switched (not
finished), in-doubt (voted ready, with no outcome), healthy (finished on the
runtime rolled out), reverted (finished on the one before, by itself or by
the rollout's revert), unhealthy (finished by the local rule on a runtime
that then failed its checks), unfinished (a revert that did not finish),
overridden, no-record, or journal (a record that is not what hoist makes:
left alone, never followed). Each record's mode, from, to, since, and each
of its parts, and what current names now. Without ID: the latest rollout
recorded on the given hosts, found in the same host command, and the rows
come once every host answered. It changes nothing.`,
		Example: `  hoist --hosts-file fleet rollout status
  hoist -H web1,web2 rollout status 20261201T180233Z-3f9a2c --json`,
		Args: func(c *cobra.Command, args []string) error {
			if len(args) > 1 {
				return usageErr("usage: %s [ID]", c.CommandPath())
			}
			if len(args) == 1 && !store.ValidRolloutID(args[0]) {
				return usageErr("%q is not a rollout id (<UTC time>-<6 hex>, as rollout prints first)", args[0])
			}
			return nil
		},
		RunE: func(_ *cobra.Command, args []string) error {
			id := ""
			if len(args) == 1 {
				id = args[0]
			}
			return a.rolloutStatus(id)
		},
	}
}

func (a *app) rolloutStatus(id string) error {
	if id != "" {
		return a.storeCommand(func(ctx context.Context, s *store.Store, _ <-chan struct{}) result {
			st, err := s.RolloutStatus(ctx, id)
			if err != nil {
				return result{outcome: outcome{err: err}}
			}
			return rolloutStatusResult(s.Lock().Transport().Target(), st)
		})
	}
	// Without ID, one host command per host: each says the records of
	// the latest rollout it recorded. The latest of those is the fleet's,
	// and a host whose own latest is older has no record of it (one would
	// be its latest, reverts aside, and a revert's record is made only on
	// a host the rollout switched): its row is no-record, with what
	// current names there, or journal when it keeps something of that id
	// that is not a record (Odd).
	return a.storeCommandThen(func(ctx context.Context, s *store.Store, _ <-chan struct{}) result {
		st, err := s.RolloutStatus(ctx, "")
		if err != nil {
			return result{outcome: outcome{err: err}}
		}
		return result{rollout: st}
	}, func(rs []result) {
		latest := ""
		for _, r := range rs {
			if r.rollout != nil {
				latest = max(latest, r.rollout.ID)
			}
		}
		for i, r := range rs {
			st := r.rollout
			if st == nil {
				continue
			}
			if st.ID != latest {
				old := st
				st = &store.RolloutStatus{ID: latest, Current: old.Current}
				if p, ok := old.Odd[latest]; ok {
					st.Own = &store.RolloutRecord{ID: latest, Trouble: p}
				}
			}
			rs[i] = rolloutStatusResult(r.host, st)
			rs[i].host = r.host
		}
	})
}

// rolloutStatusResult is a host's rows: its state, then a line per record.
func rolloutStatusResult(host string, st *store.RolloutStatus) result {
	state := st.State()
	obj := &output.RolloutStatus{Rollout: st.ID, State: state, Current: st.Current, Records: []output.RolloutRecord{}}
	cur := st.Current
	if cur == "" {
		cur = "nothing"
	}
	r := result{json: obj}
	if st.ID == "" {
		r.data = host + "  no rollout recorded here; current " + cur
		return r
	}
	r.data = fmt.Sprintf("%s  %s  rollout %s  current %s", host, state, st.ID, cur)
	recs := st.Reverts
	if st.Own != nil {
		recs = append([]*store.RolloutRecord{st.Own}, recs...)
	}
	for _, rec := range recs {
		o := output.RolloutRecord{ID: rec.ID, Mode: rec.Mode, From: rec.From, To: rec.To, Since: since(rec.Since),
			RevertOf: rec.RevertOf, Parts: map[string]string{}, Trouble: rec.Trouble}
		line := "  " + rec.ID
		if rec.Plan != nil {
			from := rec.From
			if from == "" {
				from = "nothing"
			}
			line += fmt.Sprintf("  %s  %s -> %s", orDash(rec.Mode), from, orDash(rec.To))
			if rec.RevertOf != "" {
				line += "  revert-of " + rec.RevertOf
			}
			if o.Since != "" {
				line += "  since " + o.Since
			}
		}
		var parts []string
		for _, p := range rec.Parts {
			o.Parts[p.Name] = p.Value
			if p.Value == "file" {
				parts = append(parts, p.Name)
			} else {
				parts = append(parts, p.Name+" -> "+p.Value)
			}
		}
		if len(parts) > 0 {
			line += "  " + strings.Join(parts, ", ")
		}
		if rec.Trouble != "" {
			line += "  journal: " + rec.Trouble + " is not what hoist makes; left alone, not followed: look at it"
		}
		obj.Records = append(obj.Records, o)
		r.more = append(r.more, line)
	}
	return r
}

// since is a plan's since= (seconds since the epoch, by the host's clock)
// in RFC 3339, UTC; "" when it does not parse.
func since(s string) string {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return ""
	}
	return time.Unix(n, 0).UTC().Format(time.RFC3339)
}
