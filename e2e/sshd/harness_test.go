package sshd

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestPlainHost(t *testing.T) {
	t.Parallel()
	h := Start(t, Options{})

	if want := h.User + "@127.0.0.1:" + strconv.Itoa(h.Port); h.Target() != want || h.Addr != "127.0.0.1:"+strconv.Itoa(h.Port) {
		t.Errorf("Target() = %q, Addr = %q; want %q", h.Target(), h.Addr, want)
	}
	if os.Geteuid() == 0 && h.User != "hoist-bash" {
		t.Errorf("as root the default user is %q, want hoist-bash", h.User)
	}
	out, status := h.SSH(t, `id -un; echo "$HOME"; touch "`+h.Dir+`/probe" && echo writable`)
	if want := h.User + "\n" + h.Home + "\nwritable\n"; status != 0 || out != want {
		t.Fatalf("ssh: status %d, output %q; want 0, %q", status, out, want)
	}
	if info, err := os.Stat(h.Dir); err != nil || info.Mode().Perm() != 0o755 {
		t.Errorf("Dir %s: %v, %v; want mode 0755", h.Dir, info.Mode(), err)
	}
	if key, err := os.ReadFile(h.KeyFile); err != nil || !bytes.HasPrefix(key, []byte("-----BEGIN OPENSSH PRIVATE KEY-----")) {
		t.Errorf("KeyFile %s is not an OpenSSH private key (%v)", h.KeyFile, err)
	}

	// The sftp subsystem, which hoist uses for file transfers.
	sftp := exec.Command("sftp", "-F", "/dev/null", "-b", "-", "-i", h.KeyFile,
		"-o", "BatchMode=yes", "-o", "IdentitiesOnly=yes", "-o", "IdentityAgent=none",
		"-o", "UserKnownHostsFile="+h.KnownHosts, "-o", "StrictHostKeyChecking=yes",
		"-P", strconv.Itoa(h.Port), h.User+"@127.0.0.1")
	sftp.Stdin = strings.NewReader("ls " + h.Dir + "\n")
	if out, err := sftp.CombinedOutput(); err != nil || !strings.Contains(string(out), h.Dir+"/probe") {
		t.Errorf("sftp ls %s: %v\n%s", h.Dir, err, out)
	}

	port := h.Port
	h.Stop()
	if _, status := h.SSH(t, "true"); status != 255 {
		t.Errorf("ssh after Stop: status %d, want 255", status)
	}
	h.Restart()
	if h.Port != port {
		t.Errorf("Restart moved the host from port %d to %d", port, h.Port)
	}
	if out, status := h.SSH(t, "echo back"); status != 0 || out != "back\n" {
		t.Errorf("ssh after Restart: status %d, output %q; want 0, \"back\\n\"", status, out)
	}
}

func TestLoginShells(t *testing.T) {
	RequireRoot(t)
	t.Parallel()
	// $0-ish check, in each shell's own syntax, and its expected output.
	zeroCheck := map[string][2]string{
		"bash": {`echo $0`, "bash"},
		"dash": {`echo $0`, "dash"},
		"zsh":  {`echo $0`, "zsh"},
		"mksh": {`echo $0`, "mksh"},
		"sh":   {`echo $0`, "sh"},
		"tcsh": {`echo $0`, "tcsh"},
		"fish": {`status current-command`, "fish"},
	}
	for _, shell := range loginShells {
		t.Run(shell, func(t *testing.T) {
			t.Parallel()
			h := Start(t, Options{Shell: shell})
			if h.User != "hoist-"+shell {
				t.Errorf("User = %q, want hoist-%s", h.User, shell)
			}
			path, err := shellPath(shell)
			if err != nil {
				t.Fatal(err)
			}
			want, err := filepath.EvalSymlinks(path)
			if err != nil {
				t.Fatal(err)
			}
			// "; true" keeps the shell from exec'ing /bin/sh in its place.
			out, status := h.SSH(t, `/bin/sh -c 'readlink /proc/$PPID/exe'; true`)
			if status != 0 || strings.TrimSpace(out) != want {
				t.Errorf("login shell binary: status %d, output %q; want %s", status, out, want)
			}
			c := zeroCheck[shell]
			if out, status := h.SSH(t, c[0]); status != 0 || strings.TrimSpace(out) != c[1] {
				t.Errorf("%s: status %d, output %q; want %q", c[0], status, out, c[1])
			}
			if out, status := h.SSH(t, `exec /bin/sh -c 'echo ok'`); status != 0 || out != "ok\n" {
				t.Errorf("exec /bin/sh: status %d, output %q; want 0, \"ok\\n\"", status, out)
			}
		})
	}
}

