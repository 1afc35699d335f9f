package e2e

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hoistdev/hoist/e2e/sshd"
	"github.com/hoistdev/hoist/lock/locktest"
)

// TestConcurrentRunsNeverOverlap: 16 clients run under the lock at once; a
// journal kept on the host shows that no two commands ever overlapped, and
// every client finishes with its command's status.
func TestConcurrentRunsNeverOverlap(t *testing.T) {
	t.Parallel()
	h := sshd.Start(t, sshd.Options{})
	root := filepath.Join(h.Dir, "store")
	journal := filepath.Join(h.Dir, "journal")
	const n = 16
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			script := fmt.Sprintf("echo start %d >>%s; sleep 0.05; echo end %d >>%s", i, journal, i, journal)
			r := newCLI(t, h, root).run("run", "--wait", "5m", "--", "sh", "-c", script)
			if r.code != 0 {
				t.Errorf("client %d: %s", i, r)
			}
		}()
	}
	wg.Wait()
	data, err := os.ReadFile(journal)
	if err != nil {
		t.Fatal(err)
	}
	locktest.CheckJournal(t, string(data), n)
	if exists(lockPath(root)) {
		t.Fatal("the lock is still held after every run ended")
	}
}

// TestStealRaceHasOneWinner: 64 clients find the same stale lock at once;
// exactly one takes it, the rest answer busy, and no moved-aside record or
// lock is left behind.
//
// Not parallel: 64 clients at once saturate a small machine, and the tests
// that run beside it would measure that instead of hoist.
func TestStealRaceHasOneWinner(t *testing.T) {
	h := sshd.Start(t, sshd.Options{})
	root := filepath.Join(h.Dir, "store")
	c := newCLI(t, h, root)
	if r := c.run("lock", "acquire"); r.code != 0 {
		t.Fatalf("acquire: %s", r)
	}
	old := time.Now().Add(-21 * time.Minute)
	if err := os.Chtimes(lockRecord(root), old, old); err != nil {
		t.Fatal(err)
	}
	const n = 64
	var wg sync.WaitGroup
	results := make([]run, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = newCLI(t, h, root).run("lock", "acquire", "--wait", "0")
		}()
	}
	wg.Wait()
	var winners []string
	for i, r := range results {
		switch r.code {
		case 0:
			winners = append(winners, strings.TrimSpace(r.stdout))
		case 75:
		default:
			t.Errorf("stealer %d: %s", i, r)
		}
	}
	if len(winners) != 1 {
		t.Fatalf("%d stealers: %d winners, want exactly one", n, len(winners))
	}
	entries, err := os.ReadDir(filepath.Join(root, "runtimes"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Name() != ".store-lock" {
			t.Errorf("left in the store: %s", e.Name())
		}
	}
	if st := lockStatus(t, c); heldOf(st.Lock).Token != winners[0] {
		t.Fatalf("the lock is not the winner's: %s", js(st))
	}
}

// TestPreviousBootLockTakenAtOnce: a lock taken before the host restarted
// with a new boot identity is taken at once, and the client says why.
func TestPreviousBootLockTakenAtOnce(t *testing.T) {
	t.Parallel()
	h := sshd.Start(t, sshd.Options{BootNamespace: true})
	root := filepath.Join(h.Dir, "store")
	c := newCLI(t, h, root)
	if r := c.run("lock", "acquire"); r.code != 0 {
		t.Fatalf("acquire: %s", r)
	}
	if r := c.run("lock", "acquire", "--wait", "0"); r.code != 75 {
		t.Fatalf("before the reboot the lock must be busy: %s", r)
	}
	h.Reboot(t)
	r := c.run("lock", "acquire", "--wait", "0")
	if r.code != 0 || !strings.Contains(r.stderr, "previous boot") {
		t.Fatalf("after the reboot: want the lock taken at once because of the previous boot: %s", r)
	}
}

