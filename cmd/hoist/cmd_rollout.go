package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/hoistdev/hoist/cmd/hoist/output"
	"github.com/hoistdev/hoist/lock"
	"github.com/hoistdev/hoist/store"
	"github.com/hoistdev/hoist/transport"
)

type rolloutOptions struct {
	name            string
	canary          int
	batch           string
	wait            time.Duration
	maxFail         string
	onFail          string
	skipUnreachable bool
	atomic          bool
	holdLease       time.Duration
	checkFlags
	// unvouched, for a resume that goes on (resumes is the rollout it
	// resumes) without --trust-plan: the hosts that keep neither a
	// record of that rollout nor a witness of its plan, on which its
	// plan may not run by the word of the other hosts' records alone.
	unvouched []string
	resumes   string
}

func (a *app) rolloutCommand() *cobra.Command {
	o := rolloutOptions{canary: -1, maxFail: "0", onFail: "stop", holdLease: store.DefaultHoldLease, checkFlags: newCheckFlags()}
	c := &cobra.Command{
		Use:   "rollout ARTIFACT|REF",
		Short: "push a runtime to every host, then switch them batch by batch, health-checked",
		Long: `rollout installs ARTIFACT on every host first, in parallel, and fails before
any host is switched if one cannot take it (with --skip-unreachable a host
that cannot be reached is skipped instead, and counted apart). An argument
that is not a file or a directory is a runtime already pushed, named as
activate names it (an id, a name for its newest runtime, or a prefix of
one id), found on each host: a host that does not have it fails the
rollout before any switch. It then
switches the hosts in the order given, a batch at a time: --canary hosts
first (default 1 when there are more than 2 hosts), then batches of the
sizes of --batch (1,5,25%: a percentage is of all hosts, rounded up; the
last size repeats; default: the rest at once), --wait apart. Each host's
switch is activate's health-checked sequence, with the same flags.

The rollout stops when the failures in one batch EXCEED --max-fail (a count,
or a percentage of the batch; default 0: one failure stops it). Then
--on-fail says what happens: stop (no other batch starts; hosts already
switched stay switched), revert (every host this rollout switched goes
back to what it had, health-checked the same way, the last batch first)
or continue (the next
batch starts anyway). A host that fails its checks goes back by itself.

The rollout's id is printed first, a line per batch as it goes, and at the
end a row per host: switched, reverted, unchanged, skipped, failed (back on
its previous runtime), in-doubt or unhealthy (an interrupted rollout's
record settled there first, and the runtime it settled on failed its
checks after the settle: nothing was switched there). Each host is reached
over one connection for the whole rollout. Exit status 0: every host
reached is switched and healthy; 3: the rollout stopped or reverted on
failed checks and every host is on a runtime that passed them; 4: a host
is in doubt or unhealthy, or failed its checks and so did its revert.`,
		Example: `  hoist --hosts-file fleet rollout ./build.tgz --check 'bin/healthy'
  hoist -H web1,web2,web3,web4 rollout app.tgz --batch 1,25% --wait 30s --restart 'bin/restart' --check-http http://127.0.0.1:8080/up --on-fail revert`,
		Args: exactArgs(1, "ARTIFACT|REF (a directory, .tar, .tar.gz, .tgz, .tar.xz, .tar.zst or .zip; or a runtime the hosts have)"),
		RunE: func(_ *cobra.Command, args []string) error { return a.rollout(args[0], o) },
	}
	f := c.Flags()
	f.StringVarP(&o.name, "name", "n", "", "runtime `NAME` (default: the artifact's file name without its extension)")
	o.addBatchFlags(f)
	f.BoolVar(&o.atomic, "atomic", false, "all or nothing: every host switches and is checked at once, then all stay or all go back (no --canary, --batch)")
	f.Var(durationValue{&o.holdLease}, "hold-lease", "--atomic: a host takes the rollout for gone after `D` without a word from it")
	c.AddCommand(a.rolloutStatusCommand(), a.rolloutResumeCommand())
	return c
}

