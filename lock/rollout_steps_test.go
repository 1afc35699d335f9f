package lock_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/hoistdev/hoist/lock"
	"github.com/hoistdev/hoist/store"
)

// The steps of an --atomic rollout's participant and of a resume
// (docs/rollout.md, "The participant", "Resume"), under dash and busybox,
// on two stores of this machine: the decider (index 0) and another host
// (index 1).

const rolloutTestID = "20261201T180233Z-3f9a2c"

func atomicPlace(index int) store.Rollout {
	return store.Rollout{ID: rolloutTestID, Hosts: []string{"web1", "web2"}, Index: index, Decider: 0, HoldLease: 4 * time.Second}
}

// record reads NAME of the rollout's record here ("" when not written).
func (h *healthEnv) record(name string) string {
	v, _ := os.Readlink(filepath.Join(h.root, "runtimes", ".rollouts", rolloutTestID, name))
	return v
}

func (h *healthEnv) wantRecord(name, want string) {
	h.t.Helper()
	h.want("the record's "+name, h.record(name), want)
}

// startAt starts a participant of host index in the background; it
// stands at step once reach returns. When then returns, the client goes
// away (its connection closes: EOF on the host).
func (h *healthEnv) startAt(index int, step string, then func(pt *store.Participant) error) *pausedRun {
	l := h.lock(step)
	return h.start(l, func() error {
		ctx, cancel := context.WithCancel(h.ctx())
		defer cancel()
		pt, err := store.New(l).Participate(ctx, h.v2, atomicPlace(index), h.checks(), 0, lock.Events{})
		if err != nil {
			return err
		}
		err = then(pt)
		// The client goes away only once the host stands at step (or
		// has ended), which it may reach after what then waited for.
		at := filepath.Join(lock.PauseDir(l), step+".at")
		for end := time.Now().Add(20 * time.Second); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
			if _, serr := os.Stat(at); serr == nil {
				break
			}
			select {
			case <-pt.Ended():
				return err
			default:
			}
		}
		return err
	})
}

func switched(pt *store.Participant, e *healthEnv) {
	e.t.Helper()
	if _, err := pt.Switch(e.ctx()); err != nil {
		e.t.Fatalf("switch: %v", err)
	}
}

