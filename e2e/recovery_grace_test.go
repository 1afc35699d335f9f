package e2e

import (
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
