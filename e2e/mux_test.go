package e2e

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
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
	name    string // ControlPath's last part, "%C" unless set
	extra   []string
}

// newMuxRig keeps the sockets in a short directory of /tmp: a Unix
// socket's path has at most 107 bytes, and t.TempDir's are long.
func newMuxRig(t testing.TB, h *sshd.Host, addr, persist string) *muxRig {
	dir, err := os.MkdirTemp("/tmp", "hm")
	if err != nil {
		t.Fatal(err)
	}
	r := &muxRig{t: t, h: h, dir: dir, persist: persist, addr: addr, root: filepath.Join(h.Dir, "store"), name: "%C"}
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
		"-o", "ControlPath="+r.dir+"/"+r.name)
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

// TestMuxRefusesUntrustedSocket: a socket at the master's path that is
// open to others, in a directory others can write, or (root) owned by
// another user is never used: the command connects directly, says why
// with -v, starts no master and leaves the socket alone.
func TestMuxRefusesUntrustedSocket(t *testing.T) {
	t.Parallel()
	h := sshd.Start(t, sshd.Options{})
	for _, c := range []struct {
		name, why string
		root      bool
		spoil     func(r *muxRig, socket string)
	}{
		{"loose socket", "has mode 0666: others may use it", false, func(r *muxRig, socket string) { os.Chmod(socket, 0o666) }},
		{"writable directory", "can be written by others (mode 0777)", false, func(r *muxRig, socket string) { os.Chmod(r.dir, 0o777) }},
		{"another user's socket", "is owned by uid 65534, not by you", true, func(r *muxRig, socket string) { os.Chown(socket, 65534, -1) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.root {
				sshd.RequireRoot(t)
			}
			rig := newMuxRig(t, h, h.Addr, "60")
			rig.name = "cm"
			socket := filepath.Join(rig.dir, "cm.hoist")
			ln, err := net.Listen("unix", socket)
			if err != nil {
				t.Fatal(err)
			}
			defer ln.Close()
			os.Chmod(socket, 0o600)
			knocked := make(chan struct{}, 1)
			go func() {
				if c, err := ln.Accept(); err == nil {
					knocked <- struct{}{}
					c.Close()
				}
			}()
			c.spoil(rig, socket)
			before := accepted(t, h)
			r := rig.cli().run("-v", "lock", "status")
			if r.code != 0 {
				t.Fatalf("lock status: %s", r)
			}
			if !strings.Contains(r.stderr, "msg=\"connecting directly\"") || !strings.Contains(r.stderr, c.why) {
				t.Fatalf("-v does not say the socket was refused (%q): %s", c.why, r.stderr)
			}
			if n := accepted(t, h) - before; n != 1 {
				t.Fatalf("%d logins, want the command's own", n)
			}
			select {
			case <-knocked:
				t.Fatal("hoist connected to the untrusted socket")
			default:
			}
			if len(rig.masters()) != 0 {
				t.Fatalf("a master was started: %v", rig.masters())
			}
			if _, err := os.Lstat(socket); err != nil {
				t.Fatalf("the untrusted socket was touched: %v", err)
			}
		})
	}
}