// TestHostReleasesAfterClientKilled: the client is SIGKILLed while its
// command runs; the command completes, and the host releases the lock
// within a second of its end. A SIGHUP to the host-side shell does not stop
// the release either. Not parallel: the one-second bound is a promise about
// the host, not about a machine saturated by other tests.
func TestHostReleasesAfterClientKilled(t *testing.T) {
	h := sshd.Start(t, sshd.Options{})
	root := filepath.Join(h.Dir, "store")
	gate, done := filepath.Join(h.Dir, "gate"), filepath.Join(h.Dir, "done")
	c := newCLI(t, h, root)
	// The command runs until the test opens the gate (it stands for
	// "sleep 5" without racing the test's own pace), then notes its end.
	s := c.start("run", "--", "sh", "-c", "while [ ! -e "+gate+" ]; do sleep 0.05; done; touch "+done)
	cmdPID := waitStarted(t, s, root)
	if err := s.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	s.wait(t, 10*time.Second)
	wrapper := parentPID(t, cmdPID)
	if err := syscall.Kill(wrapper, syscall.SIGHUP); err != nil {
		t.Fatalf("SIGHUP to the host-side shell %d: %v", wrapper, err)
	}
	time.Sleep(300 * time.Millisecond)
	if !exists(lockPath(root)) {
		t.Fatal("the lock went away while the command still ran")
	}
	if err := os.WriteFile(gate, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 20*time.Second, "command completes", func() bool { return exists(done) })
	ended := mtime(t, done)
	waitFor(t, 5*time.Second, "lock released", func() bool { return !exists(lockPath(root)) })
	if gap := time.Since(ended); gap > time.Second {
		t.Fatalf("the lock was released %s after the command ended, want within 1s", gap)
	}
	if !processGone(wrapper) {
		t.Fatal("the host-side shell is still running after the release")
	}
}

// TestKilledWaiterLeavesNoLock: a client killed while it waits for the lock
// leaves nothing behind once the holder is done, and its command never runs.
func TestKilledWaiterLeavesNoLock(t *testing.T) {
	t.Parallel()
	h := sshd.Start(t, sshd.Options{})
	root := filepath.Join(h.Dir, "store")
	ran := filepath.Join(h.Dir, "ran")
	c := newCLI(t, h, root)
	hold := c.run("lock", "acquire")
	if hold.code != 0 {
		t.Fatalf("acquire: %s", hold)
	}
	w := c.start("run", "--wait", "5m", "--", "touch", ran)
	waitFor(t, 20*time.Second, "waiter reports the holder", func() bool {
		return strings.Contains(w.stderr(), "waiting for the store lock")
	})
	w.cmd.Process.Signal(syscall.SIGKILL)
	w.wait(t, 10*time.Second)
	if r := c.run("lock", "release", "--token", strings.TrimSpace(hold.stdout)); r.code != 0 {
		t.Fatalf("release: %s", r)
	}
	time.Sleep(time.Second) // longer than the host's poll, so a leftover waiter would have acted
	if exists(lockPath(root)) || exists(ran) {
		t.Fatalf("the killed waiter took the lock (%v) or ran its command (%v)", exists(lockPath(root)), exists(ran))
	}
}