// addBatchFlags adds the flags a rollout's plan keeps (planArgs): the
// batches, what a failure does, and the check flags.
func (o *rolloutOptions) addBatchFlags(f *pflag.FlagSet) {
	f.IntVar(&o.canary, "canary", -1, "switch `N` hosts first, alone (default 1 when there are more than 2 hosts)")
	f.StringVar(&o.batch, "batch", "", "then batches of these sizes, `LIST` such as 1,5,25% (percent of all hosts, rounded up; the last repeats; default: the rest at once)")
	f.Var(durationValue{&o.wait}, "wait", "wait `D` between two batches")
	// The default canary is -1, which help must not show.
	f.Lookup("canary").DefValue = "0"
	f.StringVar(&o.maxFail, "max-fail", "0", "stop when the failures in one batch exceed `N|P%` (a count, or a percentage of the batch)")
	f.StringVar(&o.onFail, "on-fail", "stop", "`WHAT` to do when the rollout stops: stop, revert (every host it switched goes back) or continue")
	f.BoolVar(&o.skipUnreachable, "skip-unreachable", false, "skip a host that cannot be reached, instead of failing the rollout before any switch")
	o.checkFlags.add(f)
}

// The states of a host in a rollout.
const (
	rsSwitched  = "switched"
	rsReverted  = "reverted"
	rsUnchanged = "unchanged"
	rsSkipped   = "skipped"
	rsFailed    = "failed"
	rsInDoubt   = "in-doubt"
	// rsUnhealthy: an earlier rollout's record settled by the local rule,
	// and the runtime it settled on failed its checks after the settle.
	rsUnhealthy = "unhealthy"
)

// rolloutHost is one host of a rollout: its goroutine holds its
// connection from staging to the end and does what the coordinator asks.
type rolloutHost struct {
	target string
	name   string
	staged chan error // once: nil when the runtime is in place
	orders chan rolloutOrder
	// Set before staged is sent, and by the coordinator after.
	from, to    string
	unreachable bool
	same        string
	state       string
	batch       int
	err         error
	health      *store.Health
	revert      *store.Health
	// settled are the records the local rule settled there first.
	settled []store.Settle
	// plan is what its record keeps of the rollout (set before its
	// first order).
	plan *store.BatchPlan
	// witnessed is the runtime its witness of the plan names, written
	// as it staged ("" for none).
	witnessed string
}

// rolloutOrder asks a host to switch to id (revert: back to id).
type rolloutOrder struct {
	id     string
	revert bool
	done   chan struct{}
}

func (a *app) rollout(source string, o rolloutOptions) error {
	if o.atomic {
		return a.rolloutAtomic(source, o)
	}
	if _, err := o.batchChecks(); err != nil {
		return err
	}
	targets, root, err := a.fleetTargets()
	if err != nil {
		return err
	}
	return a.rolloutBatches(targets, root, source, o, nil)
}

// batchChecks checks the options of a rollout in batches that do not
// depend on the hosts, and returns its checks.
func (o rolloutOptions) batchChecks() (store.Checks, error) {
	checks, err := o.checks()
	if err != nil {
		return checks, err
	}
	if o.name != "" && !store.ValidName(o.name) {
		return checks, usageErr("--name %q: use letters, digits and . _ + -, at most 64, starting with a letter or digit", o.name)
	}
	switch o.onFail {
	case "stop", "revert", "continue":
	default:
		return checks, usageErr("--on-fail %q: give stop, revert or continue", o.onFail)
	}
	if o.canary < -1 {
		return checks, usageErr("--canary %d: give 0 or more", o.canary)
	}
	if o.wait < 0 {
		return checks, usageErr("--wait: give a duration of 0 or more")
	}
	if _, err := maxFail(o.maxFail, 1); err != nil {
		return checks, err
	}
	return checks, nil
}