// TestMuxLostMidCommand: the kept connection is lost while a command
// runs through it: the master is killed, its TCP connection is cut, or its
// link goes silent. Each command ends as it does when a direct connection
// is lost: a run loses contact and reconnects (through a new master) to
// follow the run to its status, or exits 79 when the host cannot be
// reached again; a lock acquire waiting on the host exits 79 and never
// holds the lock; a push cut mid-upload exits 79 saying the next push
// resumes, which it does. Nothing runs twice, and the host releases the
// lock when the command ends.
func TestMuxLostMidCommand(t *testing.T) {
	t.Parallel()
	h := sshd.Start(t, sshd.Options{})
	// lose loses the kept connection, as mode says.
	lose := func(rig *muxRig, p *sshd.Proxy, mode string) {
		switch mode {
		case "master killed":
			syscall.Kill(rig.master(), syscall.SIGKILL)
		case "link cut":
			p.Cut()
		case "link silent":
			p.Freeze()
		}
	}
	newRig := func(t *testing.T, name string) (*muxRig, *sshd.Proxy) {
		p := sshd.NewProxy(t, h.Addr)
		rig := newMuxRig(t, h, p.Addr, "60")
		rig.root = filepath.Join(h.Dir, strings.ReplaceAll(name, " ", "-"))
		rig.extra = []string{"-o", "ServerAliveInterval=1", "-o", "ServerAliveCountMax=3", "-o", "ConnectTimeout=2"}
		if r := rig.cli().run("lock", "status"); r.code != 0 {
			t.Fatalf("first command: %s", r)
		}
		return rig, p
	}
	for _, mode := range []string{"master killed", "link cut", "link silent"} {
		t.Run("run, "+mode, func(t *testing.T) {
			rig, p := newRig(t, "run "+mode)
			journal := rig.root + "-journal"
			logins := accepted(t, h)
			s := rig.cli().start("run", "--", "sh", "-c", "echo ran >>"+journal+"; sleep 3; echo done; exit 5")
			waitStarted(t, s, rig.root)
			if n := accepted(t, h); n != logins {
				t.Fatalf("the run logged in itself (%d logins, %d before): it should use the master", n, logins)
			}
			pid := rig.master()
			lose(rig, p, mode)
			if mode == "link silent" {
				if code := s.wait(t, 90*time.Second); code != 79 || !strings.Contains(s.stderr(), "outcome unknown") {
					t.Fatalf("exit %d, want 79 (outcome unknown); stderr: %s", code, s.stderr())
				}
			} else if code := s.wait(t, 30*time.Second); code != 5 || !strings.Contains(s.stderr(), "reconnected, following the run") {
				t.Fatalf("exit %d, want the command's 5 after reconnecting; stderr: %s", code, s.stderr())
			}
			waitFor(t, 20*time.Second, "host releases", func() bool { return !exists(lockPath(rig.root)) })
			if data, _ := os.ReadFile(journal); string(data) != "ran\n" {
				t.Fatalf("the command ran %q, want exactly once", data)
			}
			waitFor(t, 10*time.Second, "the master that lost its connection ends", func() bool {
				return !slicesContains(rig.masters(), pid)
			})
		})
	}
	for _, mode := range []string{"master killed", "link cut"} {
		t.Run("lock acquire, "+mode, func(t *testing.T) {
			rig, p := newRig(t, "acquire "+mode)
			hold := rig.cli().run("lock", "acquire")
			token := strings.TrimSpace(hold.stdout)
			if hold.code != 0 {
				t.Fatalf("lock acquire: %s", hold)
			}
			logins := accepted(t, h)
			w := rig.cli().start("lock", "acquire", "--wait", "60s")
			waitFor(t, 20*time.Second, "the waiter waits", func() bool { return strings.Contains(w.stderr(), "waiting for the store lock") })
			if n := accepted(t, h); n != logins {
				t.Fatalf("the waiter logged in itself (%d logins, %d before): it should use the master", n, logins)
			}
			lose(rig, p, mode)
			if code := w.wait(t, 30*time.Second); code != 79 {
				t.Fatalf("the waiter: exit %d, want 79; stderr: %s", code, w.stderr())
			}
			if r := rig.cli().run("lock", "release", "--token", token); r.code != 0 {
				t.Fatalf("releasing the first hold: %s", r)
			}
			time.Sleep(500 * time.Millisecond)
			if exists(lockPath(rig.root)) {
				t.Fatalf("the lost waiter took the lock after losing contact: %s", lockRecord(rig.root))
			}
		})
	}
	t.Run("push, master killed", func(t *testing.T) {
		rig, p := newRig(t, "push")
		const size = 48 << 20
		src := randomTree(t, size)
		push := rig.cli().start("--json", "push", src, "--name", "big")
		uploadedPast(t, rig.root, size/2, push)
		lose(rig, p, "master killed")
		if code := push.wait(t, 60*time.Second); code != 79 || !strings.Contains(push.stdout(), "resumes it") {
			t.Fatalf("exit %d, want 79 (outcome unknown) saying the next push resumes: %s %s", code, push.stdout(), push.stderr())
		}
		if ids, _ := filepath.Glob(filepath.Join(rig.root, "runtimes", "big-*")); len(ids) != 0 {
			t.Fatalf("the cut push left a runtime: %v", ids)
		}
		// A stage nothing has written to for 5 s is resumed.
		time.Sleep(6 * time.Second)
		r := pushJSON(t, rig.cli(), src, "--name", "big")
		if r.Pushed == nil || !r.Promoted || r.ResumedAt == 0 {
			t.Fatalf("the next push, through a new master: %+v", r)
		}
		sameFile(t, filepath.Join(src, "blob"), filepath.Join(rig.root, "runtimes", r.ID, "blob"))
	})
}