func TestBusybox(t *testing.T) {
	RequireRoot(t)
	t.Parallel()
	h := Start(t, Options{Busybox: true})
	busybox, err := filepath.EvalSymlinks(h.tools.busybox)
	if err != nil {
		t.Fatal(err)
	}

	out, status := h.SSH(t, `/bin/sh --help 2>&1 | head -n 1; [ /bin/sh -ef `+busybox+` ] && echo same-file`)
	if status != 0 || !strings.HasPrefix(out, "BusyBox v") || !strings.HasSuffix(out, "\nsame-file\n") {
		t.Errorf("/bin/sh on the busybox host: status %d, output %q; want the BusyBox banner and the busybox file", status, out)
	}
	tools := []string{"stat", "mv", "date", "sleep", "cat", "mkdir"}
	var want strings.Builder
	for _, tool := range tools {
		want.WriteString(filepath.Join(h.binDir, tool) + "\n")
	}
	if out, status := h.SSH(t, "for c in "+strings.Join(tools, " ")+"; do command -v $c; done"); status != 0 || out != want.String() {
		t.Errorf("command -v: status %d, output %q; want %q", status, out, want.String())
	}
	if out, _ := h.SSH(t, `stat --help 2>&1 | head -n 1`); !strings.HasPrefix(out, "BusyBox v") {
		t.Errorf("stat on the busybox host is not busybox's: %q", out)
	}

	// The bind mount must not leak out of the host's mount namespace.
	sh, err := os.Stat("/bin/sh")
	if err != nil {
		t.Fatal(err)
	}
	bb, err := os.Stat(busybox)
	if err != nil {
		t.Fatal(err)
	}
	if os.SameFile(sh, bb) {
		t.Fatalf("this machine's /bin/sh became busybox: the bind mount leaked out of the namespace")
	}
	if out, _ := exec.Command("/bin/sh", "--help").CombinedOutput(); bytes.Contains(out, []byte("BusyBox")) {
		t.Fatalf("this machine's /bin/sh runs busybox: %q", out)
	}

	// Busybox ash as the login shell.
	ash := Start(t, Options{Busybox: true, Shell: "sh"})
	out, status = ash.SSH(t, `[ /proc/$$/exe -ef `+busybox+` ] && echo login-shell-is-busybox`)
	if status != 0 || out != "login-shell-is-busybox\n" {
		t.Errorf("busybox ash as login shell: status %d, output %q", status, out)
	}
}

func TestBootNamespace(t *testing.T) {
	RequireRoot(t)
	t.Parallel()
	realID := readBootID(t)
	h := Start(t, Options{BootNamespace: true})
	if h.BootID == "" || h.BootID == realID {
		t.Fatalf("BootID = %q; want a fake id, not the machine's %s", h.BootID, realID)
	}
	if out, status := h.SSH(t, "cat /proc/sys/kernel/random/boot_id"); status != 0 || strings.TrimSpace(out) != h.BootID {
		t.Fatalf("boot_id on the host: status %d, output %q; want %s", status, out, h.BootID)
	}

	if _, status := h.SSH(t, "nohup sleep 31337 >/dev/null 2>&1 &"); status != 0 {
		t.Fatalf("starting a background process: status %d", status)
	}
	pid := waitForProcess(t, h, []string{"sleep", "31337"})

	oldID, port := h.BootID, h.Port
	start := time.Now()
	h.Reboot(t)
	t.Logf("Reboot took %v", time.Since(start))
	if h.BootID == oldID || h.BootID == realID {
		t.Errorf("BootID after Reboot = %q; want new (old %s, machine %s)", h.BootID, oldID, realID)
	}
	if h.Port != port {
		t.Errorf("Reboot moved the host from port %d to %d", port, h.Port)
	}
	if out, status := h.SSH(t, "cat /proc/sys/kernel/random/boot_id"); status != 0 || strings.TrimSpace(out) != h.BootID {
		t.Errorf("boot_id after Reboot: status %d, output %q; want %s", status, out, h.BootID)
	}
	if cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid)); err == nil && bytes.Contains(cmdline, []byte("31337")) {
		t.Errorf("background process %d survived Reboot", pid)
	}
	if readBootID(t) != realID {
		t.Errorf("the machine's boot id changed")
	}
}