// rolloutBatches is a rollout in batches of source over targets, in their
// order. Its records keep its plan (store.BatchPlan): the hosts (planHosts
// when a resume goes on with a rollout: that one's; else the targets as
// reached) and o's planArgs.
func (a *app) rolloutBatches(targets []string, root lock.Root, source string, o rolloutOptions, planHosts []string) error {
	checks, err := o.batchChecks()
	if err != nil {
		return err
	}
	if _, err := batchSizes(len(targets), o.canary, o.batch); err != nil {
		return err
	}
	var art *store.Artifact
	ref, id := source, source // a resume's: the plan's runtime, a REF
	if planHosts == nil {
		art, ref, id, err = a.sourceOf(source, o.name)
		if err != nil {
			return err
		}
	}
	if art != nil {
		defer art.Close()
	}
	rid := a.rolloutHeader(id, len(targets), "")
	checks.Rollout = rid

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stop := make(chan struct{})
	a.interrupted(ctx, func(os.Signal) {
		a.reach.interrupt()
		close(stop)
		time.AfterFunc(stopGrace, cancel)
	}, func(os.Signal) { cancel() })
	checks.Stop = stop

	a.multi = len(targets) > 1
	places := &placeSet{first: map[lock.Place]string{}, log: a.log}
	hosts := make([]*rolloutHost, len(targets))
	sem := make(chan struct{}, a.g.parallel) // staging, --parallel at a time
	// The plan names every host as reached: it is known, and each host
	// writes its witness of it, once every host is named.
	wit := newWitnessing(rid, len(targets), func() (*store.BatchPlan, error) {
		plan := &store.BatchPlan{Hosts: planHosts, Options: o.planArgs()}
		if planHosts == nil {
			for _, h := range hosts {
				plan.Hosts = append(plan.Hosts, h.name)
			}
		}
		_, err := plan.Fields()
		return plan, err
	})
	var wg sync.WaitGroup
	for i, t := range targets {
		h := &rolloutHost{target: t, name: transport.RedactTarget(t), staged: make(chan error, 1), orders: make(chan rolloutOrder)}
		hosts[i] = h
		wg.Go(func() {
			ctx, end := a.reach.add(ctx, t)
			defer end()
			named := sync.OnceFunc(wit.named)
			defer named()
			called := false
			r := a.onHost(ctx, t, root, places, func(ctx context.Context, l *lock.Lock) result {
				called = true
				h.name = l.Transport().Target()
				named()
				return a.rolloutOn(ctx, h, store.New(l), art, ref, checks, sem, stop, wit)
			})
			named()
			if !called {
				h.unreachable, h.same = r.same == "", r.same
				h.staged <- r.err
			}
		})
	}
	defer wg.Wait()
	defer func() {
		for _, h := range hosts {
			close(h.orders)
		}
	}()

	// Stage everywhere first.
	var live []*rolloutHost
	failedStage := false
	for _, h := range hosts {
		h.err = <-h.staged
		part, failed := h.sortStaged(id, o.skipUnreachable)
		failedStage = failedStage || failed
		if part {
			live = append(live, h)
		}
	}
	if failedStage {
		a.con.line(fmt.Sprintf("hoist: rollout %s: the runtime could not be staged on every host: no host was switched", rid))
		return a.rolloutEnd(rid, hosts)
	}
	if err := oneRuntime(ref, hosts); err != nil {
		return fmt.Errorf("rollout %s: %w: no host was switched", rid, err)
	}
	if err := o.vouched(rid, live); err != nil {
		return err
	}
	plan, err := wit.plan()
	if err != nil {
		plan = nil
		a.con.line(fmt.Sprintf("hoist: rollout %s: %s: a resume will settle its hosts, not go on", rid, err))
	}
	for _, h := range live {
		h.plan = plan
	}
	clientStep("rollout.stage")

	// Percentages, and the default canary, are of all hosts given.
	sizes, _ := batchSizesOf(len(live), len(targets), o.canary, o.batch)
	stopped := false
	next := 0
	for b, size := range sizes {
		if stopped {
			break
		}
		if b > 0 && o.wait > 0 {
			select {
			case <-time.After(o.wait):
			case <-stop:
			}
		}
		if a.caught() != nil {
			break
		}
		batch := live[next : next+size]
		next += size
		began := time.Now()
		a.order(batch, func(h *rolloutHost) rolloutOrder { return rolloutOrder{id: h.to} })
		failed := 0
		var names []string
		for _, h := range batch {
			h.batch = b + 1
			names = append(names, h.name)
			if h.state != rsSwitched {
				failed++
			}
		}
		limit, _ := maxFail(o.maxFail, size)
		a.con.line(fmt.Sprintf("hoist: rollout %s: batch %d/%d: %d hosts (%s): %d switched, %d failed, %s", rid, b+1, len(sizes),
			size, printable(strings.Join(names, ", ")), size-failed, failed, time.Since(began).Round(100*time.Millisecond)))
		if failed > limit {
			switch o.onFail {
			case "stop":
				stopped = true
				a.con.line(fmt.Sprintf("hoist: rollout %s: %d failed in batch %d, more than --max-fail %s: stopped; no other host is switched", rid, failed, b+1, o.maxFail))
			case "revert":
				stopped = true
				a.con.line(fmt.Sprintf("hoist: rollout %s: %d failed in batch %d, more than --max-fail %s: every host switched goes back, the last batch first", rid, failed, b+1, o.maxFail))
				a.revertBatches(rid, live, b+1)
			}
		}
		if b < len(sizes)-1 {
			clientStep("rollout.batch")
		}
	}
	return a.rolloutEnd(rid, hosts)
}

