// Package e2e tests hoist end to end: the library and the built binary
// against real OpenSSH sshd hosts on loopback (package e2e/sshd), with real
// login shells and a real /bin/sh. Nothing in here mocks a transport.
package e2e

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hoistdev/hoist/e2e/sshd"
	"github.com/hoistdev/hoist/lock"
	"github.com/hoistdev/hoist/store"
	"github.com/hoistdev/hoist/transport"
)

// hoistBin is the hoist binary built for this run.
var hoistBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "hoist-e2e-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	hoistBin = filepath.Join(dir, "hoist")
	build := exec.Command("go", "build", "-o", hoistBin, "github.com/hoistdev/hoist/cmd/hoist")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building hoist:", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// sshConfig reaches h as its test user, with only the harness's key and
// known_hosts: nothing from the environment of whoever runs the tests.
func sshConfig(h *sshd.Host) transport.SSHConfig {
	return transport.SSHConfig{
		Target:         h.Target(),
		IdentityFiles:  []string{h.KeyFile},
		NoAgent:        true,
		KnownHostsFile: h.KnownHosts,
	}
}

// sshConfigVia is sshConfig through a proxy at addr (its own known_hosts).
func sshConfigVia(t testing.TB, h *sshd.Host, addr string) transport.SSHConfig {
	cfg := sshConfig(h)
	cfg.Target = h.User + "@" + addr
	cfg.KnownHostsFile = h.KnownHostsFor(t, addr)
	return cfg
}

// storeOn is the store under root, over tr.
func storeOn(tr transport.Transport, root string) *store.Store {
	return store.New(lock.New(tr, lock.Root{Path: root}))
}

func dial(t testing.TB, cfg transport.SSHConfig) transport.Transport {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	tr, err := transport.DialSSH(ctx, cfg)
	if err != nil {
		t.Fatalf("dial %s: %v", cfg.Target, err)
	}
	t.Cleanup(func() { tr.Close() })
	return tr
}

// newLock is a library client of the store under root on h.
func newLock(t testing.TB, h *sshd.Host, root string) *lock.Lock {
	r, err := lock.ParseRoot(root)
	if err != nil {
		t.Fatal(err)
	}
	return lock.New(dial(t, sshConfig(h)), r)
}

func ctxT(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func isRoot() bool { return os.Geteuid() == 0 }

// hostSh runs script with /bin/sh as the host's login and fails the test
// unless it succeeds; it returns the standard output.
func hostSh(t testing.TB, h *sshd.Host, script string) string {
	t.Helper()
	out, status := h.SSH(t, "exec /bin/sh -c "+shq(script))
	if status != 0 {
		t.Fatalf("on the host: %s: status %d, output %q", script, status, out)
	}
	return out
}

// shq quotes s for a POSIX shell.
func shq(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// readFile is the contents of the file at p, or the test fails.
func readFile(t testing.TB, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// lookupIDs are the uid and gid of the local user name (a test host's login).
func lookupIDs(t testing.TB, name string) (uid, gid int) {
	t.Helper()
	u, err := user.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	uid, _ = strconv.Atoi(u.Uid)
	gid, _ = strconv.Atoi(u.Gid)
	return uid, gid
}

// randomHex is n random bytes, in hex.
func randomHex(t testing.TB, n int) string {
	t.Helper()
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}
