package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/hoistdev/hoist/lock"
	"github.com/hoistdev/hoist/store"
	"github.com/hoistdev/hoist/transport"
)

// The coordinator of hoist rollout --atomic and of hoist rollout resume
// (docs/rollout.md, "All or nothing", "Resume"): every host is held by a
// worker, one connection for the whole command, that runs what the
// coordinator gives it; the participants and the resumes run on those
// connections, and the coordinator takes them through their steps.

// clientSteps are the coordinator's named steps; HOIST_TEST_STEP=NAME
// makes this process kill itself (SIGKILL) when it comes to step NAME, as
// a killed workstation would, and NAME:stop stop itself (SIGSTOP), as a
// frozen one would: the e2e tests use it, no user needs it.
var clientSteps = []string{"rollout.stage", "rollout.prepare", "rollout.switch", "rollout.check", "rollout.vote",
	"rollout.voted", "rollout.decide", "rollout.decided", "rollout.commit", "rollout.abort", "rollout.revert",
	"resumer.start", "resumer.decide", "resumer.outcome"}

// batchSteps are the named steps of a rollout in batches, for the same
// test hook: rollout.stage, every host staged (and its witness written),
// before the first batch; rollout.batch, between two batches.
var batchSteps = []string{"rollout.stage", "rollout.batch"}

func clientStep(name string) {
	step, how, _ := strings.Cut(os.Getenv("HOIST_TEST_STEP"), ":")
	if step != name {
		return
	}
	if how == "stop" {
		// The stop may take effect after kill returns: nothing goes on
		// until the SIGCONT.
		cont := make(chan os.Signal, 1)
		signal.Notify(cont, syscall.SIGCONT)
		defer signal.Stop(cont)
		_ = syscall.Kill(os.Getpid(), syscall.SIGSTOP)
		<-cont
		return
	}
	_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
	select {}
}

// worker holds one host's connection and runs the work it is given on it,
// one piece at a time, until work is closed.
type worker struct {
	*rolloutHost
	work chan func(ctx context.Context, s *store.Store)
	// For an --atomic rollout: the host's participant, its Health, and
	// what it finished on ("to", "from"; "" not finished).
	pt   *store.Participant
	side string
	// For a resume: the host's resume command.
	rs *store.Resumer
}

// workers reaches every target (each once, in parallel; --parallel bounds
// only what the work itself bounds) and returns them once each is
// reached or could not be; end closes them and waits for them.
func (a *app) workers(ctx context.Context, targets []string, root lock.Root) (ws []*worker, end func()) {
	places := &placeSet{first: map[lock.Place]string{}, log: a.log}
	var wg sync.WaitGroup
	for _, t := range targets {
		w := &worker{rolloutHost: &rolloutHost{target: t, name: transport.RedactTarget(t), staged: make(chan error, 1)},
			work: make(chan func(context.Context, *store.Store))}
		ws = append(ws, w)
		wg.Go(func() {
			ctx, end := a.reach.add(ctx, t)
			defer end()
			called := false
			r := a.onHost(ctx, t, root, places, func(ctx context.Context, l *lock.Lock) result {
				called = true
				w.name = l.Transport().Target()
				w.staged <- nil
				s := store.New(l)
				for fn := range w.work {
					fn(ctx, s)
				}
				return result{}
			})
			if !called {
				w.unreachable, w.same = r.same == "", r.same
				w.staged <- r.err
			}
		})
	}
	for _, w := range ws {
		w.err = <-w.staged
	}
	return ws, func() {
		for _, w := range ws {
			close(w.work)
		}
		wg.Wait()
	}
}

// each runs fn on every worker of ws at once, on its connection, and
// waits for them all.
func each(ws []*worker, fn func(ctx context.Context, w *worker, s *store.Store)) {
	var wg sync.WaitGroup
	for _, w := range ws {
		wg.Add(1)
		w.work <- func(ctx context.Context, s *store.Store) {
			defer wg.Done()
			fn(ctx, w, s)
		}
	}
	wg.Wait()
}