// TestInterruptStopsThenDetaches: the first Ctrl-C asks the host to stop
// the command, which then releases the lock; the second detaches and leaves
// the host to finish and release.
func TestInterruptStopsThenDetaches(t *testing.T) {
	t.Parallel()
	h := sshd.Start(t, sshd.Options{})
	t.Run("stop", func(t *testing.T) {
		root := filepath.Join(h.Dir, "stop")
		s := newCLI(t, h, root).start("run", "--", "sleep", "30")
		waitStarted(t, s, root)
		s.cmd.Process.Signal(syscall.SIGINT)
		if code := s.wait(t, 15*time.Second); code != 130 {
			t.Fatalf("exit %d, want 130; stderr: %s", code, s.stderr())
		}
		if !strings.Contains(s.stderr(), "stopped: the command exited with status 143; lock released") {
			t.Fatalf("stderr does not say what happened: %s", s.stderr())
		}
		if exists(lockPath(root)) {
			t.Fatal("the lock is still held")
		}
	})
	t.Run("detach", func(t *testing.T) {
		root := filepath.Join(h.Dir, "detach")
		ready, done := filepath.Join(h.Dir, "detach-ready"), filepath.Join(h.Dir, "detach-done")
		// The command ignores the stop request (SIGTERM), so that only a
		// detach ends the client; it says when its trap is in place.
		s := newCLI(t, h, root).start("run", "--", "sh", "-c", "trap '' TERM; touch "+ready+"; sleep 2; touch "+done)
		waitStarted(t, s, root)
		waitFor(t, 20*time.Second, "command ignores SIGTERM", func() bool { return exists(ready) })
		s.cmd.Process.Signal(syscall.SIGINT)
		waitFor(t, 5*time.Second, "stop request acknowledged", func() bool { return strings.Contains(s.stderr(), "again to detach") })
		s.cmd.Process.Signal(syscall.SIGINT)
		if code := s.wait(t, 10*time.Second); code != 130 {
			t.Fatalf("exit %d, want 130; stderr: %s", code, s.stderr())
		}
		if !strings.Contains(s.stderr(), "detached: the command keeps running on the host") {
			t.Fatalf("stderr does not say it detached: %s", s.stderr())
		}
		if exists(done) || !exists(lockPath(root)) {
			t.Fatal("the command should still be running under the lock")
		}
		waitFor(t, 20*time.Second, "command completes", func() bool { return exists(done) })
		waitFor(t, 5*time.Second, "host releases", func() bool { return !exists(lockPath(root)) })
	})
}

// TestInterruptWhileConnectingEndsAtOnce: a host that accepts the
// connection and never answers is being connected to when the first
// Ctrl-C comes: nothing runs there, so its attempt ends at once, saying
// so, and hoist says nothing of asking the host to stop (a signal, sent to
// the built binary). A host in the same command whose command runs is
// asked to stop it, as ever, and reports how it ended.
func TestInterruptWhileConnectingEndsAtOnce(t *testing.T) {
	t.Parallel()
	h := sshd.Start(t, sshd.Options{})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan struct{}, 8)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			defer c.Close() // accepts, never speaks
			accepted <- struct{}{}
		}
	}()
	stall := "tester@" + ln.Addr().String()
	interrupted := "hoist: " + stall + ": interrupted before the host was reached; nothing was done there"
	for _, tc := range []struct {
		name    string
		running bool // a second host whose command runs
		args    []string
	}{
		{"run", false, []string{"run", "--", "touch", filepath.Join(h.Dir, "ran")}},
		{"a store command", false, []string{"list"}},
		{"run, and a host whose command runs", true, []string{"run", "--", "sleep", "30"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := filepath.Join(h.Dir, strings.ReplaceAll(tc.name, " ", "-"))
			c := &cli{t: t, home: t.TempDir(), flags: []string{"-H", stall, "--root", root, "-o", "ConnectTimeout=120"}}
			if tc.running {
				c = newCLI(t, h, root)
				c.flags = append(c.flags, "-H", stall, "-o", "ConnectTimeout=120")
			}
			s := c.start(tc.args...)
			if tc.running {
				waitStarted(t, s, root)
			}
			select {
			case <-accepted:
			case <-time.After(30 * time.Second):
				t.Fatalf("hoist never connected to the silent host: %s", s.stderr())
			}
			s.cmd.Process.Signal(syscall.SIGINT)
			code := s.wait(t, 60*time.Second)
			stderr := s.stderr()
			if code != 130 || !strings.Contains(stderr, interrupted) {
				t.Errorf("exit %d, want 130 and %q on stderr:\n%s", code, interrupted, stderr)
			}
			if asks := strings.Contains(stderr, "asking the host to stop"); asks != tc.running {
				t.Errorf("says it asks the host to stop: %v, want %v:\n%s", asks, tc.running, stderr)
			}
			if tc.running && !strings.Contains(stderr, "stopped: the command exited with status 143; lock released") {
				t.Errorf("the host whose command ran does not say it stopped it:\n%s", stderr)
			}
			if exists(filepath.Join(h.Dir, "ran")) {
				t.Error("the command ran")
			}
		})
	}
}