// revertBatches sends every switched host of live back to its from, batch
// by batch in reverse order (the last batch switched first), each batch all
// at once, with a line per batch.
func (a *app) revertBatches(rid string, live []*rolloutHost, last int) {
	for b := last; b >= 1; b-- {
		var back []*rolloutHost
		var names []string
		for _, h := range live {
			if h.batch == b && h.state == rsSwitched {
				back = append(back, h)
				names = append(names, h.name)
			}
		}
		if len(back) == 0 {
			continue
		}
		began := time.Now()
		a.order(back, func(h *rolloutHost) rolloutOrder { return rolloutOrder{id: h.from, revert: true} })
		n := 0
		for _, h := range back {
			if h.state == rsReverted {
				n++
			}
		}
		a.con.line(fmt.Sprintf("hoist: rollout %s: back, batch %d/%d: %d hosts (%s): %d reverted, %d in doubt, %s", rid, b, last,
			len(back), printable(strings.Join(names, ", ")), n, len(back)-n, time.Since(began).Round(100*time.Millisecond)))
	}
}

// isRef says whether rollout's argument is a runtime reference (REF) rather
// than an artifact: it is not an existing file or directory, nor shaped like
// a path or an archive's file name (which is a missing artifact).
func isRef(source string) bool {
	if source == fromStdin || strings.ContainsRune(source, os.PathSeparator) || strings.Contains(source, "/") {
		return false
	}
	for _, ext := range []string{".tar", ".tgz", ".tar.gz", ".tar.xz", ".tar.zst", ".zip"} {
		if strings.HasSuffix(source, ext) {
			return false
		}
	}
	_, err := os.Lstat(source)
	return errors.Is(err, os.ErrNotExist)
}

// order gives each host of hs its order, all at once, and waits for them.
func (a *app) order(hs []*rolloutHost, of func(*rolloutHost) rolloutOrder) {
	var dones []chan struct{}
	for _, h := range hs {
		o := of(h)
		o.done = make(chan struct{})
		h.orders <- o
		dones = append(dones, o.done)
	}
	for _, d := range dones {
		<-d
	}
}

// stageOn is one host's staging: the push without --activate (with ref
// instead of art: finding the runtime ref names there, as activate
// resolves it), then what is current there (its from) and what it goes
// to.
func stageOn(ctx context.Context, h *rolloutHost, s *store.Store, art *store.Artifact, ref string, stop <-chan struct{}) error {
	if art != nil {
		if _, err := s.Push(ctx, art, store.PushOptions{Wait: defaultWait, Stop: stop}); err != nil {
			return err
		}
	}
	return listStaged(ctx, h, s, art, ref, nil)
}

// listStaged ends a host's staging: what is current there (its from)
// and what it goes to; with wit (a rollout in batches), the host writes
// the witness of the rollout's plan in the same host command.
func listStaged(ctx context.Context, h *rolloutHost, s *store.Store, art *store.Artifact, ref string, wit *witnessing) error {
	var rts []store.Runtime
	var err error
	plan := wit.wait(ctx)
	if err := ctx.Err(); err != nil {
		return err
	}
	if plan != nil {
		wref := ref
		if art != nil {
			wref = art.ID()
		}
		rts, h.witnessed, err = s.StageList(ctx, wit.rollout, wref, *plan)
	} else {
		rts, err = s.List(ctx)
	}
	if err != nil {
		return err
	}
	for _, rt := range rts {
		if rt.Current {
			h.from = rt.ID
		}
	}
	if art == nil {
		id, err := store.Resolve(rts, ref)
		if errors.Is(err, store.ErrNotFound) {
			return fmt.Errorf("%q is not on this host: push it there first (hoist push ARTIFACT), or roll out the artifact", ref)
		}
		if err != nil {
			return err
		}
		h.to = id
	}
	to := h.to
	if art != nil {
		to = art.ID()
	}
	if h.witnessed != "" && h.witnessed != to {
		return fmt.Errorf("the host wrote its witness of the rollout's plan for %s, not %s: no host was switched", h.witnessed, to)
	}
	return nil
}