// rolloutAtomic is hoist rollout --atomic.
func (a *app) rolloutAtomic(source string, o rolloutOptions) error {
	checks, err := o.checks()
	if err != nil {
		return err
	}
	if o.name != "" && !store.ValidName(o.name) {
		return usageErr("--name %q: use letters, digits and . _ + -, at most 64, starting with a letter or digit", o.name)
	}
	switch {
	case o.canary >= 0 || o.batch != "":
		return usageErr("--atomic takes every host in one step: --canary and --batch do not go with it")
	case o.onFail != "stop" && o.onFail != "revert":
		return usageErr("--atomic reverts every host when one fails: --on-fail %s does not go with it", o.onFail)
	case o.maxFail != "0":
		return usageErr("--atomic reverts every host when one fails: --max-fail does not go with it")
	case o.holdLease < lock.MinLease:
		return usageErr("--hold-lease: give at least %s", lock.MinLease)
	}
	targets, root, err := a.fleetTargets()
	if err != nil {
		return err
	}
	art, ref, id, err := a.sourceOf(source, o.name)
	if err != nil {
		return err
	}
	if art != nil {
		defer art.Close()
	}
	rid := a.rolloutHeader(id, len(targets), ", all or nothing")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// The first interrupt aborts the rollout if it is not decided yet (a
	// decided one finishes); the second drops every connection: each host
	// then settles by itself.
	stop := make(chan struct{})
	a.interrupted(ctx, func(os.Signal) {
		a.reach.interrupt()
		close(stop)
	}, func(os.Signal) { cancel() })
	checks.Stop = stop
	a.multi = len(targets) > 1
	ws, end := a.workers(ctx, targets, root)
	defer end()

	// rollout.stage: push everywhere, --parallel at a time.
	sem := make(chan struct{}, a.g.parallel)
	var reached []*worker
	for _, w := range ws {
		if w.err == nil {
			reached = append(reached, w)
		}
	}
	each(reached, func(ctx context.Context, w *worker, s *store.Store) {
		select {
		case sem <- struct{}{}:
			defer func() { <-sem }()
		case <-ctx.Done():
			w.err = ctx.Err()
			return
		}
		w.err = stageOn(ctx, w.rolloutHost, s, art, ref, stop)
	})
	var live []*worker
	failedStage := false
	for _, w := range ws {
		part, failed := w.sortStaged(id, o.skipUnreachable)
		failedStage = failedStage || failed
		if part {
			live = append(live, w)
		}
	}
	hosts := rolloutHosts(ws)
	if failedStage {
		a.con.line(fmt.Sprintf("hoist: rollout %s: the runtime could not be staged on every host: no host was switched", rid))
		return a.rolloutEnd(rid, hosts)
	}
	if err := oneRuntime(ref, hosts); err != nil {
		return fmt.Errorf("rollout %s: %w: no host was switched", rid, err)
	}
	if len(live) > 0 {
		id = live[0].to // a REF, as the hosts resolved it
	}
	clientStep("rollout.stage")
	if len(live) == 0 {
		return a.rolloutEnd(rid, hosts)
	}
	c := atomicRun{a: a, rid: rid, id: id, live: live, stop: stop}
	c.run(ctx, ws, checks, o.holdLease)
	return a.rolloutEnd(rid, hosts)
}

// rolloutHosts are the workers' hosts, in order, for the rows.
func rolloutHosts(ws []*worker) []*rolloutHost {
	hs := make([]*rolloutHost, len(ws))
	for i, w := range ws {
		hs[i] = w.rolloutHost
	}
	return hs
}

// atomicRun is one --atomic rollout's coordinator, after staging: live
// are the hosts taking part, the first of them the decider.
type atomicRun struct {
	a       *app
	rid, id string
	live    []*worker
	stop    <-chan struct{}
}

