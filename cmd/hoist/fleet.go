package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/hoistdev/hoist/cmd/hoist/output"
	"github.com/hoistdev/hoist/lock"
	"github.com/hoistdev/hoist/store"
	"github.com/hoistdev/hoist/transport"
)

// result is what one host came to.
type result struct {
	host string
	outcome
	// signal: the command was interrupted there (exit 129, 130 or 143).
	signal os.Signal
	// data is a line of data for stdout (not with --json), and more are
	// lines after it; with table, data is a block of rows whose cells are
	// printable already, headed by the host when there are several. Text
	// from the host is escaped where a line or a cell is printed, line
	// breaks included: only hoist's own separate lines.
	data  string
	more  []string
	table bool
	json  output.Object // for --json; nil: the Result alone
	// same names the target that reached this one's store first: nothing
	// was done here, the work was done there.
	same string
	// rollout is what rollout status without ID read on the host, which
	// its rows are made from once every host has answered.
	rollout *store.RolloutStatus
}

// fleet runs fn on every target, --parallel at a time, each host with its
// own connection, and prints one result per host as it completes. A slow
// or dead host holds up no other. The outcomes, in the order the targets
// were given, decide the exit status.
func (a *app) fleet(ctx context.Context, fn func(ctx context.Context, l *lock.Lock) result) error {
	return a.fleetThen(ctx, fn, nil)
}

// fleetThen is fleet; with then, the results are printed only once every
// host has answered, in the order the targets were given, after then
// rewrote them: for a command whose rows depend on what every host said.
func (a *app) fleetThen(ctx context.Context, fn func(ctx context.Context, l *lock.Lock) result, then func([]result)) error {
	places := &placeSet{first: map[lock.Place]string{}, log: a.log}
	return a.eachTargetThen(ctx, func(ctx context.Context, target string, root lock.Root) result {
		return a.onHost(ctx, target, root, places, fn)
	}, then)
}

// fleetTargets is what every fleet command starts from: the targets, each
// once (a line for each given more than once), the store's root, and the
// ssh options checked before any host is reached.
func (a *app) fleetTargets() ([]string, lock.Root, error) {
	targets, repeated, err := a.targetsOnce()
	if err != nil {
		return nil, lock.Root{}, err
	}
	for _, t := range repeated {
		a.say(transport.RedactTarget(t), "given more than once (-H, --hosts-file): worked on once")
	}
	root, err := a.storeRoot()
	if err != nil {
		return nil, lock.Root{}, err
	}
	if _, err := a.sshConfig("x"); err != nil {
		return nil, lock.Root{}, err
	}
	return targets, root, nil
}

// eachTarget is fleet for a command that reaches each target itself.
func (a *app) eachTarget(ctx context.Context, fn func(ctx context.Context, target string, root lock.Root) result) error {
	return a.eachTargetThen(ctx, fn, nil)
}

// eachTargetThen is eachTarget, with fleetThen's then.
func (a *app) eachTargetThen(ctx context.Context, fn func(ctx context.Context, target string, root lock.Root) result, then func([]result)) error {
	targets, root, err := a.fleetTargets()
	if err != nil {
		return err
	}
	a.multi = len(targets) > 1
	outcomes := make([]outcome, len(targets))
	results := make([]result, len(targets))
	sem := make(chan struct{}, a.g.parallel)
	var wg sync.WaitGroup
	var mu sync.Mutex
	for i, t := range targets {
		wg.Go(func() {
			// Until the host is reached (onHost), an interrupt ends
			// the wait for a turn, or the connection, at once.
			ctx, end := a.reach.add(ctx, t)
			defer end()
			select {
			case sem <- struct{}{}:
				defer func() { <-sem }()
			case <-ctx.Done():
			}
			r := fn(ctx, t, root)
			mu.Lock()
			defer mu.Unlock()
			if then != nil {
				results[i] = r
				return
			}
			a.report(r)
			outcomes[i] = r.outcome
		})
	}
	wg.Wait()
	if then != nil {
		then(results)
		for i, r := range results {
			a.report(r)
			outcomes[i] = r.outcome
		}
	}
	a.mu.Lock()
	a.outcomes = outcomes
	a.mu.Unlock()
	return nil
}

// placeSet holds the stores of one command's targets, each with the target
// that reached it first.
type placeSet struct {
	mu    sync.Mutex
	first map[lock.Place]string
	log   *slog.Logger // -v: why a target was not compared
}

