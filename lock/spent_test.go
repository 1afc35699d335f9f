package lock_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hoistdev/hoist/lock"
	"github.com/hoistdev/hoist/transport"
)

// A spent attempt (docs/protocol.md, Create): a creator's rename lands
// inside a lock that appeared just before it, and that lock's release
// clears what landed before the creator looks. Its directory is gone from
// both places, as if published and taken, so its token is spent; the
// acquire goes on with a spare token, with its wait left, instead of ending
// busy.

// preparing is the token of the one lock being prepared in the store.
func (e *stepEnv) preparing() string {
	e.t.Helper()
	m, _ := filepath.Glob(filepath.Join(e.root, "runtimes", ".store-lock.new-*"))
	if len(m) != 1 {
		e.t.Fatalf("no single lock being prepared: %v", m)
	}
	return strings.TrimPrefix(filepath.Base(m[0]), ".store-lock.new-")
}

// landInsideThenClear stops p's acquire just before its rename, lets
// another client take the lock, lets the rename land inside that lock, has
// the other client release it, then (after meanwhile, if set) lets the
// acquire look. It returns the spent attempt's token.
func (e *stepEnv) landInsideThenClear(p *pausedRun, meanwhile func()) string {
	e.t.Helper()
	p.reach("create.publish")
	first := e.preparing()
	bl := e.lock()
	b := e.acquire(bl)
	p.let("create.publish")
	p.reach("create.renamed")
	if _, err := os.Stat(filepath.Join(e.lockDir(), ".store-lock.new-"+first, first, "rec")); err != nil {
		e.t.Fatalf("the creator's directory did not land inside the lock: %v", err)
	}
	if err := bl.Release(e.ctx(), b.Token); err != nil {
		e.t.Fatal(err)
	}
	if meanwhile != nil {
		meanwhile()
	}
	p.let("create.renamed")
	return first
}

var spentTests = []struct {
	step string
	fn   func(e *stepEnv)
}{
	// A manual hold: the token the client is given is the spare's.
	{"create.renamed", func(e *stepEnv) {
		a := e.lock("create.publish", "create.renamed")
		var held *lock.Held
		p := e.start(a, func() (err error) { held, err = a.Acquire(e.ctx(), time.Minute, lock.Events{}); return err })
		first := e.landInsideThenClear(p, nil)
		if err := p.wait(); err != nil {
			e.t.Fatalf("the waiter, with its wait left and the lock free: %v", err)
		}
		if held.Token == first {
			e.t.Fatalf("the waiter holds the lock with its spent token %s", first)
		}
		e.checkHeldBy(held.Token)
	}},
	// A run: its record, and the directory the exited rule looks in for
	// its command group, are named by the token it holds the lock with.
	{"create.renamed", func(e *stepEnv) {
		a := e.lock("create.publish", "create.renamed")
		var res *lock.RunResult
		p := e.start(a, func() (err error) {
			res, err = a.Run(e.ctx(), []string{"true"}, lock.RunOptions{Wait: time.Minute})
			return err
		})
		first := e.landInsideThenClear(p, nil)
		if err := p.wait(); err != nil || !res.Exited || res.Status != 0 {
			e.t.Fatalf("the run, with its wait left and the lock free: %v %+v", err, res)
		}
		e.checkRunIsItsToken(res, first)
		e.checkHeldBy("")
	}},
}

func init() { stepTests = append(stepTests, spentTests...) }

// checkRunIsItsToken: res ran with a token other than first, the run's id
// is that token, and its record is under it, with its command group's file.
func (e *stepEnv) checkRunIsItsToken(res *lock.RunResult, first string) {
	e.t.Helper()
	if res.Token == first || res.ID != res.Token {
		e.t.Fatalf("the run: id %s, token %s; want both a token other than the spent %s", res.ID, res.Token, first)
	}
	runs := filepath.Join(e.root, "runs")
	info, err := os.ReadFile(filepath.Join(runs, res.ID, "info"))
	if err != nil || !strings.Contains(string(info), " id="+res.ID+" ") || !strings.Contains(string(info), " token="+res.Token+" ") {
		e.t.Fatalf("the run's record: %q %v; want it named by its token", info, err)
	}
	if _, err := os.Stat(filepath.Join(runs, res.ID, "pgid")); err != nil {
		e.t.Fatalf("the run's command group is not on record under its token: %v", err)
	}
	if _, err := os.Stat(filepath.Join(runs, first)); !errors.Is(err, os.ErrNotExist) {
		e.t.Fatalf("something is left under the spent token: %v", err)
	}
}