func (c *atomicRun) stopped() bool {
	select {
	case <-c.stop:
		return true
	default:
		return false
	}
}

func (c *atomicRun) run(ctx context.Context, ws []*worker, checks store.Checks, holdLease time.Duration) {
	names := make([]string, len(ws))
	index := map[*worker]int{}
	for i, w := range ws {
		names[i] = w.name
		index[w] = i
	}
	decider, others := c.live[0], c.live[1:]
	// host.acquire, host.prepare on every host: rollout.prepare waits
	// for every PREPARED.
	var starting sync.WaitGroup
	for _, w := range c.live {
		starting.Add(1)
		w.work <- func(ctx context.Context, s *store.Store) {
			r := store.Rollout{ID: c.rid, Hosts: names, Index: index[w], Decider: index[decider], HoldLease: holdLease}
			w.pt, w.err = s.Participate(ctx, c.id, r, checks, defaultWait, c.a.waitEvents(w.name, defaultWait))
			if w.pt != nil {
				// Said before PREPARED, which Participate waited for.
				w.settled = w.pt.Health.Settled
				_ = c.a.settles(w.name, w.settled)
			}
			starting.Done()
			if w.pt != nil {
				// The connection stays until the participant ends.
				_ = w.pt.Wait()
			}
		}
	}
	starting.Wait()
	clientStep("rollout.prepare")
	for _, w := range c.live {
		if w.err != nil {
			c.abort(ctx, "%s could not take part (%s)", printable(w.name), printable(explain(w.err)))
			return
		}
	}
	if c.stopped() {
		c.abort(ctx, "interrupted")
		return
	}
	// rollout.switch, all at once; rollout.check waits for every verdict.
	var checking sync.WaitGroup
	for _, w := range c.live {
		checking.Go(func() {
			h, err := w.pt.Switch(ctx)
			w.health, w.err = h, err
		})
	}
	for _, w := range c.live {
		select {
		case <-w.pt.Switched():
		case <-w.pt.Ended():
		}
	}
	clientStep("rollout.switch")
	checking.Wait()
	clientStep("rollout.check")
	for _, w := range c.live {
		var ue *store.UnhealthyError
		if errors.As(w.err, &ue) {
			c.abort(ctx, "%s failed its checks", printable(w.name))
			return
		}
		if w.err != nil {
			c.abort(ctx, "%s could not be switched (%s)", printable(w.name), printable(explain(w.err)))
			return
		}
	}
	if c.stopped() {
		c.abort(ctx, "interrupted")
		return
	}
	// rollout.vote: go to each host but the decider, the first alone;
	// rollout.voted waits for every vote.
	votes := make([]string, len(others))
	var voting sync.WaitGroup
	for i, w := range others {
		if i == 0 {
			votes[0], w.err = w.pt.Vote(ctx)
			clientStep("rollout.vote")
			continue
		}
		voting.Go(func() { votes[i], w.err = w.pt.Vote(ctx) })
	}
	voting.Wait()
	clientStep("rollout.voted")
	for i, w := range others {
		if w.err != nil || votes[i] != "ready" {
			c.abort(ctx, "%s did not vote ready", printable(w.name))
			return
		}
	}
	if c.stopped() {
		c.abort(ctx, "interrupted")
		return
	}
	// rollout.decide; rollout.decided: the decider's decision.
	clientStep("rollout.decide")
	decision, err := decider.pt.Decide(ctx)
	if err != nil {
		// The decision cannot be learnt: the hosts that voted are in
		// doubt until a resume reads the decider.
		decider.err = err
		c.a.con.line(fmt.Sprintf("hoist: rollout %s: the decider %s could not be read (%s): the other hosts are in doubt; run hoist rollout resume %s",
			c.rid, printable(decider.name), printable(explain(err)), c.rid))
		c.tell(ctx, others, "settle", "")
		c.rows()
		return
	}
	clientStep("rollout.decided")
	decider.side, decider.err = decider.pt.Finish(ctx, "")
	// rollout.commit (or the abort a resume wrote first): the first
	// other host alone, then the rest.
	if decision != "commit" {
		c.a.con.line(fmt.Sprintf("hoist: rollout %s: the decider %s has decided abort (a resume came first): every host goes back", c.rid, printable(decider.name)))
	} else {
		c.a.con.line(fmt.Sprintf("hoist: rollout %s: every host passed its checks and voted; the decider %s has decided commit", c.rid, printable(decider.name)))
	}
	c.tell(ctx, others, decision, "rollout.commit")
	c.rows()
}