// TestMuxPersistIdleEndsMaster: the master lives while a command uses it,
// and ends, removing its socket, once none has for ControlPersist.
func TestMuxPersistIdleEndsMaster(t *testing.T) {
	t.Parallel()
	h := sshd.Start(t, sshd.Options{})
	rig := newMuxRig(t, h, h.Addr, "2")
	r := rig.cli().run("run", "--", "sleep", "3")
	// The last client ended before here: the master's idle time counts
	// from no later than this (finding the master takes time of its own).
	ended := time.Now()
	if r.code != 0 {
		t.Fatalf("a command longer than ControlPersist: %s", r)
	}
	pid := rig.master()
	socket := rig.socket()
	waitFor(t, 15*time.Second, "the master ends", func() bool { return len(rig.masters()) == 0 })
	if idle := time.Since(ended); idle < 1500*time.Millisecond {
		t.Fatalf("the master (pid %d) ended %s after its last client, before ControlPersist (2s)", pid, idle)
	}
	if _, err := os.Lstat(socket); !os.IsNotExist(err) {
		t.Fatalf("the socket %s is left: %v", socket, err)
	}
}

// TestMuxStopAndExit: hoist mux stop removes the socket at once and lets a
// running command finish before the master ends; mux check then says no
// master (exit 1); hoist mux exit ends a master now.
func TestMuxStopAndExit(t *testing.T) {
	t.Parallel()
	h := sshd.Start(t, sshd.Options{})
	rig := newMuxRig(t, h, h.Addr, "60")
	if r := rig.cli().run("lock", "status"); r.code != 0 {
		t.Fatalf("first command: %s", r)
	}
	pid := rig.master()
	if r := rig.cli().run("mux", "check"); r.code != 0 || !strings.Contains(r.stdout, "master running") {
		t.Fatalf("mux check: %s", r)
	}
	long := rig.cli().start("run", "--", "sh", "-c", "sleep 2; echo finished")
	waitStarted(t, long, rig.root)
	if r := rig.cli().run("mux", "stop"); r.code != 0 || !strings.Contains(r.stdout, "takes no more commands") {
		t.Fatalf("mux stop: %s", r)
	}
	if rig.socket() != "" {
		t.Fatalf("the socket %s is left after mux stop", rig.socket())
	}
	if code := long.wait(t, 30*time.Second); code != 0 || long.stdout() != "finished\n" {
		t.Fatalf("the command running during mux stop: exit %d, stdout %q, stderr %s", code, long.stdout(), long.stderr())
	}
	waitFor(t, 10*time.Second, "the stopped master ends", func() bool { return !slicesContains(rig.masters(), pid) })
	if r := rig.cli().run("mux", "check"); r.code != 1 || !strings.Contains(r.stderr, "no connection kept: no master listens at") {
		t.Fatalf("mux check after stop: %s", r)
	}
	if r := rig.cli().run("lock", "status"); r.code != 0 {
		t.Fatalf("a command after stop: %s", r)
	}
	if r := rig.cli().run("mux", "exit"); r.code != 0 || !strings.Contains(r.stdout, "ends now") {
		t.Fatalf("mux exit: %s", r)
	}
	waitFor(t, 10*time.Second, "the master ends", func() bool { return len(rig.masters()) == 0 })
	if r := rig.cli().run("mux", "stop"); r.code != 0 || !strings.Contains(r.stdout, "nothing to stop: no connection kept") {
		t.Fatalf("mux stop with no master: %s", r)
	}
}