// TestRunFollowsTheTokenItWentOnWith: the link of a run that is waiting
// goes silent just before its attempt is found spent; the host, which has
// not noticed, goes on with a spare token, takes the lock and runs the
// command. The client, reconnecting, finds no run under the first token
// and follows it under the next, to its output and its exit status.
func TestRunFollowsTheTokenItWentOnWith(t *testing.T) {
	onStepShells(t, func(t *testing.T, e *stepEnv) {
		link := &silentLink{Transport: e.dial(), cut: make(chan struct{})}
		a := lock.New(link, lock.Root{Path: e.root})
		lock.SetPause(a, t.TempDir(), "create.publish", "create.renamed")
		var res *lock.RunResult
		var stdout strings.Builder
		p := e.start(a, func() (err error) {
			res, err = a.Run(e.ctx(), []string{"sh", "-c", "echo from the run; exit 3"}, lock.RunOptions{
				Wait: time.Minute, Stdout: &stdout,
				Reconnect: func(context.Context) (transport.Transport, error) { return e.dial(), nil },
			})
			return err
		})
		first := e.landInsideThenClear(p, func() { close(link.cut) })
		if err := p.wait(); err != nil || !res.Exited || res.Status != 3 || res.Reattached == 0 {
			t.Fatalf("the run followed after the link went silent: %v %+v; want it reattached and exited 3", err, res)
		}
		if stdout.String() != "from the run\n" {
			t.Fatalf("the run's output: %q", stdout.String())
		}
		e.checkRunIsItsToken(res, first)
	})
}

// silentLink runs commands like its transport until cut is closed; then
// the command in flight behaves as over a link that went silent: its Run
// returns an unknown outcome at once, and the host side carries on with
// its input still open (it has not noticed) and its output going nowhere.
type silentLink struct {
	transport.Transport
	cut chan struct{}
}

func (s *silentLink) Run(ctx context.Context, req transport.Request) (int, error) {
	in, feed := io.Pipe()
	go func() {
		_, _ = io.Copy(feed, req.Stdin)
		select {
		case <-s.cut: // the host never sees its input end
		default:
			feed.Close()
		}
	}()
	var g gate
	inner := req
	inner.Stdin, inner.Stdout, inner.Stderr = in, g.to(req.Stdout), g.to(req.Stderr)
	type result struct {
		code int
		err  error
	}
	done := make(chan result, 1)
	go func() {
		code, err := s.Transport.Run(context.WithoutCancel(ctx), inner)
		done <- result{code, err}
	}()
	select {
	case r := <-done:
		return r.code, r.err
	case <-s.cut:
		g.close()
		return 0, transport.UnknownOutcome(errors.New("the link went silent"))
	}
}

// gate passes writes on until it is closed, and drops them after.
type gate struct {
	mu     sync.Mutex
	closed bool
}

func (g *gate) close() { g.mu.Lock(); g.closed = true; g.mu.Unlock() }

func (g *gate) to(w io.Writer) io.Writer {
	return writerFunc(func(p []byte) (int, error) {
		g.mu.Lock()
		defer g.mu.Unlock()
		if g.closed || w == nil {
			return len(p), nil
		}
		return w.Write(p)
	})
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// TestRunFollowsPastAFollowThatDidNotStart: contact with a started run is
// lost, and the first reconnect reaches a connection that cannot start a
// command (a kept connection about to end). That follow's "did not start"
// is about the follow, not the run: the client reconnects again and
// follows the run to its exit status, never reporting that the run did not
// start.
func TestRunFollowsPastAFollowThatDidNotStart(t *testing.T) {
	onStepShells(t, func(t *testing.T, e *stepEnv) {
		link := &silentLink{Transport: e.dial(), cut: make(chan struct{})}
		a := lock.New(link, lock.Root{Path: e.root})
		var once sync.Once
		dials := 0
		res, err := a.Run(e.ctx(), []string{"sh", "-c", "sleep 1; echo after; exit 3"}, lock.RunOptions{
			Events: lock.Events{Started: func() { once.Do(func() { close(link.cut) }) }},
			Reconnect: func(context.Context) (transport.Transport, error) {
				if dials++; dials == 1 {
					return notStarting{e.dial()}, nil
				}
				return e.dial(), nil
			},
		})
		if err != nil || res == nil || !res.Exited || res.Status != 3 || res.Reattached != 2 {
			t.Fatalf("the run: %v %+v; want it followed to its exit 3 on the second reconnect", err, res)
		}
	})
}

// notStarting is a transport whose commands never start.
type notStarting struct{ transport.Transport }

func (notStarting) Run(context.Context, transport.Request) (int, error) {
	return 0, fmt.Errorf("%w: the master ended", transport.ErrNotStarted)
}