// abort ends the rollout before its decision: the decider decides abort
// (rollout.abort, rollout.aborted), then every other host is told to go
// back (rollout.revert).
func (c *atomicRun) abort(ctx context.Context, why string, args ...any) {
	c.a.con.line(fmt.Sprintf("hoist: rollout %s: %s: every host goes back", c.rid, fmt.Sprintf(why, args...)))
	clientStep("rollout.abort")
	decider := c.live[0]
	word := "abort"
	if decider.pt != nil {
		side, err := decider.pt.Finish(ctx, "abort")
		decider.side = side
		if decider.err == nil {
			decider.err = err
		}
		if err != nil && side == "" {
			// The decider could not be told: each other host goes by
			// the local rule, and one that voted is in doubt.
			word = "settle"
		}
	}
	c.tell(ctx, c.live[1:], word, "rollout.revert")
	c.rows()
}

// tell gives word to every host of ws, the first alone and then step,
// and waits for each to finish.
func (c *atomicRun) tell(ctx context.Context, ws []*worker, word, step string) {
	var wg sync.WaitGroup
	for i, w := range ws {
		if w.pt == nil {
			continue
		}
		finish := func() {
			side, err := w.pt.Finish(ctx, word)
			w.side = side
			if w.err == nil || errors.Is(err, store.ErrInDoubt) {
				w.err = err
			}
		}
		if i == 0 {
			finish()
			if step != "" {
				clientStep(step)
			}
			continue
		}
		wg.Go(finish)
	}
	wg.Wait()
}

// rows sets each host's state from what it finished on.
func (c *atomicRun) rows() {
	for _, w := range c.live {
		var ue *store.UnhealthyError
		switch {
		case errors.Is(w.err, store.ErrSettledUnhealthy):
			w.state = rsUnhealthy
		case w.health != nil && w.health.RevertVerdict == "none":
			w.state = rsInDoubt
			w.err = fmt.Errorf("the rollout was aborted, and there was nothing before %s to go back to: current stays %s", w.to, w.to)
		case w.side == "to":
			w.state, w.err = rsSwitched, nil
		case errors.As(w.err, &ue) && w.side == "from":
			w.state = rsFailed
		case w.side == "from" && w.health != nil && w.health.Current != "":
			// Its health object has the way back (revert).
			w.state = rsReverted
			if w.health.Revert != nil && w.health.RevertVerdict != "healthy" && w.health.RevertVerdict != "" {
				w.state = rsInDoubt
				w.err = fmt.Errorf("back on %s, but its revert's checks said %s: check the service", w.from, w.health.RevertVerdict)
			} else {
				w.err = nil
			}
		case w.side == "from":
			w.state = rsUnchanged
		case errors.Is(w.err, store.ErrInDoubt):
			w.state = rsInDoubt
			w.err = fmt.Errorf("rollout %s is in doubt here: it voted ready and did not learn the decision; run hoist rollout resume %s", c.rid, c.rid)
		case w.pt == nil && w.err != nil:
			w.state = rsFailed
		default:
			w.state = rsInDoubt
			if w.err == nil {
				w.err = fmt.Errorf("the host did not say how it finished rollout %s: run hoist rollout resume %s", c.rid, c.rid)
			}
		}
	}
}