// claim asks the host where l's store is (lock.Place) and returns the
// target that reached the same store first, if another did: only on proof.
// A host that cannot tell (a fact it could not read, a store it refuses, a
// failed command) is worked on like any other, and its own command says
// what is wrong; -v says what was unknown.
func (p *placeSet) claim(ctx context.Context, l *lock.Lock) (string, bool) {
	at, ok, err := l.Place(ctx)
	switch {
	case err != nil:
		p.log.Debug("worked on as a store of its own: where its store is could not be told", "host", l.Transport().Target(), "error", err)
		return "", false
	case !ok:
		p.log.Debug("worked on as a store of its own: "+at.Unknown()+" is unknown, so the store cannot be told from another's", "host", l.Transport().Target())
		return "", false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if first, dup := p.first[at]; dup {
		return first, true
	}
	p.first[at] = l.Transport().Target()
	return "", false
}

func (a *app) onHost(ctx context.Context, target string, root lock.Root, places *placeSet, fn func(context.Context, *lock.Lock) result) result {
	t, err := a.connect(ctx, target)
	if err == nil && !a.reach.reached(target) {
		t.Close()
		err = context.Canceled
	}
	if err != nil && ctx.Err() != nil && a.caught() != nil {
		// Interrupted while waiting for its turn or connecting: no
		// host command was sent.
		a.say(transport.RedactTarget(target), "interrupted before the host was reached; nothing was done there")
		return result{host: transport.RedactTarget(target), signal: a.caught(), json: &output.Unreached{Interrupted: true}}
	}
	if err != nil {
		return result{host: transport.RedactTarget(target), outcome: outcome{err: err}}
	}
	defer t.Close()
	l := lock.New(t, root)
	l.Logger = a.hostLogger()
	l.Owner.Version = version()
	l.Owner.Command = commandLine(a.args)
	l.Lease, l.Hold = a.g.lease, a.g.hold
	// Two targets of one store (two aliases of a host, a name and its
	// address): the store is worked on once, as the first that reached
	// it, or it would wait behind its own lock, or roll back twice.
	if a.multi {
		if first, same := places.claim(ctx, l); same {
			return result{host: t.Target(), same: first}
		}
	}
	// A run that loses contact reaches the host again the same way.
	var redialed []transport.Transport
	l.Redial = func(ctx context.Context) (transport.Transport, error) {
		t, err := a.connect(ctx, target)
		if err != nil {
			return nil, err
		}
		redialed = append(redialed, t)
		return t, nil
	}
	defer func() {
		for _, t := range redialed {
			t.Close()
		}
	}()
	r := fn(ctx, l)
	r.host = t.Target()
	var lost *lock.LostError
	if l.Hold != "" && errors.As(r.err, &lost) {
		// HOIST_LOCK_TOKEN may have been set long ago: say which hold.
		r.err = fmt.Errorf("working under the hold %s (--token or HOIST_LOCK_TOKEN): %w", l.Hold, r.err)
	}
	return r
}

// report prints one host's result: data on stdout, errors on stderr, or one
// JSON object per host.
func (a *app) report(r result) {
	a.con.clearLive()
	if r.same != "" {
		if a.g.json {
			a.data(jsonLine(&output.Result{Host: r.host, OK: true, Exit: exitOK, SameStoreAs: r.same}))
		} else {
			a.say(r.host, "the same store as %s (one machine, boot, namespace and login, and one root directory): worked on once, there", r.same)
		}
		return
	}
	if a.g.json {
		sig := r.signal
		if sig == nil {
			sig = a.caught()
		}
		code := exitStatus(exitInputs{signal: sig, hosts: []outcome{r.outcome}})
		obj := r.json
		if obj == nil {
			obj = &output.Result{}
		}
		h := obj.Head()
		h.Host, h.OK, h.Exit = r.host, r.err == nil, code
		if r.err != nil {
			h.Error = r.err.Error()
		}
		a.data(jsonLine(obj))
		return
	}
	if r.data != "" {
		text := printable(r.data) + "\n"
		if r.table {
			text = printableRows(r.data) + "\n"
		}
		if r.table && a.multi {
			text = printable(r.host) + ":\n" + text
			if a.printed {
				text = "\n" + text // a blank line between tables
			}
		}
		for _, l := range r.more {
			text += printable(l) + "\n"
		}
		a.data(text)
	}
	if r.err != nil {
		a.con.line(fmt.Sprintf("hoist: %s: %s", printable(r.host), printable(explain(r.err))))
	}
}

// data writes to stdout, or keeps it back while upload bars are drawn on
// the same terminal (see progress).
func (a *app) data(text string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.printed = true
	if a.held != nil {
		a.held.WriteString(text)
		return
	}
	fmt.Fprint(a.stdout, text)
}

// stopGrace is how long hoist waits, after asking the host to stop, before
// it gives up on its own: the host's own grace period (SIGTERM to SIGKILL)
// and some more.
const stopGrace = lock.DefaultGrace + 5*time.Second

// storeCommand runs fn on every host with the store. The first interrupt
// ends at once the hosts not reached yet, closes stop for the others (the
// host stops waiting for the lock, an upload stops) and gives up on them
// after stopGrace; a second one gives up at once.
func (a *app) storeCommand(fn func(ctx context.Context, s *store.Store, stop <-chan struct{}) result) error {
	return a.storeCommandThen(fn, nil)
}

// storeCommandThen is storeCommand, with fleetThen's then.
func (a *app) storeCommandThen(fn func(ctx context.Context, s *store.Store, stop <-chan struct{}) result, then func([]result)) error {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stop := make(chan struct{})
	a.interrupted(ctx, func(os.Signal) {
		a.reach.interrupt()
		close(stop)
		time.AfterFunc(stopGrace, cancel)
	}, func(os.Signal) { cancel() })
	return a.fleetThen(ctx, func(ctx context.Context, l *lock.Lock) result {
		return fn(ctx, store.New(l), stop)
	}, then)
}

// waitEvents says once per holder who holds the lock, since when and for
// what, keeps a live line on a terminal while one host waits, and says why
// a lock was taken over.
func (a *app) waitEvents(host string, wait time.Duration) lock.Events {
	return lock.Events{
		Waiting: func(s lock.State) {
			if wait == 0 {
				return // one attempt: the busy error says it all
			}
			a.say(host, "waiting for the store lock, held by %s (%s)", s.Describe(), s.Reason())
			if !a.g.json && !a.g.quiet && !a.multi {
				a.con.startLive("hoist: "+printable(host)+": waiting for the store lock", wait)
			}
		},
		Stole: func(s lock.State) {
			a.say(host, "took over the store lock of %s: %s", s.Describe(), s.Reason())
		},
		Acquired: func(string) { a.con.clearLive() },
	}
}