// rolloutHeader prints the rollout's first line, its new id (on stdout,
// or on stderr with --json), and returns the id; how says the mode.
func (a *app) rolloutHeader(id string, hosts int, how string) string {
	rid := store.NewSequenceID()
	line := fmt.Sprintf("rollout %s: %s to %d hosts%s", rid, printable(id), hosts, how)
	if a.g.json {
		a.con.line("hoist: " + line)
	} else {
		a.data(line + "\n")
	}
	return rid
}

// sortStaged sets a host's state once its staging ended: unchanged (the
// same store as another target, or already on the runtime), skipped
// (unreachable, with --skip-unreachable), failed (it could not stage:
// the rollout switches no host); part when it takes part. id is the
// runtime's, for a host that did not say what it goes to.
func (h *rolloutHost) sortStaged(id string, skipUnreachable bool) (part, failed bool) {
	h.state = rsUnchanged
	if h.to == "" {
		h.to = id
	}
	switch {
	case h.same != "":
	case h.err != nil && h.unreachable && skipUnreachable:
		h.state = rsSkipped
	case h.err != nil:
		h.state = rsFailed
		return false, true
	case h.from == h.to:
	default:
		return true, false
	}
	return false, false
}

// oneRuntime checks that a REF names the same runtime on every host that
// staged it: a rollout takes the fleet to one runtime, and a name whose
// newest runtime differs from host to host would take it to several. The
// error names two hosts and what the REF is on each.
func oneRuntime(ref string, hosts []*rolloutHost) error {
	var first *rolloutHost
	for _, h := range hosts {
		if h.err != nil || h.same != "" || h.to == "" {
			continue
		}
		if first == nil {
			first = h
		} else if h.to != first.to {
			return fmt.Errorf("%q is %s on %s but %s on %s: give the runtime's full id", ref, first.to, first.name, h.to, h.name)
		}
	}
	return nil
}

// sourceOf opens the rollout's source: an artifact, or (ref set) a
// runtime the hosts have. id is what the rollout's first line names.
func (a *app) sourceOf(source, name string) (art *store.Artifact, ref, id string, err error) {
	if isRef(source) {
		if name != "" {
			return nil, "", "", usageErr("--name: %q is a runtime the hosts have (no such file or directory here), which has its name", source)
		}
		return nil, source, source, nil
	}
	art, err = a.openArtifact("rollout", source, store.OpenOptions{Name: name, MaxSize: store.DefaultMaxSize}, "no host was changed")
	if err != nil {
		return nil, "", "", err
	}
	return art, "", art.ID(), nil
}

// rolloutOn is one host's part: stage, report, then do the orders.
func (a *app) rolloutOn(ctx context.Context, h *rolloutHost, s *store.Store, art *store.Artifact, ref string, checks store.Checks, sem chan struct{}, stop <-chan struct{}, wit *witnessing) result {
	err := func() error {
		select {
		case sem <- struct{}{}:
			defer func() { <-sem }()
		case <-ctx.Done():
			return ctx.Err()
		}
		if art == nil {
			return nil
		}
		_, err := s.Push(ctx, art, store.PushOptions{Wait: defaultWait, Stop: stop})
		return err
	}()
	if err == nil {
		// Outside --parallel: it waits for every host to be named.
		err = listStaged(ctx, h, s, art, ref, wit)
	}
	h.staged <- err
	if err != nil {
		return result{outcome: outcome{err: err}}
	}
	ev := a.waitEvents(h.name, defaultWait)
	for o := range h.orders {
		if o.revert {
			if o.id == "" {
				h.state, h.err = rsInDoubt, fmt.Errorf("there was no runtime before %s to go back to: current stays %s", h.to, h.to)
			} else {
				back := checks
				back.Rollout, back.RevertOf = "", checks.Rollout
				hl, err := s.RollbackChecked(ctx, o.id, back, defaultWait, ev)
				h.revert = hl
				if err != nil {
					h.state, h.err = rsInDoubt, fmt.Errorf("going back to %s: %w", o.id, err)
				} else {
					h.state = rsReverted
				}
			}
		} else {
			c := checks
			c.Plan = h.plan
			hl, err := s.ActivateChecked(ctx, o.id, c, defaultWait, ev)
			h.health, h.err = hl, err
			if hl != nil {
				h.settled = append(h.settled, hl.Settled...)
				_ = a.settles(h.name, hl.Settled) // a failed one is err
			}
			var ue *store.UnhealthyError
			switch {
			case err == nil:
				h.state = rsSwitched
			case errors.Is(err, store.ErrSettledUnhealthy):
				h.state = rsUnhealthy
			case errors.As(err, &ue) && ue.Reverted:
				h.state = rsFailed
			case errors.As(err, &ue), errors.Is(err, transport.ErrUnknownOutcome):
				h.state = rsInDoubt
			default:
				h.state = rsFailed
			}
		}
		close(o.done)
	}
	return result{}
}