// rolloutResume is hoist rollout resume [ID]: the records settled, then
// for a rollout in batches whose records keep its plan, the rollout goes
// on (rollout_resume.go).
func (a *app) rolloutResume(id string, holdLease time.Duration, trustPlan bool) error {
	targets, root, err := a.fleetTargets()
	if err != nil {
		return err
	}
	g, err := a.resumeRecords(targets, root, id, holdLease)
	if g == nil || err != nil {
		return err
	}
	if !trustPlan {
		g.opts.unvouched, g.opts.resumes = g.unvouched, id
	}
	return a.rolloutBatches(g.targets, root, g.to, g.opts, g.plan.Hosts)
}

// resumeRecords settles the records of rollout id on targets; for a
// rollout in batches with a plan, what to go on with.
func (a *app) resumeRecords(targets []string, root lock.Root, id string, holdLease time.Duration) (*batchGoOn, error) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	a.interrupted(ctx, func(os.Signal) { a.reach.interrupt(); cancel() }, func(os.Signal) { cancel() })
	a.multi = len(targets) > 1
	ws, end := a.workers(ctx, targets, root)
	defer end()
	var reached []*worker
	for _, w := range ws {
		w.state = rsUnchanged
		if w.err != nil {
			w.state = rsFailed
			if w.unreachable {
				w.state = rsSkipped
			}
			continue
		}
		reached = append(reached, w)
	}
	if id == "" {
		// The latest rollout recorded on any of them, as rollout status
		// finds it (ids start with a UTC time), a witness counted as
		// recorded: a rollout in batches stopped before its first batch.
		var mu sync.Mutex
		each(reached, func(ctx context.Context, w *worker, s *store.Store) {
			st, err := s.RolloutStatus(ctx, "")
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				w.err, w.state = err, rsFailed
				return
			}
			id = max(id, st.ID, st.Witnessed)
		})
		if id == "" {
			return nil, fmt.Errorf("no rollout is recorded on these hosts: nothing to resume")
		}
	}
	a.con.line(fmt.Sprintf("hoist: rollout %s: resuming", id))
	clientStep("resumer.start")
	each(reached, func(ctx context.Context, w *worker, s *store.Store) {
		w.rs, w.err = s.Resume(ctx, id, holdLease, defaultWait, a.waitEvents(w.name, defaultWait))
		if w.rs != nil {
			w.from, w.to = w.rs.Record.From, w.rs.Record.To
		}
	})
	goOn, err := batchPlan(id, ws, reached)
	if err != nil {
		// Nothing of the rollout is changed: each host releases its lock
		// and keeps its record as it is.
		each(reached, func(ctx context.Context, w *worker, s *store.Store) {
			if w.rs != nil {
				_ = w.rs.Leave()
			}
		})
		return nil, err
	}
	var decider *worker
	deciderName := ""
	recorded, local := false, false
	for _, w := range reached {
		if w.rs != nil && w.rs.Record.Found {
			recorded = true
			local = local || w.rs.Record.Local()
		}
	}
	for _, w := range reached {
		if w.rs == nil {
			continue
		}
		r := w.rs.Record
		if r.Found && r.Index >= 0 && r.Index == r.Decider {
			decider = w
		}
		if r.Decider >= 0 && r.Decider < len(r.Hosts) {
			deciderName = r.Hosts[r.Decider]
		}
	}
	if decider == nil && deciderName != "" {
		for _, w := range reached {
			if w.rs != nil && (w.name == deciderName || transport.RedactTarget(w.target) == deciderName) {
				decider = w
			}
		}
	}
	witnessed := goOn != nil && goOn.witnessed
	if !recorded && !witnessed && len(reached) > 0 && reached[0].rs != nil {
		// No record anywhere: the rollout was never prepared on these
		// hosts; its first host gets the tombstone.
		decider = reached[0]
	}
	decision := "settle"
	switch {
	case witnessed:
		// A rollout in batches stopped after staging: a witness is not a
		// record, so nothing is settled or written for it.
		a.con.line(fmt.Sprintf("hoist: rollout %s: no host keeps a record of it, and its hosts' witnesses agree on its plan: it stopped after staging, before its first batch", id))
	case local && deciderName == "":
		// A rollout in batches: each host decided for itself, and a record
		// left unfinished is settled by the local rule.
		a.con.line(fmt.Sprintf("hoist: rollout %s: each host settles its record by itself (a rollout in batches has no decider)", id))
	case decider == nil:
		a.con.line(fmt.Sprintf("hoist: rollout %s: the decider %s is not among the targets (or could not be reached): the hosts are settled by what they know, and a host that voted stays in doubt; give the decider with -H to finish it",
			id, printable(deciderName)))
	default:
		clientStep("resumer.decide")
		d, side, err := decider.rs.Decide(ctx)
		decider.side, decider.err = side, err
		if err == nil {
			decision = d
			a.con.line(fmt.Sprintf("hoist: rollout %s: the decider %s says %s", id, printable(decider.name), d))
		} else {
			a.con.line(fmt.Sprintf("hoist: rollout %s: the decider %s could not be read: %s", id, printable(decider.name), printable(explain(err))))
		}
	}
	clientStep("resumer.outcome")
	var rest []*worker
	for _, w := range reached {
		if w != decider && w.rs != nil {
			rest = append(rest, w)
		}
	}
	each(rest, func(ctx context.Context, w *worker, s *store.Store) {
		w.side, w.err = w.rs.Tell(ctx, decision)
	})
	for _, w := range reached {
		var bad error
		if w.rs != nil {
			w.settled = w.rs.Settled()
			bad = a.settles(w.name, w.settled)
		}
		switch {
		case errors.Is(w.err, store.ErrSettledUnhealthy):
			w.state = rsUnhealthy
		case bad != nil && (w.err == nil || errors.Is(w.err, store.ErrInDoubt)):
			// Settled, and found unhealthy: it stays where it went back
			// to (nothing switches it again), and says so.
			w.state, w.err = rsUnhealthy, bad
		case errors.Is(w.err, store.ErrInDoubt):
			w.state = rsInDoubt
			w.err = fmt.Errorf("rollout %s is still in doubt here: the decider's decision was not read; run hoist rollout resume %s with the decider among the targets", id, id)
		case w.err != nil:
			w.state = rsFailed
		case w.side == "to":
			w.state = rsSwitched
		case w.side == "from":
			w.state = rsReverted
		default:
			w.state = rsUnchanged
			w.from, w.to = "", ""
		}
	}
	if goOn != nil {
		var settled, failed, unhealthy []string
		for _, w := range reached {
			switch {
			case w.state == rsUnhealthy:
				unhealthy = append(unhealthy, w.name)
			case w.err != nil || w.state == rsInDoubt:
				failed = append(failed, w.name)
			case w.rs != nil && w.rs.Record.Local() && w.side == "from":
				settled = append(settled, w.name)
			}
		}
		if len(settled) > 0 {
			a.con.line(fmt.Sprintf("hoist: rollout %s: settled by the local rule, back on what they had: %s", id, printable(strings.Join(settled, ", "))))
		}
		switch {
		case a.caught() != nil:
		case len(unhealthy) > 0:
			a.con.line(fmt.Sprintf("hoist: rollout %s: not going on: %s failed their checks after the settle (they stay where they went back to)", id, printable(strings.Join(unhealthy, ", "))))
		case len(failed) > 0:
			a.con.line(fmt.Sprintf("hoist: rollout %s: not going on: %s could not be settled", id, printable(strings.Join(failed, ", "))))
		default:
			a.con.line(fmt.Sprintf("hoist: rollout %s: going on with the hosts not on %s, in its plan's order (%s), with its options: %s",
				id, printable(goOn.to), printable(strings.Join(goOn.plan.Hosts, ", ")), planLine(goOn.args)))
			return goOn, nil
		}
	} else if local {
		// A rollout in batches goes on by being rolled out again: the
		// hosts already on its runtime take no part.
		to := ""
		for _, w := range reached {
			if w.rs != nil && w.rs.Record.Local() && w.side != "to" {
				to = w.rs.Record.To
			}
		}
		if to != "" {
			a.con.line(fmt.Sprintf("hoist: rollout %s: to go on with the hosts not on %s, roll it out again with the same check flags (hoist rollout %s ...): the hosts already on it take no part", id, printable(to), printable(to)))
		}
	}
	return nil, a.rolloutEnd(id, rolloutHosts(ws))
}