func slicesContains(s []int, v int) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// TestMuxRaceOneMaster: commands started together with no master each
// may start one; one master is left, and every command succeeds.
func TestMuxRaceOneMaster(t *testing.T) {
	t.Parallel()
	h := sshd.Start(t, sshd.Options{})
	rig := newMuxRig(t, h, h.Addr, "60")
	var runs []*started
	for range 4 {
		runs = append(runs, rig.cli().start("lock", "status"))
	}
	for _, s := range runs {
		if code := s.wait(t, 60*time.Second); code != 0 {
			t.Fatalf("lock status: exit %d: %s", code, s.stderr())
		}
	}
	waitFor(t, 10*time.Second, "one master is left", func() bool { return len(rig.masters()) == 1 })
	t.Logf("%d logins for 4 commands started at once", accepted(t, h))
}

// hoistVariants are hoist binaries of another mux protocol, built once.
var hoistVariants sync.Map // protocol → *variant

type variant struct {
	once sync.Once
	bin  string
	err  error
}

// hoistOfProtocol is a hoist whose masters and clients speak mux protocol
// proto, as an older or newer release would.
func hoistOfProtocol(t *testing.T, proto string) string {
	t.Helper()
	v, _ := hoistVariants.LoadOrStore(proto, &variant{})
	vv := v.(*variant)
	vv.once.Do(func() {
		vv.bin = filepath.Join(filepath.Dir(hoistBin), "hoist-mux"+proto)
		out, err := exec.Command("go", "build", "-o", vv.bin, "-ldflags",
			"-X github.com/hoistdev/hoist/transport.muxProtocol="+proto, "github.com/hoistdev/hoist/cmd/hoist").CombinedOutput()
		if err != nil {
			vv.err = fmt.Errorf("%v: %s", err, out)
		}
	})
	if vv.err != nil {
		t.Fatalf("building a hoist of mux protocol %s: %v", proto, vv.err)
	}
	return vv.bin
}

// TestMuxVersionSkew: a master an older hoist started is asked to stop (it
// ends once idle) and replaced by this hoist's; a master a newer hoist
// started is left to it, and this hoist connects directly.
func TestMuxVersionSkew(t *testing.T) {
	t.Parallel()
	h := sshd.Start(t, sshd.Options{})
	for _, c := range []struct{ name, proto, says string }{
		{"older master", "0", "speaks mux protocol 0, older than 1: asked it to stop"},
		{"newer master", "2", "speaks mux protocol 2, newer than this hoist's 1"},
	} {
		t.Run(c.name, func(t *testing.T) {
			bin := hoistOfProtocol(t, c.proto)
			rig := newMuxRig(t, h, h.Addr, "60")
			other := rig.cli()
			other.bin = bin
			if r := other.run("lock", "status"); r.code != 0 {
				t.Fatalf("the other hoist: %s", r)
			}
			theirs := rig.master()
			r := rig.cli().run("-v", "lock", "status")
			if r.code != 0 || !strings.Contains(r.stderr, c.says) {
				t.Fatalf("this hoist does not say %q: %s", c.says, r)
			}
			if c.proto == "2" {
				if !strings.Contains(r.stderr, "connecting directly") || !slicesContains(rig.masters(), theirs) || len(rig.masters()) != 1 {
					t.Fatalf("want a direct connection and the newer master (pid %d) left alone, masters %v: %s", theirs, rig.masters(), r.stderr)
				}
				return
			}
			waitFor(t, 10*time.Second, "the older master ends", func() bool { return !slicesContains(rig.masters(), theirs) })
			mine := rig.master()
			if r := rig.cli().run("mux", "check"); r.code != 0 || !strings.Contains(r.stdout, "(pid "+strconv.Itoa(mine)) {
				t.Fatalf("mux check after the replacement: %s", r)
			}
		})
	}
}