// rolloutEnd prints a row per host and returns the exit status.
func (a *app) rolloutEnd(rid string, hosts []*rolloutHost) error {
	code := exitOK
	// Worst first: 4 in doubt, 79 unknown, 1 failure, 75 busy, 3 stopped
	// on failed checks.
	rank := map[int]int{exitOK: 0, 3: 1, exitBusy: 2, exitFailure: 3, exitUnknown: 4, 4: 5}
	worse := func(c int) {
		if _, ok := rank[c]; !ok {
			c = exitFailure
		}
		if rank[c] > rank[code] {
			code = c
		}
	}
	stoppedShort := false
	for _, h := range hosts {
		c := exitOK
		switch h.state {
		case rsInDoubt:
			c = 4
			if errors.Is(h.err, transport.ErrUnknownOutcome) {
				c = exitUnknown
			}
		case rsUnhealthy:
			c = 4
		case rsFailed:
			c = errorCode(h.err)
		case rsReverted:
			c = 3
		case rsUnchanged:
			if h.same == "" && h.from != h.to {
				stoppedShort = true
			}
		}
		worse(c)
		from := h.from
		if from == "" {
			from = "nothing"
		}
		if a.g.json {
			obj := &output.Rollout{Rollout: rid, State: h.state, From: h.from, To: h.to, Batch: h.batch,
				Health: healthJSON(h.health), Revert: healthJSON(h.revert), Settled: settlesJSON(h.settled)}
			obj.Host, obj.OK, obj.Exit, obj.SameStoreAs = h.name, c == exitOK, c, h.same
			if h.err != nil {
				obj.Error = h.err.Error()
			}
			a.data(jsonLine(obj))
			continue
		}
		row := fmt.Sprintf("%s  %s  %s -> %s", printable(h.name), h.state, printable(from), printable(h.to))
		if h.same != "" {
			row += "  the same store as " + printable(h.same)
		}
		if l := healthLine(h.health); l != "" {
			row += "  " + l
		} else if h.health != nil && h.health.ID != "" && len(h.health.Check.Tries) > 0 {
			row += fmt.Sprintf("  failed its checks after %d tries", len(h.health.Check.Tries))
		}
		a.data(row + "\n")
		if h.err != nil {
			a.con.line(fmt.Sprintf("hoist: %s: %s", printable(h.name), printable(explain(h.err))))
		}
	}
	if code == exitOK && stoppedShort {
		code = 3 // stopped before every host was switched, none in doubt
	}
	if s := a.caught(); s != nil {
		code = signalExit(s)
	}
	if code == exitOK {
		return nil
	}
	return &codeError{code: code}
}

// vouched refuses a resume's rollout in which a host that keeps neither a
// record of the rollout it resumes nor a witness of its plan would be
// switched: a record can be written by
// whoever controls its host, so one host's record never chooses alone what
// runs on another, but on the operator's word (--trust-plan). Hosts
// already on the runtime take no part, and need no word.
func (o rolloutOptions) vouched(rid string, live []*rolloutHost) error {
	var asked []string
	for _, h := range live {
		if slices.Contains(o.unvouched, h.name) {
			asked = append(asked, h.name)
		}
	}
	if len(asked) == 0 {
		return nil
	}
	return fmt.Errorf("rollout %s: not going on by itself: %s keep neither a record of rollout %s nor a witness of its plan, so its options (above) would run there on the word of the other hosts' records alone: no host was switched; if the options are yours, go on with hoist rollout resume %s --trust-plan",
		rid, printable(strings.Join(asked, ", ")), o.resumes, o.resumes)
}
