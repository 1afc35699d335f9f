package e2e

// The host's processes while hoist works: none shows a fragment or a
// secret in its command line, and none outlives its run's scratch.

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hoistdev/hoist/e2e/sshd"
	"github.com/hoistdev/hoist/remote"
)

// TestProcessListShowsNoFragment: while a run waits for the lock on the
// host, no process of the host's user shows, in its command line, the
// run's command (with its secret), the waiting run's token or any of
// hoist's shell function names; the fixed loader is all there is. Once the
// holder releases, the run runs and prints the secret. A fragment passed as
// an argument (sh -c "<fragment>") would show all three.
func TestProcessListShowsNoFragment(t *testing.T) {
	t.Parallel()
	h := sshd.Start(t, sshd.Options{})
	root := filepath.Join(h.Dir, "store")
	c := newCLI(t, h, root)
	secret := "SECRET-" + randomHex(t, 12)
	funcs := shellFunctions(t)

	hold := c.run("lock", "acquire")
	if hold.code != 0 {
		t.Fatalf("acquire: %s", hold)
	}
	w := c.start("run", "--wait", "60", "--", "echo", secret)
	waitFor(t, 30*time.Second, "the run waits for the lock", func() bool {
		return strings.Contains(w.stderr(), "waiting for the store lock")
	})
	scratch, _ := filepath.Glob(filepath.Join(root, "runs", "*"))
	if len(scratch) != 1 {
		t.Fatalf("want the waiting run's scratch directory alone in runs/, found %v", scratch)
	}
	token := filepath.Base(scratch[0])
	loader := strings.TrimSuffix(strings.TrimPrefix(remote.Loader, "exec /bin/sh -c '"), "'")
	loader = "/bin/sh -c " + loader

	ours := hostProcesses(t, h)
	sawLoader := false
	for range 10 {
		for _, args := range ours() {
			if args == loader {
				sawLoader = true
			}
		}
		// Every process of the user, this host's or not.
		for pid, args := range userProcesses(t, h.User) {
			if pid == w.cmd.Process.Pid {
				continue // the client itself, when the host's user is the caller
			}
			for _, bad := range append([]string{secret, token}, funcs...) {
				if strings.Contains(args, bad) {
					t.Fatalf("process %d of %s shows %q: %s", pid, h.User, bad, args)
				}
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	if !sawLoader {
		t.Fatalf("no process of the host runs the loader %q:\n%v", loader, ours())
	}

	if r := c.run("lock", "release", "--token", strings.TrimSpace(hold.stdout)); r.code != 0 {
		t.Fatalf("release: %s", r)
	}
	if code := w.wait(t, 30*time.Second); code != 0 || w.stdout() != secret+"\n" {
		t.Fatalf("the run after the release: exit %d, stdout %q, stderr %s", code, w.stdout(), w.stderr())
	}
}

// TestRelayEndsWhenScratchVanishes: the command removes its own scratch
// directory (runs/<token>) and goes on for a second. hoist still returns,
// with the command's status (7), and within a few seconds no process of the
// host that was started for the run is left. A relay that waited for
// "done" in the scratch directory would poll for ever: hoist would hang
// (the host shell waits for it) and a sleep loop would stay behind.
func TestRelayEndsWhenScratchVanishes(t *testing.T) {
	t.Parallel()
	h := sshd.Start(t, sshd.Options{})
	root := filepath.Join(h.Dir, "store")
	c := newCLI(t, h, root)
	ours := hostProcesses(t, h)
	before := ours()

	s := c.start("run", "--", "sh", "-c", "rm -rf "+shq(root)+"/runs/*; sleep 1; echo done; exit 7")
	// While it runs, the filter must see the run's processes: else an
	// empty list afterwards would prove nothing.
	during := 0
	deadline := time.Now().Add(30 * time.Second)
	for running := true; running && time.Now().Before(deadline); {
		select {
		case <-s.done:
			running = false
		case <-time.After(50 * time.Millisecond):
			for pid := range ours() {
				if _, old := before[pid]; !old {
					during++
				}
			}
		}
	}
	if during == 0 {
		t.Fatal("no process of the run was ever seen: the process filter is broken")
	}
	// Checked after the processes below, so that a failure shows both.
	code := s.wait(t, 30*time.Second)
	defer func() {
		if code != 7 {
			t.Errorf("hoist exited %d, want the command's status 7 (reported by the host); stdout %q, stderr:\n%s", code, s.stdout(), s.stderr())
		}
	}()
	var left map[int]string
	deadline = time.Now().Add(5 * time.Second)
	for {
		left = map[int]string{}
		for pid, args := range ours() {
			if _, old := before[pid]; !old {
				left[pid] = args
			}
		}
		if len(left) == 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if len(left) > 0 {
		t.Fatalf("5s after hoist returned, processes of the run are still there: %v", left)
	}
	if exists(lockPath(root)) {
		t.Errorf("the lock is still held after the run")
	}
}

// shellFunctions lists the names of hoist's host-side shell functions.
func shellFunctions(t testing.TB) []string {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join("..", "shellcmd", "sh", "*.sh"))
	re := regexp.MustCompile(`(?m)^(h_[A-Za-z0-9_]+)\(\)`)
	var names []string
	for _, f := range files {
		for _, m := range re.FindAllStringSubmatch(readFile(t, f), -1) {
			names = append(names, m[1])
		}
	}
	have := strings.Join(names, " ")
	if len(names) < 20 || !strings.Contains(have, "h_acquire") || !strings.Contains(have, "h_op_run") {
		t.Fatalf("found only these shell functions in ../shellcmd/sh: %v", names)
	}
	return names
}

// userProcesses maps the pid of every process of user to its command line.
func userProcesses(t testing.TB, user string) map[int]string {
	t.Helper()
	out, err := exec.Command("ps", "-ww", "-u", user, "-o", "pid=,args=").Output()
	if err != nil && len(out) == 0 {
		// ps exits 1 when it lists nothing.
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
			t.Fatalf("ps -u %s: %v", user, err)
		}
	}
	procs := map[int]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		line = strings.TrimSpace(line)
		pid, args, ok := strings.Cut(line, " ")
		if !ok {
			continue
		}
		n, err := strconv.Atoi(pid)
		if err != nil {
			continue
		}
		procs[n] = strings.TrimSpace(args)
	}
	return procs
}

// hostProcesses returns a function that lists the processes of h (pid and
// command line): those of its user whose environment carries the marker
// every login of h gets from the harness (HOIST_E2E_HOST), which tells them
// from other hosts' and other tests'.
func hostProcesses(t testing.TB, h *sshd.Host) func() map[int]string {
	t.Helper()
	marker, status := h.SSH(t, "echo $HOIST_E2E_HOST")
	marker = strings.TrimSpace(marker)
	if status != 0 || marker == "" {
		t.Fatalf("the logins of %s carry no HOIST_E2E_HOST (status %d)", h.Addr, status)
	}
	entry := []byte("\x00HOIST_E2E_HOST=" + marker + "\x00")
	return func() map[int]string {
		out := map[int]string{}
		for pid, args := range userProcesses(t, h.User) {
			env, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
			if err == nil && bytes.Contains(append([]byte{0}, env...), entry) {
				out[pid] = args
			}
		}
		return out
	}
}
