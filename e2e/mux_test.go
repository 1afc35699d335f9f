package e2e

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hoistdev/hoist/e2e/sshd"
)

// muxRig is a CLI whose OpenSSH configuration keeps connections
// (ControlMaster auto, ControlPersist, ControlPath in a directory of its
// own), reaching h at addr.
type muxRig struct {
	t       testing.TB
	h       *sshd.Host
	dir     string // the sockets' directory
	persist string
	addr    string
	root    string
	extra   []string
}

// newMuxRig keeps the sockets in a short directory of /tmp: a Unix
// socket's path has at most 107 bytes, and t.TempDir's are long.
func newMuxRig(t testing.TB, h *sshd.Host, addr, persist string) *muxRig {
	dir, err := os.MkdirTemp("/tmp", "hm")
	if err != nil {
		t.Fatal(err)
	}
	r := &muxRig{t: t, h: h, dir: dir, persist: persist, addr: addr, root: filepath.Join(h.Dir, "store")}
	t.Cleanup(func() {
		for _, pid := range r.masters() {
			syscall.Kill(pid, syscall.SIGKILL)
		}
		os.RemoveAll(dir)
	})
	return r
}

// cli is a hoist command line through the rig's configuration.
func (r *muxRig) cli() *cli {
	c := newCLI(r.t, r.h, r.root)
	c.flags = append(cliFlags(r.t, r.h, r.addr, r.root), "-o", "ControlMaster=auto", "-o", "ControlPersist="+r.persist,
		"-o", "ControlPath="+r.dir+"/%C")
	c.flags = append(c.flags, r.extra...)
	return c
}

// socket is where the master listens: the ControlPath ssh -G expands,
// with ".hoist".
func (r *muxRig) socket() string {
	files, _ := filepath.Glob(filepath.Join(r.dir, "*.hoist"))
	if len(files) == 1 {
		return files[0]
	}
	return ""
}

// masters are the pids of the masters serving a socket in the rig's
// directory ("hoist mux serve DIR/...").
func (r *muxRig) masters() []int {
	var pids []int
	names, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, name := range names {
		b, err := os.ReadFile(name)
		if err != nil {
			continue
		}
		args := strings.Split(string(b), "\x00")
		if len(args) >= 4 && args[1] == "mux" && args[2] == "serve" && strings.HasPrefix(args[3], r.dir+"/") {
			if pid, err := strconv.Atoi(filepath.Base(filepath.Dir(name))); err == nil && !zombie(pid) {
				pids = append(pids, pid)
			}
		}
	}
	return pids
}

func zombie(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] == 'Z'
}

// master is the one master's pid, failing the test unless there is
// exactly one.
func (r *muxRig) master() int {
	r.t.Helper()
	pids := r.masters()
	if len(pids) != 1 {
		r.t.Fatalf("masters for %s: %v, want exactly one", r.dir, pids)
	}
	return pids[0]
}

// TestMuxSecondCommandReusesConnection: with ControlMaster auto and
// ControlPersist, the first command leaves a master and the second uses
// its connection: sshd accepts one login for both. With ControlPersist no,
// nothing is kept and each command logs in.
func TestMuxSecondCommandReusesConnection(t *testing.T) {
	t.Parallel()
	h := sshd.Start(t, sshd.Options{})
	none := newMuxRig(t, h, h.Addr, "no")
	for range 2 {
		if r := none.cli().run("lock", "status"); r.code != 0 {
			t.Fatalf("lock status, ControlPersist no: %s", r)
		}
	}
	if n := accepted(t, h); n != 2 || len(none.masters()) != 0 || none.socket() != "" {
		t.Fatalf("ControlPersist no: %d logins, masters %v, socket %q; want 2 logins and nothing kept", n, none.masters(), none.socket())
	}

	rig := newMuxRig(t, h, h.Addr, "60")
	first := rig.cli().run("-v", "lock", "status")
	if first.code != 0 {
		t.Fatalf("first command: %s", first)
	}
	pid := rig.master()
	second := rig.cli().run("-v", "lock", "status")
	if second.code != 0 {
		t.Fatalf("second command: %s", second)
	}
	if n := accepted(t, h); n != 3 {
		t.Fatalf("sshd accepted %d logins for the two commands with ControlPersist, want 1 (%d in all)", n-2, n)
	}
	if !strings.Contains(second.stderr, "master="+rig.socket()) || rig.master() != pid {
		t.Fatalf("the second command does not say it used the master at %s (pid %d): %s", rig.socket(), pid, second.stderr)
	}
	check := rig.cli().run("mux", "check")
	if check.code != 0 || !strings.Contains(check.stdout, "master running (pid "+strconv.Itoa(pid)) {
		t.Fatalf("mux check: %s", check)
	}
	t.Logf("first: %s\nsecond: %s\ncheck: %s", first.stderr, second.stderr, check.stdout)
}

var _ = time.Second
