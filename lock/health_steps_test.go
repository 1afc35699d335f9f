package lock_test

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/hoistdev/hoist/lock"
	"github.com/hoistdev/hoist/store"
)

// The steps of a health-checked switch (docs/rollout.md, "The sequence"),
// under dash and busybox: at each, what the host holds and what it does
// when let go, or when its client or its shell is gone meanwhile.

// healthEnv is a store where v1 (with an "ok" file) is current and v2 (with
// one when ok2) is promoted; restarts is where --restart notes each
// runtime it restarted.
type healthEnv struct {
	*stepEnv
	v1, v2   string
	restarts string
}

func newHealthEnv(e *stepEnv, ok2 bool) *healthEnv {
	h := &healthEnv{stepEnv: e, restarts: filepath.Join(e.t.TempDir(), "restarts")}
	for i, ok := range []bool{true, ok2} {
		dir := e.t.TempDir()
		files := map[string]string{"v": string(rune('1' + i))}
		if ok {
			files["ok"] = "yes"
		}
		for n, c := range files {
			if err := os.WriteFile(filepath.Join(dir, n), []byte(c), 0o644); err != nil {
				e.t.Fatal(err)
			}
		}
		art, err := store.OpenWith(e.ctx(), dir, store.OpenOptions{Name: "app"})
		if err != nil {
			e.t.Fatal(err)
		}
		r, err := store.New(e.lock()).Push(e.ctx(), art, store.PushOptions{Activate: i == 0})
		art.Close()
		if err != nil {
			e.t.Fatal(err)
		}
		if i == 0 {
			h.v1 = r.ID
		} else {
			h.v2 = r.ID
		}
	}
	return h
}

func (h *healthEnv) checks(extra ...string) store.Checks {
	return store.Checks{Exec: append([]string{"test -f ok"}, extra...), Restart: `echo "$HOIST_RUNTIME" >>` + h.restarts,
		Deadline: 2 * time.Second, Interval: 200 * time.Millisecond, Stable: 400 * time.Millisecond}
}

func (h *healthEnv) current() string {
	l, _ := os.Readlink(filepath.Join(h.root, "current"))
	return strings.TrimPrefix(l, "runtimes/")
}

func (h *healthEnv) want(what, got, want string) {
	h.t.Helper()
	if got != want {
		h.t.Fatalf("%s is %q, want %q", what, got, want)
	}
}

// busy fails unless the lock is held: another client cannot take it.
func (h *healthEnv) busy() {
	h.t.Helper()
	_, err := h.lock().Acquire(h.ctx(), 0, lock.Events{})
	wantBusyErr(h.t, err)
}

func (h *healthEnv) bad(id string) bool {
	_, err := os.Stat(filepath.Join(h.root, "runtimes", ".bad", id))
	return err == nil
}

func (h *healthEnv) history() string {
	b, _ := os.ReadFile(filepath.Join(h.root, "history"))
	return string(b)
}

// killHolder kills the host shell of the command stopped at step (as a
// reboot or an OOM kill would), and waits for its guardian to release.
func (h *healthEnv) killHolder(p *pausedRun, step string) {
	h.t.Helper()
	st, err := h.lock().Status(h.ctx())
	if err != nil || !st.Locked || st.Record.HolderPID == "" {
		h.t.Fatalf("status while stopped: %+v %v", st, err)
	}
	pid := 0
	for _, c := range st.Record.HolderPID {
		pid = pid*10 + int(c-'0')
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		h.t.Fatal(err)
	}
	p.let(step)
	_ = p.wait()
	h.waitFree()
}