var rolloutSteps = []struct {
	step string
	fn   func(e *stepEnv)
}{
	// The record is in place, nothing switched: the lock is held. The
	// client goes away (EOF): the decider decides abort by itself, and
	// finishes on the old runtime, which it never left.
	{"host.prepared", func(e *stepEnv) {
		h := newHealthEnv(e, true)
		p := h.startAt(0, "host.prepared", func(pt *store.Participant) error { return nil })
		p.reach("host.prepared")
		h.busy()
		h.want("current", h.current(), h.v1)
		if h.record("plan") != "" || !strings.Contains(readFile(filepath.Join(e.root, "runtimes", ".rollouts", rolloutTestID, "plan")), "mode=atomic") {
			e.t.Fatal("the plan is not an --atomic one")
		}
		_ = p.wait()
		p.let("host.prepared")
		h.waitFree()
		h.wantRecord("decision", "abort")
		h.wantRecord("done", "from")
		h.want("current", h.current(), h.v1)
	}},
	// Switched and healthy, waiting for the vote: the client goes away;
	// the host votes aborted and goes back, restarting the old runtime.
	{"host.healthy", func(e *stepEnv) {
		h := newHealthEnv(e, true)
		p := h.startAt(1, "host.healthy", func(pt *store.Participant) error {
			_, err := pt.Switch(h.ctx())
			return err
		})
		p.reach("host.healthy")
		h.want("current", h.current(), h.v2)
		h.busy()
		_ = p.wait()
		p.let("host.healthy")
		h.waitFree()
		h.wantRecord("vote", "aborted")
		h.wantRecord("done", "from")
		h.want("current", h.current(), h.v1)
		b, _ := os.ReadFile(h.restarts)
		h.want("restarts", string(b), h.v2+"\n"+h.v1+"\n")
	}},
	// Stopped before its vote, a settler (a resume) wrote aborted first:
	// the host's ready loses, it says so and goes back.
	{"host.vote", func(e *stepEnv) {
		h := newHealthEnv(e, true)
		var vote string
		p := h.startAt(1, "host.vote", func(pt *store.Participant) error {
			switched(pt, h)
			var err error
			vote, err = pt.Vote(h.ctx())
			if err != nil {
				return err
			}
			if _, err = pt.Finish(h.ctx(), ""); err != nil {
				return err
			}
			return pt.Wait()
		})
		p.reach("host.vote")
		if err := os.Symlink("aborted", filepath.Join(e.root, "runtimes", ".rollouts", rolloutTestID, "vote")); err != nil {
			e.t.Fatal(err)
		}
		p.let("host.vote")
		if err := p.wait(); err != nil || vote != "aborted" {
			e.t.Fatalf("want the vote aborted as written: %q %v", vote, err)
		}
		h.wantRecord("done", "from")
		h.want("current", h.current(), h.v1)
	}},
	// Voted ready, then the client goes away: in doubt. Nothing changes,
	// the lock is released; an activate refuses with the indoubt error;
	// a resume told abort reverts it, and then the activate goes.
	{"host.ready", func(e *stepEnv) {
		h := newHealthEnv(e, true)
		p := h.startAt(1, "host.ready", func(pt *store.Participant) error {
			switched(pt, h)
			_, err := pt.Vote(h.ctx())
			return err
		})
		p.reach("host.ready")
		_ = p.wait()
		p.let("host.ready")
		h.waitFree()
		h.wantRecord("vote", "ready")
		h.wantRecord("outcome", "")
		h.wantRecord("done", "")
		h.want("current", h.current(), h.v2)
		_, err := store.New(e.lock()).Activate(e.ctx(), h.v1, 0, lock.Events{})
		var he *lock.HostError
		if !errors.As(err, &he) || !strings.Contains(err.Error(), "in doubt") || !strings.Contains(err.Error(), "web1") ||
			!strings.Contains(err.Error(), "hoist rollout resume "+rolloutTestID) {
			e.t.Fatalf("want the indoubt refusal naming the decider and resume: %v", err)
		}
		h.want("current", h.current(), h.v2)
		rs, err := store.New(e.lock()).Resume(e.ctx(), rolloutTestID, 4*time.Second, 0, lock.Events{})
		if err != nil || !rs.Record.Found || rs.Record.Index != 1 || rs.Record.Decider != 0 || strings.Join(rs.Record.Hosts, ",") != "web1,web2" {
			e.t.Fatalf("resume: %+v %v", rs, err)
		}
		if side, err := rs.Tell(e.ctx(), "abort"); err != nil || side != "from" {
			e.t.Fatalf("resume told abort: %q %v", side, err)
		}
		h.want("current", h.current(), h.v1)
		h.wantRecord("outcome", "abort")
	}},
	// In doubt, and an activate --force overrides it: done -> overridden,
	// and the switch goes on.
	{"host.ready", func(e *stepEnv) {
		h := newHealthEnv(e, true)
		p := h.startAt(1, "host.ready", func(pt *store.Participant) error {
			switched(pt, h)
			_, err := pt.Vote(h.ctx())
			return err
		})
		p.reach("host.ready")
		_ = p.wait()
		p.let("host.ready")
		h.waitFree()
		if _, err := store.New(e.lock()).ActivateChecked(e.ctx(), h.v1, store.Checks{Force: true}, 0, lock.Events{}); err != nil {
			e.t.Fatalf("activate --force over a record in doubt: %v", err)
		}
		h.wantRecord("done", "overridden")
		h.want("current", h.current(), h.v1)
	}},
	// The decider stopped before it writes commit, a resume's abort
	// comes first: its commit loses, DECIDED says abort, and it goes
	// back.
	{"host.decide", func(e *stepEnv) {
		h := newHealthEnv(e, true)
		var dec string
		p := h.startAt(0, "host.decide", func(pt *store.Participant) error {
			switched(pt, h)
			var err error
			if dec, err = pt.Decide(h.ctx()); err != nil {
				return err
			}
			if _, err = pt.Finish(h.ctx(), ""); err != nil {
				return err
			}
			return pt.Wait()
		})
		p.reach("host.decide")
		if err := os.Symlink("abort", filepath.Join(e.root, "runtimes", ".rollouts", rolloutTestID, "decision")); err != nil {
			e.t.Fatal(err)
		}
		p.let("host.decide")
		if err := p.wait(); err != nil || dec != "abort" {
			e.t.Fatalf("want the decision abort as written first: %q %v", dec, err)
		}
		h.wantRecord("done", "from")
		h.want("current", h.current(), h.v1)
	}},
	// Told commit, stopped before it writes its outcome, its host shell
	// killed: the record is in doubt (voted ready, no outcome); a resume
	// given commit finishes it on the new runtime.
	{"host.learn", func(e *stepEnv) {
		h := newHealthEnv(e, true)
		p := h.startAt(1, "host.learn", func(pt *store.Participant) error {
			switched(pt, h)
			if _, err := pt.Vote(h.ctx()); err != nil {
				return err
			}
			_, err := pt.Finish(h.ctx(), "commit")
			return err
		})
		p.reach("host.learn")
		h.killHolder(p, "host.learn")
		h.wantRecord("outcome", "")
		rs, err := store.New(e.lock()).Resume(e.ctx(), rolloutTestID, 4*time.Second, 0, lock.Events{})
		if err != nil {
			e.t.Fatal(err)
		}
		if side, err := rs.Tell(e.ctx(), "commit"); err != nil || side != "to" {
			e.t.Fatalf("resume told commit: %q %v", side, err)
		}
		h.want("current", h.current(), h.v2)
		h.wantRecord("done", "to")
	}},
	// The decider decided commit, stopped before its done, its host
	// shell killed: the next command that switches current finishes the
	// record on the new runtime (the decision says commit), then
	// switches.
	{"host.finish", func(e *stepEnv) {
		h := newHealthEnv(e, true)
		p := h.startAt(0, "host.finish", func(pt *store.Participant) error {
			switched(pt, h)
			_, err := pt.Decide(h.ctx())
			return err
		})
		p.reach("host.finish")
		h.wantRecord("decision", "commit")
		h.killHolder(p, "host.finish")
		if _, err := store.New(e.lock()).Activate(e.ctx(), h.v2, 0, lock.Events{}); err != nil {
			e.t.Fatal(err)
		}
		h.wantRecord("done", "to")
		h.want("current", h.current(), h.v2)
	}},
	// A resume holds the lock and waits for its word: the decider with
	// no record gets a tombstone, and the rollout can then never be
	// prepared there: nothing is switched.
	{"host.held", func(e *stepEnv) {
		h := newHealthEnv(e, true)
		l := e.lock("host.held")
		var dec string
		p := e.start(l, func() error {
			rs, err := store.New(l).Resume(e.ctx(), rolloutTestID, 4*time.Second, 0, lock.Events{})
			if err != nil {
				return err
			}
			if rs.Record.Found {
				return errors.New("a record before any rollout")
			}
			dec, _, err = rs.Decide(e.ctx())
			return err
		})
		p.reach("host.held")
		h.busy()
		p.let("host.held")
		if err := p.wait(); err != nil || dec != "abort" {
			e.t.Fatalf("resume on the decider with no record: %q %v", dec, err)
		}
		h.wantRecord("decision", "abort")
		_, err := store.New(e.lock()).Participate(e.ctx(), h.v2, atomicPlace(0), h.checks(), 0, lock.Events{})
		if err == nil || !strings.Contains(err.Error(), "resume ended this rollout") {
			e.t.Fatalf("want the tombstone's refusal: %v", err)
		}
		h.want("current", h.current(), h.v1)
	}},
}

func readFile(p string) string {
	b, _ := os.ReadFile(p)
	return string(b)
}

func init() { stepTests = append(stepTests, rolloutSteps...) }