// TestPIDNamespace: two PIDNamespace hosts are two containers on this
// kernel: the machine's boot_id and machine-id, one login user and one
// filesystem, but each its own PID namespace and PID 1, and neither sees
// the other's processes. Stop kills every process of the host, and Restart
// brings up a new PID 1 (a later start time) with the same boot_id.
func TestPIDNamespace(t *testing.T) {
	RequireRoot(t)
	t.Parallel()
	realID := readBootID(t)
	machineID, err := os.ReadFile("/etc/machine-id")
	if err != nil {
		t.Fatal(err)
	}
	self, err := os.Readlink("/proc/self/ns/pid")
	if err != nil {
		t.Fatal(err)
	}
	a := Start(t, Options{PIDNamespace: true})
	b := Start(t, Options{PIDNamespace: true})
	if a.BootID != "" {
		t.Errorf("BootID = %q; PIDNamespace has no fake boot id", a.BootID)
	}
	if a.User != b.User {
		t.Fatalf("two hosts with the same Shell log in as %s and %s", a.User, b.User)
	}
	// Field 22 of /proc/1/stat is the start time of the namespace's PID 1.
	const facts = `exec /bin/sh -c 'cat /proc/sys/kernel/random/boot_id /etc/machine-id; readlink /proc/self/ns/pid; head -c 11 /proc/1/cmdline | tr "\0" " "; echo; cut -d" " -f22 /proc/1/stat'`
	type view struct{ boot, mach, ns, init1, start1 string }
	look := func(h *Host) view {
		t.Helper()
		out, status := h.SSH(t, facts)
		f := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
		if status != 0 || len(f) != 5 {
			t.Fatalf("host facts on %s: status %d, output %q", h.Addr, status, out)
		}
		return view{f[0], f[1], f[2], f[3], f[4]}
	}
	va, vb := look(a), look(b)
	for _, v := range []view{va, vb} {
		if v.boot != realID || v.mach != strings.TrimSpace(string(machineID)) {
			t.Errorf("boot_id %s, machine-id %s on a host; want the machine's %s, %s", v.boot, v.mach, realID, machineID)
		}
		if v.ns == self {
			t.Errorf("a host runs in this process's PID namespace %s", self)
		}
		if !strings.HasPrefix(v.init1, "/bin/sh -c ") {
			t.Errorf("PID 1 of a host is %q, want the harness's /bin/sh", v.init1)
		}
	}
	if va.ns == vb.ns {
		t.Errorf("both hosts run in PID namespace %s", va.ns)
	}

	if _, status := a.SSH(t, "nohup sleep 31341 >/dev/null 2>&1 &"); status != 0 {
		t.Fatalf("starting a background process: status %d", status)
	}
	pid := waitForProcess(t, a, []string{"sleep", "31341"})
	const find = `exec /bin/sh -c 'for f in /proc/[0-9]*/cmdline; do tr "\0" " " <$f; echo; done | grep -c "^sleep 31341 "; true'`
	if out, _ := a.SSH(t, find); strings.TrimSpace(out) != "1" {
		t.Errorf("host a sees its own sleep %q times, want 1", strings.TrimSpace(out))
	}
	if out, _ := b.SSH(t, find); strings.TrimSpace(out) != "0" {
		t.Errorf("host b sees host a's sleep %q times, want 0", strings.TrimSpace(out))
	}

	a.Restart()
	if cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid)); err == nil && bytes.Contains(cmdline, []byte("31341")) {
		t.Errorf("background process %d survived Stop", pid)
	}
	again := look(a)
	if again.boot != realID {
		t.Errorf("boot_id after Restart: %s, want the machine's %s", again.boot, realID)
	}
	if again.start1 == va.start1 {
		t.Errorf("PID 1 after Restart started at %s, as the one before", again.start1)
	}
}

func TestBusyboxInBootNamespace(t *testing.T) {
	RequireRoot(t)
	t.Parallel()
	h := Start(t, Options{Busybox: true, BootNamespace: true})
	out, status := h.SSH(t, `/bin/sh --help 2>&1 | head -n 1; command -v stat; cat /proc/sys/kernel/random/boot_id`)
	want := filepath.Join(h.binDir, "stat") + "\n" + h.BootID + "\n"
	if status != 0 || !strings.HasPrefix(out, "BusyBox v") || !strings.HasSuffix(out, want) {
		t.Errorf("status %d, output %q; want the BusyBox banner, then %q", status, out, want)
	}
}

