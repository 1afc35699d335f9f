package e2e

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hoistdev/hoist/e2e/sshd"
)

// cli runs the hoist binary against hosts.
type cli struct {
	t     testing.TB
	flags []string // target, key, known_hosts, root
	home  string
	env   []string // added to the environment
	bin   string   // the hoist binary, when not hoistBin
}

// newCLI targets h with the store under root (a path on the host).
func newCLI(t testing.TB, h *sshd.Host, root string) *cli {
	return &cli{t: t, home: t.TempDir(), flags: cliFlags(t, h, h.Addr, root)}
}

// cliFlags are the flags that reach h at addr (its own, or a proxy's in
// front of it) with the store at root.
func cliFlags(t testing.TB, h *sshd.Host, addr, root string) []string {
	known := h.KnownHosts
	if addr != h.Addr {
		known = h.KnownHostsFor(t, addr)
	}
	return []string{"-H", h.User + "@" + addr, "-i", h.KeyFile, "--known-hosts", known, "--root", root}
}

// command builds a hoist invocation; the environment holds no agent and a
// home of its own, so nothing of the caller's ssh setup leaks in.
func (c *cli) command(args ...string) *exec.Cmd {
	bin := hoistBin
	if c.bin != "" {
		bin = c.bin
	}
	cmd := exec.Command(bin, append(append([]string{}, c.flags...), args...)...)
	cmd.Env = append([]string{"HOME=" + c.home, "PATH=" + os.Getenv("PATH"), "USER=tester"}, c.env...)
	return cmd
}

type run struct {
	code           int
	stdout, stderr string
}

func (c *cli) run(args ...string) run {
	c.t.Helper()
	cmd := c.command(args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	r := run{stdout: out.String(), stderr: errb.String()}
	if ee, ok := err.(*exec.ExitError); ok {
		r.code = ee.ExitCode()
	} else if err != nil {
		c.t.Fatalf("hoist %v: %v", args, err)
	}
	return r
}

func (r run) String() string {
	return "exit " + strconv.Itoa(r.code) + "\nstdout: " + r.stdout + "\nstderr: " + r.stderr
}

// started runs hoist in the background with its output captured.
type started struct {
	cmd      *exec.Cmd
	mu       sync.Mutex
	out, err bytes.Buffer
	done     chan struct{}
	code     int
}

func (c *cli) start(args ...string) *started {
	c.t.Helper()
	s := &started{cmd: c.command(args...), done: make(chan struct{})}
	s.cmd.Stdout = lockedWriter{&s.mu, &s.out}
	s.cmd.Stderr = lockedWriter{&s.mu, &s.err}
	if err := s.cmd.Start(); err != nil {
		c.t.Fatal(err)
	}
	go func() {
		err := s.cmd.Wait()
		if ee, ok := err.(*exec.ExitError); ok {
			s.code = ee.ExitCode()
			if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
				s.code = 128 + int(ws.Signal())
			}
		}
		close(s.done)
	}()
	c.t.Cleanup(func() {
		s.cmd.Process.Kill()
		<-s.done
	})
	return s
}

func (s *started) stderr() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err.String()
}

func (s *started) stdout() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.out.String()
}

func (s *started) wait(t testing.TB, d time.Duration) int {
	t.Helper()
	select {
	case <-s.done:
		return s.code
	case <-time.After(d):
		t.Fatalf("hoist did not exit within %s; stderr: %s", d, s.stderr())
		return -1
	}
}

type lockedWriter struct {
	mu *sync.Mutex
	b  *bytes.Buffer
}

func (w lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

// exists reports whether p exists on the machine the hosts share.
func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

func waitFor(t testing.TB, d time.Duration, what string, cond func() bool) {
	t.Helper()
	end := time.Now().Add(d)
	for !cond() {
		if time.Now().After(end) {
			t.Fatalf("%s: not within %s", what, d)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func lockPath(root string) string { return filepath.Join(root, "runtimes", ".store-lock") }

// lockRecord is the path of the lock's record (<lock>/<token>/rec), "" when
// the lock has none.
func lockRecord(root string) string {
	m, _ := filepath.Glob(filepath.Join(lockPath(root), "*", "rec"))
	if len(m) != 1 {
		return ""
	}
	return m[0]
}
