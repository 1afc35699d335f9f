package main

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"al.essio.dev/pkg/shellescape"
	"github.com/spf13/pflag"

	"github.com/hoistdev/hoist/store"
	"github.com/hoistdev/hoist/transport"
)

// The resume of a rollout in batches (docs/rollout.md, "Resume of a
// rollout in batches"): every host's record keeps the rollout's plan (its
// hosts and planArgs); a resume whose hosts all agree on it settles the
// records, then rolls the plan's runtime out again, under a new id, to
// the plan's hosts with the plan's options: the hosts already on it take
// no part.

// planArgs are the options a rollout's plan keeps, in one canonical form
// (--flag=value, in a fixed order) that parsePlanArgs reads back and
// checks: what decides what a host goes through, and nothing else
// (neither --force nor --name, which named the artifact).
func (o rolloutOptions) planArgs() []string {
	a := []string{"--canary=" + strconv.Itoa(o.canary)}
	if o.batch != "" {
		a = append(a, "--batch="+o.batch)
	}
	a = append(a, "--wait="+o.wait.String(), "--max-fail="+o.maxFail, "--on-fail="+o.onFail)
	if o.skipUnreachable {
		a = append(a, "--skip-unreachable")
	}
	for _, v := range o.exec {
		a = append(a, "--check="+v)
	}
	for _, v := range o.http {
		a = append(a, "--check-http="+v)
	}
	for _, v := range o.tcp {
		a = append(a, "--check-tcp="+v)
	}
	if o.restart != "" {
		a = append(a, "--restart="+o.restart)
	}
	return append(a, "--check-interval="+o.interval.String(), "--check-timeout="+o.timeout.String(),
		"--check-deadline="+o.deadline.String(), "--stable="+o.stable.String())
}

// parsePlanArgs reads a plan's options: only those planArgs writes, in
// its form and order (what planArgs gives back for them), each valid as
// rollout takes it.
func parsePlanArgs(args []string) (rolloutOptions, error) {
	o := rolloutOptions{canary: -1, maxFail: "0", onFail: "stop", checkFlags: newCheckFlags()}
	f := pflag.NewFlagSet("plan", pflag.ContinueOnError)
	f.SetOutput(io.Discard)
	o.addBatchFlags(f)
	for _, v := range args {
		if !strings.HasPrefix(v, "--") || v == "--" {
			return o, fmt.Errorf("%q is not an option of a rollout's plan", v)
		}
	}
	if err := f.Parse(args); err != nil {
		return o, err
	}
	if f.NArg() != 0 || !slices.Equal(o.planArgs(), args) {
		return o, errors.New("its options are not in the form hoist writes")
	}
	if _, err := o.batchChecks(); err != nil {
		return o, err
	}
	return o, nil
}

// batchGoOn is what a resume of a rollout in batches goes on with: the
// plan's runtime, options and hosts, and the targets that are those
// hosts, in the plan's order.
type batchGoOn struct {
	to      string
	opts    rolloutOptions
	args    []string
	plan    store.BatchPlan
	targets []string
	// unvouched is the plan's hosts that keep neither a record of it
	// nor a witness of its plan: the options would run there on the
	// word of the other hosts' records.
	unvouched []string
	// witnessed: no host keeps a record of the rollout (its client
	// stopped after staging, before its first batch), and the plan is
	// its witnesses'.
	witnessed bool
}