func TestProxyCut(t *testing.T) {
	t.Parallel()
	h := Start(t, Options{})
	p := NewProxy(t, h.Addr)
	kh := h.KnownHostsFor(t, p.Addr)

	s := startSSH(t, h, p.Addr, kh, "echo started; sleep 5; echo finished")
	s.expectLine(t, "started", 10*time.Second)
	cut := time.Now()
	p.Cut()
	status := s.wait(t, 3*time.Second)
	if status != 255 {
		t.Errorf("ssh through a cut connection: status %d, want 255", status)
	}
	t.Logf("ssh exited %v after Cut", time.Since(cut))

	if out, status := h.sshVia(t, p.Addr, kh, "echo again"); status != 0 || out != "again\n" {
		t.Errorf("new connection after Cut: status %d, output %q", status, out)
	}
}

func TestProxyFreezeThaw(t *testing.T) {
	t.Parallel()
	h := Start(t, Options{})
	p := NewProxy(t, h.Addr)
	kh := h.KnownHostsFor(t, p.Addr)

	s := startSSH(t, h, p.Addr, kh, "echo started; sleep 0.5; echo finished")
	s.expectLine(t, "started", 10*time.Second)
	p.Freeze()
	select {
	case line := <-s.lines:
		t.Fatalf("got %q through a frozen proxy", line)
	case <-s.done:
		t.Fatalf("ssh exited through a frozen proxy")
	case <-time.After(2 * time.Second):
	}
	p.Thaw()
	s.expectLine(t, "finished", 5*time.Second)
	if status := s.wait(t, 5*time.Second); status != 0 {
		t.Errorf("ssh after Thaw: status %d, want 0", status)
	}
}

func TestRequireRootMessage(t *testing.T) {
	rec := &skipRecorder{TB: t}
	requireRoot(rec, 1000)
	if rec.skipped != rootSkipReason {
		t.Errorf("non-root skip message %q, want %q", rec.skipped, rootSkipReason)
	}
	rec = &skipRecorder{TB: t}
	requireRoot(rec, 0)
	if rec.skipped != "" {
		t.Errorf("root was skipped: %q", rec.skipped)
	}
}

// TestForeignProc: a ForeignProc host runs in a PID namespace of its own
// with the machine's /proc: the login shell's $$ is not what /proc/self
// says, /proc shows this test's own process, and Stop kills every process
// of the host.
func TestForeignProc(t *testing.T) {
	RequireRoot(t)
	t.Parallel()
	self, err := os.Readlink("/proc/self/ns/pid")
	if err != nil {
		t.Fatal(err)
	}
	h := Start(t, Options{ForeignProc: true})
	out, status := h.SSH(t, `exec /bin/sh -c 'read s </proc/self/stat; echo "$$ ${s%% *}"; readlink /proc/self/ns/pid; test -d /proc/`+fmt.Sprint(os.Getpid())+` && echo sees-the-machine'`)
	f := strings.Fields(out)
	if status != 0 || len(f) != 4 {
		t.Fatalf("on the host: status %d, output %q", status, out)
	}
	if f[0] == f[1] {
		t.Errorf("$$ is %s and /proc/self is %s: /proc is the namespace's own", f[0], f[1])
	}
	if f[2] == self {
		t.Errorf("the host runs in this process's PID namespace %s", self)
	}
	if f[3] != "sees-the-machine" {
		t.Errorf("the host's /proc does not show this test's process: %q", out)
	}
	if _, status := h.SSH(t, "nohup sleep 31343 >/dev/null 2>&1 &"); status != 0 {
		t.Fatalf("starting a background process: status %d", status)
	}
	pid := waitForProcess(t, h, []string{"sleep", "31343"})
	h.Stop()
	if cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid)); err == nil && bytes.Contains(cmdline, []byte("31343")) {
		t.Errorf("background process %d survived Stop", pid)
	}
}