// TestMuxMasterChecksHostKey: the master checks the host key as a command
// does: an unknown key is refused with the same message as on a direct
// connection, from one connection, and no master is left; with
// --accept-new-host-key the master records it, and the next command uses
// the master without the flag.
func TestMuxMasterChecksHostKey(t *testing.T) {
	t.Parallel()
	h := sshd.Start(t, sshd.Options{})
	empty := func() string {
		f := filepath.Join(t.TempDir(), "known_hosts")
		os.WriteFile(f, nil, 0o600)
		return f
	}
	withKnown := func(c *cli, f string) *cli {
		for i, a := range c.flags {
			if a == "--known-hosts" {
				c.flags[i+1] = f
			}
		}
		return c
	}
	unknown := empty()
	direct := withKnown(newCLI(t, h, filepath.Join(h.Dir, "store")), unknown).run("lock", "status")
	rig := newMuxRig(t, h, h.Addr, "60")
	before := connections(t, h)
	shared := withKnown(rig.cli(), unknown).run("lock", "status")
	if shared.code != direct.code || shared.code != 1 || shared.stderr != direct.stderr {
		t.Fatalf("unknown host key through a master:\n%s\ndirectly:\n%s", shared, direct)
	}
	if n := connections(t, h) - before; n != 1 || len(rig.masters()) != 0 || rig.socket() != "" {
		t.Fatalf("%d connections (want 1), masters %v, socket %q", n, rig.masters(), rig.socket())
	}
	known := empty()
	if r := withKnown(rig.cli(), known).run("--accept-new-host-key", "lock", "status"); r.code != 0 {
		t.Fatalf("--accept-new-host-key: %s", r)
	}
	if b, _ := os.ReadFile(known); !strings.Contains(string(b), strings.Fields(h.HostKey)[1]) {
		t.Fatalf("the master did not record the host key: %q", b)
	}
	logins := accepted(t, h)
	if r := withKnown(rig.cli(), known).run("lock", "status"); r.code != 0 || accepted(t, h) != logins {
		t.Fatalf("the next command: %s; %d logins more, want it through the master", r, accepted(t, h)-logins)
	}
}

// connections counts the TCP connections the host's sshd has had.
func connections(t *testing.T, h *sshd.Host) int {
	t.Helper()
	data, _ := os.ReadFile(filepath.Join(filepath.Dir(h.KnownHosts), "sshd.log"))
	return strings.Count(string(data), "Connection from")
}

// TestMuxThroughConfigAndJump: a configuration file (-F) whose alias is
// reached through a ProxyJump bastion and asks for ControlMaster: the
// master resolves the alias as the command did, from the same file, and
// keeps the connection through the bastion; a second command logs in
// nowhere, and messages name the alias.
func TestMuxThroughConfigAndJump(t *testing.T) {
	t.Parallel()
	target := sshd.Start(t, sshd.Options{})
	bastion := sshd.Start(t, sshd.Options{})
	dir, err := os.MkdirTemp("/tmp", "hm")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	cfg := writeConfig(t, hostBlock("app", target, "ProxyJump bastion", "ControlMaster auto", "ControlPersist 60",
		"ControlPath "+dir+"/%n"), hostBlock("bastion", bastion))
	c := sshConfigCLI(t, cfg, filepath.Join(target.Dir, "store"))
	rig := &muxRig{t: t, dir: dir}
	defer func() {
		for _, pid := range rig.masters() {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	}()
	for i := range 2 {
		r := c.run("-H", "app", "run", "--", "sh", "-c", "echo on-$(id -un)")
		if r.code != 0 || r.stdout != "on-"+target.User+"\n" {
			t.Fatalf("command %d through the alias: %s", i, r)
		}
	}
	if n, m := accepted(t, target), accepted(t, bastion); n != 1 || m != 1 {
		t.Fatalf("logins: %d on the target, %d on the bastion; want one each for two commands", n, m)
	}
	if _, err := os.Lstat(filepath.Join(dir, "app.hoist")); err != nil || len(rig.masters()) != 1 {
		t.Fatalf("the master at %s/app.hoist: %v, masters %v", dir, err, rig.masters())
	}
	if r := c.run("-H", "app", "mux", "check"); r.code != 0 || !strings.HasPrefix(r.stdout, "app: master running") {
		t.Fatalf("mux check: %s", r)
	}
}
