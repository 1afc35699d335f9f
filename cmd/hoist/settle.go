package main

import (
	"fmt"

	"github.com/hoistdev/hoist/cmd/hoist/output"
	"github.com/hoistdev/hoist/store"
)

// What the local rule did with an earlier rollout's unfinished record on a
// host (docs/rollout.md, "The local rule"): a line for a person, and for a
// settled runtime that failed its checks, the host's error (exit 4).

// settleLine says one settle, and how its checks went after it.
func settleLine(st store.Settle) string {
	where := "back on " + st.Runtime
	if st.Side == "to" {
		where = "finished on " + st.Runtime
	}
	if st.Runtime == "" {
		where = "finished"
	}
	how := ""
	switch st.Checks {
	case "healthy":
		how = ", which passed its checks after the settle"
	case "unhealthy":
		how = ", which failed its checks after the settle (" + st.Why + ")"
	case "unchecked":
		how = ", which has no --check to run after the settle"
	case "old":
		how = "; its checks were not re-run (the record, of an older hoist, does not keep them)"
	}
	line := fmt.Sprintf("rollout %s was settled here by the local rule: %s%s", st.ID, where, how)
	if st.Dialled > 0 && st.Checks != "" && st.Checks != "old" {
		line += fmt.Sprintf("; its %d http/tcp checks not run by the local rule", st.Dialled)
	}
	return line
}

// settlesJSON is sts for --json.
func settlesJSON(sts []store.Settle) []output.Settle {
	var o []output.Settle
	for _, st := range sts {
		o = append(o, output.Settle{Rollout: st.ID, Side: st.Side, Runtime: st.Runtime, Checks: st.Checks, Dialled: st.Dialled, Why: st.Why})
	}
	return o
}

// settledError is a host whose settled runtime failed its checks after the
// settle: it stays current, is not switched again, and its record is
// finished (not settled again).
type settledError struct{ st store.Settle }

func (e *settledError) Error() string {
	return fmt.Sprintf("rollout %s was settled here by the local rule, and %s failed its checks after the settle (%s): it stays current and is not switched again (the record is finished); check the service",
		e.st.ID, e.st.Runtime, e.st.Why)
}

func (e *settledError) Unwrap() error { return store.ErrSettledUnhealthy }

// settles prints a line per settle that went well (or was not checked),
// on host name, and returns the error of the first that failed its
// checks (nil for none).
func (a *app) settles(name string, sts []store.Settle) error {
	var err error
	for _, st := range sts {
		if st.Unhealthy() {
			if err == nil {
				err = &settledError{st}
			}
			continue
		}
		a.con.line(fmt.Sprintf("hoist: %s: %s", printable(name), printable(settleLine(st))))
	}
	return err
}