func TestRootOnlyOptions(t *testing.T) {
	t.Parallel()
	rootOnlyOpts := []Options{{Shell: "zsh"}, {Busybox: true}, {BootNamespace: true}, {PIDNamespace: true}, {ForeignProc: true}, {Cgroup: true}}
	if rootOnly(Options{}) {
		t.Errorf("the default options should not need root")
	}
	for _, opts := range rootOnlyOpts {
		if !rootOnly(opts) {
			t.Errorf("%+v should need root", opts)
		}
	}
	if os.Geteuid() == 0 {
		return
	}
	for _, opts := range rootOnlyOpts {
		t.Run(fmt.Sprintf("%+v", opts), func(t *testing.T) {
			defer func() {
				if !t.Skipped() {
					t.Errorf("Start(%+v) did not skip without root", opts)
				}
			}()
			Start(t, opts)
		})
	}
}

func TestCleanupKillsLeftovers(t *testing.T) {
	t.Parallel()
	var pid int
	var dir string
	t.Run("host", func(t *testing.T) {
		h := Start(t, Options{})
		dir = h.root
		// A login that outlives Stop, and an orphan it leaves behind.
		s := startSSH(t, h, h.Addr, h.KnownHosts, "echo started; sleep 31338")
		s.expectLine(t, "started", 10*time.Second)
		if _, status := h.SSH(t, "nohup sleep 31339 >/dev/null 2>&1 &"); status != 0 {
			t.Fatalf("starting a background process: status %d", status)
		}
		pid = waitForProcess(t, h, []string{"sleep", "31339"})
		h.Stop()
		select {
		case <-s.done:
			t.Fatalf("Stop ended an open login")
		case <-time.After(200 * time.Millisecond):
		}
		if err := syscall.Kill(pid, 0); err != nil {
			t.Fatalf("background process gone after Stop: %v", err)
		}
	})
	if cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid)); err == nil && bytes.Contains(cmdline, []byte("31339")) {
		t.Errorf("background process %d survived cleanup", pid)
	}
	if pids := hostPIDs(dir); len(pids) > 0 {
		t.Errorf("processes %v of the host survived cleanup", pids)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("host directory %s survived cleanup (%v)", dir, err)
	}
}

type skipRecorder struct {
	testing.TB
	skipped string
}

func (r *skipRecorder) Skip(args ...any) { r.skipped = fmt.Sprint(args...) }

func readBootID(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(data))
}

// waitForProcess returns the pid, as seen here, of the host's process
// running argv.
func waitForProcess(t *testing.T, h *Host, argv []string) int {
	t.Helper()
	want := []byte(strings.Join(argv, "\x00") + "\x00")
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		for _, pid := range hostPIDs(h.root) {
			if cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid)); bytes.Equal(cmdline, want) {
				return pid
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("no process %q on host %s", argv, h.Addr)
	return 0
}

// sshRun is an ssh client running in the background.
type sshRun struct {
	cmd   *exec.Cmd
	lines chan string   // stdout, line by line
	done  chan struct{} // closed when ssh has exited
	err   error
}

func startSSH(t *testing.T, h *Host, addr, knownHosts, script string) *sshRun {
	t.Helper()
	cmd, err := h.sshCommand(t.Context(), addr, knownHosts, script)
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &sshRun{cmd: cmd, lines: make(chan string, 16), done: make(chan struct{})}
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			s.lines <- sc.Text()
		}
		s.err = cmd.Wait()
		if stderr.Len() > 0 {
			t.Logf("ssh stderr: %s", strings.TrimSpace(stderr.String()))
		}
		close(s.done)
	}()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-s.done
	})
	return s
}

func (s *sshRun) expectLine(t *testing.T, want string, timeout time.Duration) {
	t.Helper()
	select {
	case line := <-s.lines:
		if line != want {
			t.Fatalf("ssh printed %q, want %q", line, want)
		}
	case <-time.After(timeout):
		t.Fatalf("ssh did not print %q within %v", want, timeout)
	}
}

func (s *sshRun) wait(t *testing.T, timeout time.Duration) int {
	t.Helper()
	select {
	case <-s.done:
	case <-time.After(timeout):
		t.Fatalf("ssh still running %v later", timeout)
	}
	var exit *exec.ExitError
	if errors.As(s.err, &exit) {
		if ws, ok := exit.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			t.Fatalf("ssh killed by %v", ws.Signal())
		}
		return exit.ExitCode()
	}
	if s.err != nil {
		t.Fatal(s.err)
	}
	return 0
}
