package main

import (
	"context"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/hoistdev/hoist/cmd/hoist/output"
	"github.com/hoistdev/hoist/shellcmd"
	"github.com/hoistdev/hoist/store"
)

type listOptions struct{ history bool }

func (a *app) listCommand() *cobra.Command {
	var o listOptions
	c := &cobra.Command{
		Use:   "list",
		Short: "the runtimes on each host, newest first",
		Long: `list shows the runtimes on each host as a table, newest first: id, name,
size, when it was promoted, and whether it is active, previous, pinned or
marked bad (it failed its checks on that host: when, and why).
A host that keeps an unfinished rollout record (its rollout's client or
host command died, or the rollout is under way) says so on stderr, with
the rollout status that shows it, and whether the record's hold owns the
store lock (under way) or not (interrupted: then the rollout resume that
finishes it). It changes nothing.`,
		Example: `  hoist -H web1,web2 list
  hoist -H web1 list --json
  hoist -H web1 list --history`,
		Args: noArgs,
		RunE: func(*cobra.Command, []string) error {
			if o.history {
				return a.history()
			}
			return a.list()
		},
	}
	c.Flags().BoolVar(&o.history, "history", false, "show what was active when instead (as hoist history)")
	return c
}

func (a *app) list() error {
	return a.storeCommand(func(ctx context.Context, s *store.Store, _ <-chan struct{}) result {
		name := s.Lock().Transport().Target()
		listing, err := s.Listing(ctx)
		if err != nil {
			return result{outcome: outcome{err: err}}
		}
		list := listing.Runtimes
		rows := []output.Runtime{}
		t := newTable("ID", "NAME", "SIZE", "PROMOTED", "STATE")
		for _, rt := range list {
			row := output.Runtime{
				ID: rt.ID, Name: orDash(rt.Name), Size: rt.Size, Promoted: rt.Promoted.UTC().Format(time.RFC3339),
				Active: rt.Current, Previous: rt.Previous, Pinned: rt.Pinned,
			}
			var state []string
			for _, f := range []struct {
				on   bool
				name string
			}{{rt.Current, "active"}, {rt.Previous, "previous"}, {rt.Pinned, "pinned"}} {
				if f.on {
					state = append(state, f.name)
				}
			}
			if b := rt.Bad; b != nil {
				row.Bad = &output.BadMark{When: b.When.UTC().Format(time.RFC3339), Why: b.Why, Rollout: b.Rollout}
				state = append(state, "bad since "+b.When.Local().Format("2006-01-02 15:04")+": "+shellcmd.Printable(b.Why))
			}
			rows = append(rows, row)
			t.row(rt.ID, orDash(rt.Name), size(rt.Size), rt.Promoted.Local().Format("2006-01-02 15:04"), strings.Join(state, ","))
		}
		r := result{json: &output.List{Runtimes: rows, UnfinishedRollouts: a.unfinished(name, listing.Unfinished, nil)}}
		if len(list) == 0 {
			r.data = name + ": no runtimes"
		} else {
			r.data, r.table = t.String(), true
		}
		return r
	})
}

func (a *app) historyCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "history",
		Short: "what was active when, and who switched it",
		Long: `history shows every switch of current on each host, oldest first: when,
by what (push --activate, activate, rollback), from which runtime to which,
who and with what command. The host appends to <root>/history under the
lock. It changes nothing.`,
		Example: `  hoist -H web1 history
  hoist -H web1 history --json`,
		Args: noArgs,
		RunE: func(*cobra.Command, []string) error { return a.history() },
	}
}

func (a *app) history() error {
	return a.storeCommand(func(ctx context.Context, s *store.Store, _ <-chan struct{}) result {
		name := s.Lock().Transport().Target()
		hist, err := s.History(ctx)
		if err != nil {
			return result{outcome: outcome{err: err}}
		}
		rows := []output.HistoryEntry{}
		t := newTable("WHEN", "ACTION", "FROM", "TO", "WHO", "COMMAND")
		for _, h := range hist {
			rows = append(rows, output.HistoryEntry{
				When: h.When.UTC().Format(time.RFC3339), Action: h.Action, From: h.From, To: h.To,
				Who: h.Who, Command: h.Command,
			})
			t.row(h.When.Local().Format("2006-01-02 15:04:05"), h.Action, orDash(h.From), h.To, orDash(h.Who), orDash(h.Command))
		}
		r := result{json: &output.History{History: rows}}
		if len(hist) == 0 {
			r.data = name + ": no history"
		} else {
			r.data, r.table = t.String(), true
		}
		return r
	})
}

// table lines up rows under a header (text/tabwriter), whatever the length
// of the names.
type table struct {
	b strings.Builder
	w *tabwriter.Writer
}

func newTable(header ...string) *table {
	t := &table{}
	t.w = tabwriter.NewWriter(&t.b, 0, 0, 2, ' ', 0)
	t.row(header...)
	return t
}

// row adds a row, each cell made printable first so that escapes count in
// the widths (and a tab in a name cannot shift a column).
func (t *table) row(cells ...string) {
	for i, c := range cells {
		cells[i] = printable(c)
	}
	fmt.Fprintln(t.w, strings.Join(cells, "\t"))
}

// String is the table without trailing blanks or the last line break.
func (t *table) String() string {
	t.w.Flush()
	lines := strings.Split(strings.TrimRight(t.b.String(), "\n"), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ")
	}
	return strings.Join(lines, "\n")
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