// TestConnectionDropIsOutcomeUnknown: the connection breaks while the
// command runs. A cut link: the client reconnects, follows the run and
// exits with the command's status. A link that stays silent (and refuses
// every new connection): the client says the outcome is unknown, names the
// run and exits 79, and neither releases nor retries the command. Either
// way the command runs once, and the host releases the lock when it ends.
func TestConnectionDropIsOutcomeUnknown(t *testing.T) {
	t.Parallel()
	h := sshd.Start(t, sshd.Options{})
	for _, mode := range []string{"cut", "silent"} {
		t.Run(mode, func(t *testing.T) {
			p := sshd.NewProxy(t, h.Addr)
			root := filepath.Join(h.Dir, mode)
			journal := filepath.Join(h.Dir, mode+"-journal")
			c := newCLI(t, h, root)
			c.flags = append(cliFlags(t, h, p.Addr, root), "-o", "ServerAliveInterval=1", "-o", "ServerAliveCountMax=3", "-o", "ConnectTimeout=2")
			s := c.start("run", "--", "sh", "-c", "echo ran >>"+journal+"; sleep 3; echo done; exit 5")
			waitStarted(t, s, root)
			if mode == "cut" {
				p.Cut()
				if code := s.wait(t, 30*time.Second); code != 5 {
					t.Fatalf("exit %d, want the command's 5 after reattaching; stderr: %s", code, s.stderr())
				}
				if !strings.Contains(s.stderr(), "reconnected, following the run") || s.stdout() != "done\n" {
					t.Fatalf("want the run followed after the cut: stdout %q, stderr %q", s.stdout(), s.stderr())
				}
			} else {
				p.Freeze()
				if code := s.wait(t, 90*time.Second); code != 79 {
					t.Fatalf("exit %d, want 79; stderr: %s", code, s.stderr())
				}
				if !strings.Contains(s.stderr(), "outcome unknown") || !strings.Contains(s.stderr(), "hoist logs -f ") ||
					strings.Count(strings.TrimSpace(s.stderr()), "\n") > 0 {
					t.Fatalf("want one line saying the outcome is unknown and naming the run: %q", s.stderr())
				}
			}
			waitFor(t, 20*time.Second, "host releases", func() bool { return !exists(lockPath(root)) })
			if data, _ := os.ReadFile(journal); string(data) != "ran\n" {
				t.Fatalf("the command ran %q, want exactly once", data)
			}
		})
	}
}

// waitStarted waits until the command of client s runs under the lock
// under root and returns its host pid.
func waitStarted(t *testing.T, s *started, root string) int {
	t.Helper()
	var pid int
	waitFor(t, 30*time.Second, "command starts", func() bool {
		select {
		case <-s.done:
			t.Fatalf("hoist exited (%d) before its command started: %s", s.code, s.stderr())
		default:
		}
		// The run's record names its command's process group ("g PID",
		// or "p PID" on a host without setsid), the command's own pid.
		files, _ := filepath.Glob(filepath.Join(root, "runs", "*", "pgid"))
		for _, f := range files {
			if b, err := os.ReadFile(f); err == nil {
				_, n, _ := strings.Cut(strings.TrimSpace(string(b)), " ")
				if n, err := strconv.Atoi(n); err == nil {
					pid = n
					return true
				}
			}
		}
		return false
	})
	return pid
}

func parentPID(t *testing.T, pid int) int {
	t.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "PPid:"); ok {
			n, _ := strconv.Atoi(strings.TrimSpace(v))
			return n
		}
	}
	t.Fatalf("no parent for %d", pid)
	return 0
}

func processGone(pid int) bool {
	for range 50 {
		if syscall.Kill(pid, 0) != nil {
			return true
		}
		time.Sleep(100 * time.Millisecond)
	}
	return false
}

func mtime(t *testing.T, p string) time.Time {
	t.Helper()
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	return fi.ModTime()
}