func (h *healthEnv) waitFree() {
	h.t.Helper()
	end := time.Now().Add(20 * time.Second)
	for h.holder() != "" {
		if time.Now().After(end) {
			h.t.Fatal("the lock was not released")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

var healthSteps = []struct {
	step string
	fn   func(e *stepEnv)
}{
	// Stopped with its record in place and nothing switched: the lock is
	// held, current is the old runtime; let go, it switches and is found
	// healthy.
	{"host.prepare", func(e *stepEnv) {
		h := newHealthEnv(e, true)
		a := e.lock("host.prepare")
		var res *store.Health
		goOn := e.stopped(a, "host.prepare", func() (err error) {
			res, err = store.New(a).ActivateChecked(e.ctx(), h.v2, h.checks(), 0, lock.Events{})
			return err
		})
		h.busy()
		h.want("current", h.current(), h.v1)
		recs, _ := filepath.Glob(filepath.Join(e.root, "runtimes", ".rollouts", "*", "plan"))
		if len(recs) != 1 {
			e.t.Fatalf("want the record in place before the switch: %v", recs)
		}
		if err := goOn(); err != nil || !res.Healthy {
			e.t.Fatalf("let go: %v %+v", err, res)
		}
		h.want("current", h.current(), h.v2)
	}},
	// Stopped just after the switch, its host shell killed: the guardian
	// releases; gc keeps both runtimes the unfinished record names; the
	// next command that switches current settles the record first: back
	// to the runtime it replaced, restarted, and the history says why.
	{"host.switch", func(e *stepEnv) {
		h := newHealthEnv(e, true)
		a := e.lock("host.switch")
		p := e.start(a, func() error {
			_, err := store.New(a).ActivateChecked(e.ctx(), h.v2, h.checks(), 0, lock.Events{})
			return err
		})
		p.reach("host.switch")
		h.want("current", h.current(), h.v2)
		h.killHolder(p, "host.switch")
		// previous may have moved on: the record alone keeps what a
		// revert goes back to.
		if err := os.Remove(filepath.Join(e.root, "previous")); err != nil {
			e.t.Fatal(err)
		}
		gc, err := store.New(e.lock()).GC(e.ctx(), 0, true, lock.Events{})
		if err != nil {
			e.t.Fatal(err)
		}
		kept := map[string]string{}
		for _, k := range gc.Kept {
			kept[k.ID] = k.Why
		}
		if kept[h.v1] != "rollout" || kept[h.v2] != "current" {
			e.t.Fatalf("gc keeps %v; want %s for the unfinished record", kept, h.v1)
		}
		if _, err := store.New(e.lock()).Activate(e.ctx(), h.v1, 0, lock.Events{}); err != nil {
			e.t.Fatal(err)
		}
		h.want("current", h.current(), h.v1)
		// The record's restart ran for the runtime gone back to (the
		// killed command had not restarted anything).
		b, _ := os.ReadFile(h.restarts)
		h.want("restarts", string(b), h.v1+"\n")
		if !strings.Contains(h.history(), "revert:interrupted "+h.v2+" "+h.v1) {
			e.t.Fatalf("history: %s", h.history())
		}
		if dones, _ := filepath.Glob(filepath.Join(e.root, "runtimes", ".rollouts", "*", "done")); len(dones) != 1 {
			e.t.Fatalf("the settled record is not done: %v", dones)
		}
	}},
	// Stopped before a try of a dialled probe, its client gone meanwhile:
	// let go, the host reverts at once by itself, without a bad mark (the
	// runtime was not shown to fail), and releases.
	{"host.check", func(e *stepEnv) {
		h := newHealthEnv(e, true)
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			e.t.Fatal(err)
		}
		defer l.Close()
		go func() {
			for {
				c, err := l.Accept()
				if err != nil {
					return
				}
				c.Close()
			}
		}()
		a := e.lock("host.check")
		ctx, cancel := context.WithCancel(e.ctx())
		c := h.checks()
		c.TCP = []string{l.Addr().String()}
		p := e.start(a, func() error {
			_, err := store.New(a).ActivateChecked(ctx, h.v2, c, 0, lock.Events{})
			return err
		})
		p.reach("host.check")
		cancel()
		_ = p.wait()
		p.let("host.check")
		h.waitFree()
		h.want("current", h.current(), h.v1)
		if h.bad(h.v2) {
			e.t.Fatal("marked bad for its client's going")
		}
	}},
	// Stopped after the checks failed, before the revert: the runtime is
	// marked bad, still current, the lock held; let go, it reverts: 3.
	{"host.revert", func(e *stepEnv) {
		h := newHealthEnv(e, false)
		a := e.lock("host.revert")
		goOn := e.stopped(a, "host.revert", func() error {
			_, err := store.New(a).ActivateChecked(e.ctx(), h.v2, h.checks(), 0, lock.Events{})
			return err
		})
		h.want("current", h.current(), h.v2)
		if !h.bad(h.v2) {
			e.t.Fatal("not marked bad before the revert")
		}
		h.busy()
		var ue *store.UnhealthyError
		if err := goOn(); !errors.As(err, &ue) || ue.ExitCode() != 3 {
			e.t.Fatalf("want an UnhealthyError, exit 3: %v", err)
		}
		h.want("current", h.current(), h.v1)
	}},
	// Stopped after the revert, before the restart of the runtime gone
	// back to: current is the old runtime, which is not restarted yet;
	// the lock is held.
	{"host.restore", func(e *stepEnv) {
		h := newHealthEnv(e, false)
		a := e.lock("host.restore")
		goOn := e.stopped(a, "host.restore", func() error {
			_, err := store.New(a).ActivateChecked(e.ctx(), h.v2, h.checks(), 0, lock.Events{})
			return err
		})
		h.want("current", h.current(), h.v1)
		b, _ := os.ReadFile(h.restarts)
		h.want("restarts", string(b), h.v2+"\n")
		h.busy()
		if err := goOn(); err == nil {
			e.t.Fatal("want the checks' failure")
		}
		b, _ = os.ReadFile(h.restarts)
		h.want("restarts", string(b), h.v2+"\n"+h.v1+"\n")
	}},
	// Stopped there, its host shell killed: the revert was made but its
	// restart never ran; the next switch settles the record by
	// restarting the runtime gone back to, and finishes it.
	{"host.restore", func(e *stepEnv) {
		h := newHealthEnv(e, false)
		a := e.lock("host.restore")
		p := e.start(a, func() error {
			_, err := store.New(a).ActivateChecked(e.ctx(), h.v2, h.checks(), 0, lock.Events{})
			return err
		})
		p.reach("host.restore")
		h.killHolder(p, "host.restore")
		h.want("current", h.current(), h.v1)
		if _, err := store.New(e.lock()).Activate(e.ctx(), h.v1, 0, lock.Events{}); err != nil {
			e.t.Fatal(err)
		}
		b, _ := os.ReadFile(h.restarts)
		h.want("restarts", string(b), h.v2+"\n"+h.v1+"\n")
		if dones, _ := filepath.Glob(filepath.Join(e.root, "runtimes", ".rollouts", "*", "done")); len(dones) != 1 {
			e.t.Fatalf("the settled record is not done: %v", dones)
		}
	}},
}

func init() { stepTests = append(stepTests, healthSteps...) }