func (a *app) rolloutResumeCommand() *cobra.Command {
	holdLease := store.DefaultHoldLease
	trustPlan := false
	c := &cobra.Command{
		Use:   "resume [ID]",
		Short: "finish an interrupted rollout on the hosts given: --atomic by its decision, in batches by going on",
		Long: `resume finishes rollout ID (without ID: the latest recorded on the hosts,
a witness of a plan counted)
on the hosts given with -H or --hosts-file. It takes each host's lock
(waiting). An --atomic rollout: it reads the decision on the rollout's
decider, writing abort when there is none (a resume never commits), then
tells every other host the decision: each finishes on the new runtime or
goes back. When the decider is not among the hosts, each host settles by
what it knows, and a host that voted ready stays in doubt.

A rollout in batches: each host's unfinished record is settled by the
local rule (back on what it had, its restart run, then its --check
commands, which the record keeps; --check-http and --check-tcp are not
run there). A host whose runtime fails them stays on it (unhealthy, exit
4) and the resume does not go on. Otherwise, since each
record keeps the rollout's plan (its hosts in order, and --canary,
--batch, --wait, --max-fail, --on-fail, --skip-unreachable and the check
flags), the rollout goes on: the runtime is rolled out again, under a
new id printed first, to the plan's hosts in its order with its options
(which the resume prints), and the hosts already on it take no part.
The resume changes nothing when the hosts that have a record do not all
keep the same plan, or a host of the plan is not among the targets. A
host keeps a record only once its batch started, but every host writes a
witness of the plan as it stages (runtimes/.rollouts/.plan-ID): a host
with no record and a witness that agrees vouched for the plan, and a
witness that disagrees (another runtime or plan) makes the resume change
nothing, with or without --trust-plan. When no host keeps a record (the
client stopped after staging, before the first batch), the plan is the
witnesses': the rollout goes on from its first batch when they all agree,
and changes nothing when they do not. When the plan would run on hosts
that keep neither (a witness removed), the resume settles the records,
prints the options and goes on only with --trust-plan, since a record
can be written by whoever controls its host.

The rows and exit status are rollout's.`,
		Example: `  hoist --hosts-file fleet rollout resume 20261201T180233Z-3f9a2c`,
		Args: func(c *cobra.Command, args []string) error {
			if len(args) > 1 {
				return usageErr("usage: %s [ID]", c.CommandPath())
			}
			return nil
		},
		RunE: func(_ *cobra.Command, args []string) error {
			id := ""
			if len(args) == 1 {
				id = args[0]
				if !store.ValidRolloutID(id) {
					return usageErr("%q is not a rollout id (such as 20261201T180233Z-3f9a2c, printed first by hoist rollout)", id)
				}
			}
			return a.rolloutResume(id, holdLease, trustPlan)
		},
	}
	c.Flags().Var(durationValue{&holdLease}, "hold-lease", "a host takes the resume for gone after `D` without a word from it")
	c.Flags().BoolVar(&trustPlan, "trust-plan", false, "go on with the plan on hosts that keep neither a record of the rollout nor a witness of its plan, on the word of the others' records")
	return c
}
