package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hoistdev/hoist/e2e/sshd"
)

// TestRecoveryKilledHostCommandStopsSlowly: the host command that holds the
// lock is SIGKILLed while its command runs, and the command takes longer
// than its lease to stop on SIGTERM (a graceful shutdown: 7 s, the lease
// 4 s, the grace period 20 s). Its guardian goes on renewing the lease
// while the command stops, until it sends SIGKILL: the waiter gets the
// lock once the command has ended, never while it still works by a lease
// left to lapse.
func TestRecoveryKilledHostCommandStopsSlowly(t *testing.T) {
	t.Parallel()
	h := sshd.Start(t, sshd.Options{})
	r := newRecRig(t, h, "store")
	global := []string{"--lease", "4s"}
	a := r.cli().start(runArgs(global, []string{"--grace", "20s"}, r.holder("a00", "trap 'sleep 7' TERM; sleep 60 & wait", ""))...)
	r.waitEntry("start", "a00", 30*time.Second)
	w := r.cli().start(runArgs(global, []string{"--wait", "90s"}, r.holder("w01", "true", ""))...)
	waitWaiting(t, w)
	hpid, err := strconv.Atoi(r.recordField("hpid"))
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(hpid, syscall.SIGKILL); err != nil {
		t.Fatalf("kill -9 %d (the host command): %v", hpid, err)
	}
	killed := time.Now()
	if code := w.wait(t, 60*time.Second); code != 0 {
		t.Fatalf("waiter: exit %d, want 0; stderr: %s", code, w.stderr())
	}
	spans := r.check([]string{"a00", "w01"}, []string{"a00", "w01"})
	t.Logf("a00 ended %s after the kill, w01 started %s after it", spans["a00"].end.Sub(killed), spans["w01"].start.Sub(killed))
	if left := r.procs("a00"); len(left) > 0 {
		t.Fatalf("processes %v of the killed holder's command are still running", left)
	}
	a.wait(t, 40*time.Second)
}

// TestRecoveryKilledSequenceStopsItsRestart: the host command of a health
// sequence is SIGKILLed while the restart it spawned runs (in a group of
// its own). Its guardian stops that group and keeps the lock until it has
// stopped: a hoist run that waits for the lock starts after the restart's
// own TERM handler finished, never beside the restart.
func TestRecoveryKilledSequenceStopsItsRestart(t *testing.T) {
	t.Parallel()
	hh := newHealthHost(t, true)
	mark := filepath.Join(hh.h.Dir, "restart-stopped")
	began := filepath.Join(hh.h.Dir, "restart-began")
	restart := "touch " + began + "; trap 'sleep 2; touch " + mark + "; exit 0' TERM; sleep 60 & wait"
	s := hh.c.start("activate", hh.id2, "--restart", restart)
	waitFor(t, 30*time.Second, "the restart", func() bool { return exists(began) })
	hpid := 0
	for _, f := range strings.Fields(readFile(t, lockRecord(hh.root))) {
		if v, ok := strings.CutPrefix(f, "hpid="); ok {
			hpid, _ = strconv.Atoi(v)
		}
	}
	if hpid == 0 {
		t.Fatalf("no hpid in the lock record %q", readFile(t, lockRecord(hh.root)))
	}
	if err := syscall.Kill(hpid, syscall.SIGKILL); err != nil {
		t.Fatalf("kill -9 %d (the host command): %v", hpid, err)
	}
	r := hh.c.run("run", "--wait", "60s", "--", "test", "-f", mark)
	if r.code != 0 {
		t.Fatalf("a run got the lock while the killed sequence's restart still ran (its TERM handler had not finished): %s", r)
	}
	s.wait(t, 30*time.Second)
}

// TestRecoveryKilledSequenceKeepsTheService: a restart that ended left its
// service running (in the restart's group); the sequence's host command
// is then SIGKILLed while it probes (a dialled check: nothing spawned
// after the restart). The guardian releases without
// touching the service: only a restart or check still under way is
// stopped.
func TestRecoveryKilledSequenceKeepsTheService(t *testing.T) {
	t.Parallel()
	hh := newHealthHost(t, true)
	pidf := filepath.Join(hh.h.Dir, "service.pid")
	s := hh.c.start("activate", hh.id2, "--restart", "sleep 120 & echo $! >"+pidf, "--check-http", "http://"+listen(t, 200)+"/up", "--stable", "60s", "--check-interval", "1s")
	waitFor(t, 30*time.Second, "the service", func() bool { return exists(pidf) && strings.TrimSpace(readFile(t, pidf)) != "" })
	svc, err := strconv.Atoi(strings.TrimSpace(readFile(t, pidf)))
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(1500 * time.Millisecond) // the restart has ended: the probes run
	hpid := 0
	for _, f := range strings.Fields(readFile(t, lockRecord(hh.root))) {
		if v, ok := strings.CutPrefix(f, "hpid="); ok {
			hpid, _ = strconv.Atoi(v)
		}
	}
	if err := syscall.Kill(hpid, syscall.SIGKILL); err != nil {
		t.Fatalf("kill -9 %d (the host command): %v", hpid, err)
	}
	if r := hh.c.run("run", "--wait", "60s", "--", "true"); r.code != 0 {
		t.Fatalf("a run after the killed sequence: %s", r)
	}
	time.Sleep(500 * time.Millisecond)
	st, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", svc))
	if _, state, _ := strings.Cut(string(st), ") "); err != nil || strings.HasPrefix(state, "Z") {
		t.Fatalf("the service the restart left running (pid %d) was stopped with the killed sequence: %v %q", svc, err, st)
	}
	syscall.Kill(svc, syscall.SIGKILL)
	s.wait(t, 30*time.Second)
}
