package e2e

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hoistdev/hoist/cmd/hoist/output"
	"github.com/hoistdev/hoist/e2e/sshd"
)

// The health-checked switch (docs/rollout.md, "One host"), end to end over
// real sshd: activate, rollback and push --activate with --check, the
// dialled checks, the host finishing alone, and the lock held throughout.

// healthHost is a host with a store where v1 (with an "ok" file) is current
// and v2 is pushed but not active; ok2 gives v2 its "ok" file too.
type healthHost struct {
	h        *sshd.Host
	c        *cli
	root     string
	id1, id2 string
}

func newHealthHost(t testing.TB, ok2 bool) *healthHost {
	t.Helper()
	h := sshd.Start(t, sshd.Options{})
	root := filepath.Join(h.Dir, "store")
	c := newCLI(t, h, root)
	v1, v2 := sourceTree(t, "1"), sourceTree(t, "2")
	if err := os.WriteFile(filepath.Join(v1, "ok"), []byte("1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if ok2 {
		if err := os.WriteFile(filepath.Join(v2, "ok"), []byte("2\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	hh := &healthHost{h: h, c: c, root: root}
	hh.id1 = pushJSON(t, c, v1, "--name", "app", "--activate").ID
	hh.id2 = pushJSON(t, c, v2, "--name", "app").ID
	return hh
}

// current is the runtime <root>/current names, "" when none.
func (hh *healthHost) current() string {
	l, _ := os.Readlink(filepath.Join(hh.root, "current"))
	return strings.TrimPrefix(l, "runtimes/")
}

func (hh *healthHost) activateJSON(t *testing.T, args ...string) (output.Activate, run) {
	t.Helper()
	r := hh.c.run(append([]string{"--json", "activate", hh.id2}, args...)...)
	var a output.Activate
	if err := json.Unmarshal([]byte(r.stdout), &a); err != nil {
		t.Fatalf("activate --json: %v\n%s", err, r)
	}
	return a, r
}

func (hh *healthHost) list(t *testing.T) map[string]output.Runtime {
	t.Helper()
	r := hh.c.run("--json", "list")
	var l output.List
	if err := json.Unmarshal([]byte(r.stdout), &l); err != nil {
		t.Fatalf("list --json: %v\n%s", err, r)
	}
	m := map[string]output.Runtime{}
	for _, rt := range l.Runtimes {
		m[rt.ID] = rt
	}
	return m
}

// TestFailingCheckRevertsMarksBadExits3: a runtime whose check never
// passes is switched to, fails by the deadline, and the host goes back to
// the runtime it replaced (which passes), restarting it; the failed one is
// marked bad (list shows when and why), activate refuses it without
// --force, and history records the switch and the revert with why.
func TestFailingCheckRevertsMarksBadExits3(t *testing.T) {
	t.Parallel()
	hh := newHealthHost(t, false)
	restarts := filepath.Join(hh.h.Dir, "restarts")
	a, r := hh.activateJSON(t, "--check", "test -f ok", "--restart", `echo "$HOIST_RUNTIME" >>`+restarts,
		"--check-deadline", "2s", "--stable", "1s")
	if r.code != 3 || a.Health == nil || a.Health.Healthy || a.Current != hh.id1 || a.Health.RevertVerdict != "healthy" {
		t.Fatalf("want exit 3, back on %s, revert healthy: %s", hh.id1, r)
	}
	if !strings.HasPrefix(a.Health.Why, "deadline: check1: exit 1") || len(a.Health.Check.Tries) < 2 || a.Health.Revert == nil || len(a.Health.Revert.Tries) < 2 {
		t.Fatalf("the account of the checks: %s", r.stdout)
	}
	if hh.current() != hh.id1 {
		t.Fatalf("current is %s, want %s", hh.current(), hh.id1)
	}
	if got, _ := os.ReadFile(restarts); string(got) != hh.id2+"\n"+hh.id1+"\n" {
		t.Fatalf("the restarts ran for %q, want the new runtime and then the old one", got)
	}
	rt := hh.list(t)[hh.id2]
	if rt.Bad == nil || !strings.HasPrefix(rt.Bad.Why, "deadline") || rt.Bad.Rollout != a.Health.ID || rt.Bad.When == "" {
		t.Fatalf("list does not show %s bad: %+v", hh.id2, rt)
	}
	if r := hh.c.run("activate", hh.id2); r.code != 1 || !strings.Contains(r.stderr, "marked bad") || !strings.Contains(r.stderr, "--force") {
		t.Fatalf("activating a bad runtime: %s", r)
	}
	if hh.current() != hh.id1 {
		t.Fatal("a refused activation switched current")
	}
	h := hh.c.run("history")
	if !strings.Contains(h.stdout, "activate") || !strings.Contains(h.stdout, "revert:deadline") {
		t.Fatalf("history: %s", h)
	}
	if lockRecord(hh.root) != "" {
		t.Fatal("the sequence left the lock held")
	}
}

// TestPassingCheckExits0: a runtime whose check passes stays current; the
// account has every try, each with its probe.
func TestPassingCheckExits0(t *testing.T) {
	t.Parallel()
	hh := newHealthHost(t, true)
	a, r := hh.activateJSON(t, "--check", `test -f ok && test "$HOIST_DIR" = "$(pwd)" && test "$HOIST_PREVIOUS" != "$HOIST_RUNTIME"`,
		"--stable", "2s")
	if r.code != 0 || a.Health == nil || !a.Health.Healthy || a.Current != hh.id2 || hh.current() != hh.id2 {
		t.Fatalf("want exit 0 on %s: %s", hh.id2, r)
	}
	if n := len(a.Health.Check.Tries); n < 3 || a.Health.Check.StableMS < 2000 || len(a.Health.Check.Tries[0].Probes) != 1 {
		t.Fatalf("want 3 tries or more, stable 2 s: %s", r.stdout)
	}
	if hh.list(t)[hh.id2].Bad != nil {
		t.Fatal("a healthy runtime is marked bad")
	}
}

// TestRevertFailingExits4: the runtime gone back to fails its checks too:
// exit 4, and the message says what is active and what failed.
func TestRevertFailingExits4(t *testing.T) {
	t.Parallel()
	hh := newHealthHost(t, false)
	r := hh.c.run("activate", hh.id2, "--check", "test -f ok && test $HOIST_RUNTIME = "+hh.id2, "--check-deadline", "1s", "--stable", "0s")
	if r.code != 4 || !strings.Contains(r.stderr, "back on "+hh.id1) || !strings.Contains(r.stderr, "failed too") {
		t.Fatalf("want exit 4 naming what is active: %s", r)
	}
	if hh.current() != hh.id1 {
		t.Fatalf("current is %s", hh.current())
	}
}

// TestRollbackSkipsBadRuntimes: a rollback without --to passes over a
// runtime marked bad, and one with --to refuses it without --force.
func TestRollbackSkipsBadRuntimes(t *testing.T) {
	t.Parallel()
	hh := newHealthHost(t, false)
	if _, r := hh.activateJSON(t, "--check", "test -f ok", "--check-deadline", "1s", "--stable", "0s"); r.code != 3 {
		t.Fatalf("the failing activation: %s", r)
	}
	// id2 is previous now (the revert made it so) and bad.
	if r := hh.c.run("rollback"); r.code != 1 || !strings.Contains(r.stderr, "no previous") {
		t.Fatalf("rollback with only a bad runtime to go to: %s", r)
	}
	if r := hh.c.run("rollback", "--to", hh.id2); r.code != 1 || !strings.Contains(r.stderr, "marked bad") {
		t.Fatalf("rollback --to a bad runtime: %s", r)
	}
	if r := hh.c.run("rollback", "--to", hh.id2, "--force"); r.code != 0 || hh.current() != hh.id2 {
		t.Fatalf("rollback --to a bad runtime with --force: %s", r)
	}
}

// TestHostRevertsWhenClientKilled: the client is SIGKILLed while the host
// probes a runtime that never passes: the host reverts by itself, within
// the deadline plus one interval of the switch, and releases the lock.
func TestHostRevertsWhenClientKilled(t *testing.T) {
	t.Parallel()
	hh := newHealthHost(t, false)
	s := hh.c.start("activate", hh.id2, "--check", "test -f ok", "--check-deadline", "3s", "--check-interval", "1s", "--stable", "0s")
	waitFor(t, 20*time.Second, "the switch", func() bool { return hh.current() == hh.id2 })
	switched := time.Now()
	s.cmd.Process.Signal(syscall.SIGKILL)
	waitFor(t, 20*time.Second, "the host's own revert", func() bool { return hh.current() == hh.id1 })
	took := time.Since(switched)
	t.Logf("back on the old runtime %s after the switch (deadline 3 s + interval 1 s)", took.Round(time.Millisecond))
	if took > 4*time.Second+2*time.Second {
		t.Errorf("the host reverted %s after the switch; want about the deadline plus one interval", took)
	}
	waitFor(t, 10*time.Second, "the release", func() bool { return lockRecord(hh.root) == "" })
	if hh.list(t)[hh.id2].Bad == nil {
		t.Fatal("a runtime that failed its exec checks is not marked bad")
	}
}

// TestDialledCheckRevertsWhenClientKilled: with a dialled check, a client
// killed before the runtime was found healthy cannot answer: the host
// reverts at once, and does not mark the runtime bad (it was not shown to
// fail).
func TestDialledCheckRevertsWhenClientKilled(t *testing.T) {
	t.Parallel()
	hh := newHealthHost(t, true)
	addr := listen(t, http.StatusOK)
	s := hh.c.start("activate", hh.id2, "--check-tcp", addr, "--stable", "30s")
	waitFor(t, 20*time.Second, "the switch", func() bool { return hh.current() == hh.id2 })
	time.Sleep(1500 * time.Millisecond) // a try or two passed
	killed := time.Now()
	s.cmd.Process.Signal(syscall.SIGKILL)
	waitFor(t, 10*time.Second, "the host's own revert", func() bool { return hh.current() == hh.id1 })
	t.Logf("back on the old runtime %s after the client was killed", time.Since(killed).Round(time.Millisecond))
	waitFor(t, 10*time.Second, "the release", func() bool { return lockRecord(hh.root) == "" })
	if hh.list(t)[hh.id2].Bad != nil {
		t.Fatal("a runtime is marked bad for its client's death")
	}
}

// TestInterruptedCheckReverts: Ctrl-C while the host probes: the new
// runtime was not confirmed, so the host goes back at once (not at the
// deadline), and does not mark it bad.
func TestInterruptedCheckReverts(t *testing.T) {
	t.Parallel()
	hh := newHealthHost(t, false)
	s := hh.c.start("activate", hh.id2, "--check", "test -f ok", "--check-deadline", "60s", "--stable", "1s")
	waitFor(t, 20*time.Second, "the switch", func() bool { return hh.current() == hh.id2 })
	s.cmd.Process.Signal(syscall.SIGINT)
	if code := s.wait(t, 20*time.Second); code != 130 {
		t.Fatalf("exit %d, want 130: %s", code, s.stderr())
	}
	if hh.current() != hh.id1 {
		t.Fatalf("current is %s after the interrupt, want %s", hh.current(), hh.id1)
	}
	if lockRecord(hh.root) != "" || hh.list(t)[hh.id2].Bad != nil {
		t.Fatal("the lock is held, or the runtime marked bad for an interrupt")
	}
}

// TestHTTPCheck: --check-http is a GET through the connection: a 2xx
// passes, a 500 fails and reverts.
func TestHTTPCheck(t *testing.T) {
	t.Parallel()
	hh := newHealthHost(t, true)
	up := listen(t, http.StatusOK)
	a, r := hh.activateJSON(t, "--check-http", "http://"+up+"/up", "--stable", "1s")
	if r.code != 0 || !a.Health.Healthy || len(a.Health.Check.Tries) < 2 || a.Health.Check.Tries[0].Probes[0].Name != "http1" || !a.Health.Check.Tries[0].Probes[0].OK {
		t.Fatalf("a 200: %s", r)
	}
	if r := hh.c.run("rollback"); r.code != 0 {
		t.Fatal(r)
	}
	down := listen(t, http.StatusInternalServerError)
	a, r = hh.activateJSON(t, "--check-http", "http://"+down+"/up", "--check-deadline", "1s", "--stable", "0s")
	if r.code != 4 || a.Health.Healthy || !strings.Contains(a.Health.Why, "500") || hh.current() != hh.id1 {
		// the revert is checked the same way, and fails the same way: 4
		t.Fatalf("a 500: %s", r)
	}
}

// TestHealthSequenceHoldsTheLock: a hoist run started while the sequence
// probes waits until the sequence has finished its record and released,
// though the sequence lasts three times its lease.
func TestHealthSequenceHoldsTheLock(t *testing.T) {
	t.Parallel()
	hh := newHealthHost(t, true)
	// A lease of 2 s, shorter than the sequence: the guardian renews it
	// throughout, so the waiting run never finds it stale.
	s := hh.c.start("--lease", "2s", "activate", hh.id2, "--check", "test -f ok", "--stable", "6s")
	waitFor(t, 20*time.Second, "the switch", func() bool { return hh.current() == hh.id2 })
	rec := filepath.Join(hh.root, "runtimes", ".rollouts")
	r := hh.c.run("run", "--wait", "60s", "--", "sh", "-c", "ls "+rec+"/*/done && readlink "+filepath.Join(hh.root, "current"))
	if code := s.wait(t, 30*time.Second); code != 0 {
		t.Fatalf("activate: exit %d: %s", code, s.stderr())
	}
	if r.code != 0 || !strings.Contains(r.stderr+r.stdout, hh.id2) {
		t.Fatalf("the run came in before the sequence ended: %s", r)
	}
}

// listen serves HTTP with status on 127.0.0.1, which the hosts share.
func listen(t testing.TB, status int) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.UserAgent() != "hoist" {
			status := http.StatusBadRequest
			w.WriteHeader(status)
			return
		}
		w.WriteHeader(status)
		fmt.Fprintln(w, "up")
	})}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	return l.Addr().String()
}