// batchPlan reads the plan of rollout id from the records of the reached
// workers that have a batch record of it: nil when none has a plan (an
// older hoist's records: the resume settles them and says how to go on).
// An error, for a resume that must change nothing: the records disagree
// (some hosts have a plan others do not, or another one), a host's
// witness of the plan (written as it staged) says another runtime or
// plan, the plan does not parse, or one of its hosts is not among the
// targets (ws). A host with a witness that agrees vouched for the plan as
// one with a record did.
func batchPlan(id string, ws, reached []*worker) (*batchGoOn, error) {
	type group struct {
		key   string
		names []string
	}
	var groups []*group
	var first *worker
	for _, w := range reached {
		if w.rs == nil || !w.rs.Record.Local() {
			continue
		}
		r := w.rs.Record
		key := r.To + " " + r.Plan
		if r.Plan == "" {
			key = ""
		}
		i := slices.IndexFunc(groups, func(g *group) bool { return g.key == key })
		if i < 0 {
			groups = append(groups, &group{key: key})
			i = len(groups) - 1
		}
		groups[i].names = append(groups[i].names, w.name)
		if first == nil {
			first = w
		}
	}
	what := "; roll the runtime out again with the options you mean (each host settles its record first)"
	if len(groups) == 0 && !slices.ContainsFunc(reached, func(w *worker) bool { return w.rs != nil && w.rs.Record.Found }) {
		return witnessedPlan(id, ws, reached, what)
	}
	if len(groups) == 0 || (len(groups) == 1 && groups[0].key == "") {
		return nil, nil
	}
	if len(groups) > 1 {
		var parts []string
		for i, g := range groups {
			which := "another plan"
			switch {
			case g.key == "":
				which = "no plan"
			case i == 0:
				which = "one plan"
			}
			parts = append(parts, printable(strings.Join(g.names, ", "))+": "+which)
		}
		return nil, fmt.Errorf("rollout %s: its records do not agree on its plan (%s): nothing was changed; look at them with hoist rollout status %s%s",
			id, strings.Join(parts, "; "), id, what)
	}
	var names []string
	var witnesses []*store.RolloutPlan
	for _, w := range reached {
		if w.rs != nil {
			names, witnesses = append(names, w.name), append(witnesses, w.rs.Witness)
		}
	}
	vouched, err := witnessCheck(id, groups[0].key, names, witnesses)
	if err != nil {
		return nil, err
	}
	vouched = append(vouched, groups[0].names...)
	r := first.rs.Record
	return planGoOn(id, "records", r.To, r.Plan, vouched, ws, what)
}

// planGoOn is what a resume goes on with from the plan (to, line) that
// whose (the records, or the witnesses) of rollout id keep, vouched for by
// the hosts named vouched: an error when it cannot be used.
func planGoOn(id, whose, to, line string, vouched []string, ws []*worker, what string) (*batchGoOn, error) {
	bad := func(err error) error {
		return fmt.Errorf("rollout %s: the plan its %s keep cannot be used (%s): nothing was changed%s", id, whose, printable(err.Error()), what)
	}
	if !store.ValidName(to) {
		return nil, bad(fmt.Errorf("%q is not a runtime id", to))
	}
	plan, err := store.ParseBatchPlan(line)
	if err != nil {
		return nil, bad(err)
	}
	opts, err := parsePlanArgs(plan.Options)
	if err != nil {
		return nil, bad(err)
	}
	g := &batchGoOn{to: to, opts: opts, args: plan.Options, plan: plan}
	var missing []string
	for i, ph := range plan.Hosts {
		if slices.Index(plan.Hosts, ph) != i {
			return nil, bad(fmt.Errorf("%s is named twice", ph))
		}
		j := slices.IndexFunc(ws, func(w *worker) bool { return w.name == ph || transport.RedactTarget(w.target) == ph })
		if j < 0 {
			missing = append(missing, ph)
			continue
		}
		g.targets = append(g.targets, ws[j].target)
		if !slices.Contains(vouched, ws[j].name) {
			g.unvouched = append(g.unvouched, ws[j].name)
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("rollout %s: its hosts %s are not among the targets: nothing was changed; give every host of the rollout (-H, --hosts-file) to go on with it",
			id, printable(strings.Join(missing, ", ")))
	}
	return g, nil
}

// planLine is the options a resume goes on with, as a command line.
func planLine(args []string) string {
	return printable(shellescape.QuoteCommand(args))
}
