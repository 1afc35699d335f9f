package sshd

import (
	"cmp"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hoistdev/hoist/e2e/internal/harness"
)

// tools are the absolute paths of the programs a host needs.
type tools struct {
	sshd, keygen string
	mount        string // with Busybox, BootNamespace, PIDNamespace, NoShell or Hide
	busybox      string // with Busybox: busybox itself
	shTarget     string // with Busybox or NoShell: the file /bin/sh resolves to
	strace       string // with TraceProcs
}

func findTools(opts Options) (tools, error) {
	var tl tools
	var err error
	if tl.sshd, err = harness.FindProgram("sshd", "/usr/sbin/sshd", "/usr/local/sbin/sshd"); err != nil {
		return tl, errors.New("sshd not found: run `make test`, which installs openssh-server")
	}
	if tl.keygen, err = harness.FindProgram("ssh-keygen", "/usr/bin/ssh-keygen"); err != nil {
		return tl, errors.New("ssh-keygen not found: run `make test`, which installs openssh-client")
	}
	if opts.Busybox || ownPIDs(opts) || opts.NoShell || len(opts.Hide) > 0 || len(opts.Tmpfs) > 0 {
		if tl.mount, err = harness.FindProgram("mount", "/usr/bin/mount", "/bin/mount"); err != nil {
			return tl, errors.New("mount not found: run `make test`, which installs util-linux")
		}
	}
	if opts.Busybox {
		if tl.busybox, err = harness.FindProgram("busybox", "/usr/bin/busybox", "/bin/busybox"); err != nil {
			return tl, errors.New("busybox not found: run `make test`, which installs busybox")
		}
		if tl.busybox, err = filepath.EvalSymlinks(tl.busybox); err != nil {
			return tl, err
		}
	}
	if opts.TraceProcs {
		if tl.strace, err = harness.FindProgram("strace", "/usr/bin/strace"); err != nil {
			return tl, errors.New("strace not found: run `make deps`, which installs it")
		}
	}
	if opts.Busybox || opts.NoShell {
		if tl.shTarget, err = filepath.EvalSymlinks("/bin/sh"); err != nil {
			return tl, fmt.Errorf("resolving /bin/sh: %v", err)
		}
	}
	return tl, nil
}

func (h *Host) sshdConfig() string {
	env := marker(h.root)
	if h.opts.Busybox {
		env += " PATH=" + h.binDir + ":/usr/bin:/bin"
	}
	lines := []string{
		"ListenAddress 127.0.0.1",
		fmt.Sprintf("Port %d", h.Port),
		"HostKey " + filepath.Join(h.root, "ssh_host_ed25519_key"),
		"AuthorizedKeysFile " + filepath.Join(h.root, "authorized_keys"),
		"PidFile " + filepath.Join(h.root, "sshd.pid"),
		"AllowUsers " + h.User,
		"PubkeyAuthentication yes",
		"PasswordAuthentication no",
		"KbdInteractiveAuthentication no",
		"UsePAM no",
		"StrictModes no",
		"PermitRootLogin no",
		"Subsystem sftp internal-sftp",
		"MaxStartups 200",
		"MaxSessions " + strconv.Itoa(cmp.Or(h.opts.MaxSessions, 64)),
		"LogLevel VERBOSE",
		"PrintMotd no",
		"PrintLastLog no",
		"UseDNS no",
		"X11Forwarding no",
		// Only the first SetEnv line counts, so all variables go here.
		"SetEnv " + env,
	}
	return strings.Join(lines, "\n") + "\n"
}

// command builds the process that runs the host's sshd. A plain host is
// sshd itself. Otherwise /bin/sh starts in new namespaces, mounts what the
// options need and either becomes sshd (mount namespace only) or stays as
// PID 1 of the PID namespace, waiting for sshd and reaping orphans.
func (h *Host) command() *exec.Cmd {
	sshd := []string{h.tools.sshd, "-D", "-e", "-f", h.config}
	if h.opts.TraceProcs {
		sshd = append(straceArgs(h.tools.strace, h.tracePath), sshd...)
	}
	if !h.opts.Busybox && !ownPIDs(h.opts) && !h.opts.NoShell && len(h.opts.Hide) == 0 && len(h.opts.Tmpfs) == 0 {
		return exec.Command(sshd[0], sshd[1:]...)
	}
	mount := quote(h.tools.mount)
	var s strings.Builder
	s.WriteString("set -e\n")
	fmt.Fprintf(&s, "%s --make-rprivate /\n", mount)
	flags := uintptr(syscall.CLONE_NEWNS)
	if ownPIDs(h.opts) {
		// What unshare -m -p --fork --mount-proc does: /bin/sh is PID 1
		// of the new namespace, with a /proc of its own; without
		// --mount-proc (ForeignProc), with the machine's.
		flags |= syscall.CLONE_NEWPID
		if !h.opts.ForeignProc {
			fmt.Fprintf(&s, "%s -t proc proc /proc\n", mount)
		}
	}
	if h.opts.BootNamespace {
		fmt.Fprintf(&s, "%s --bind %s /proc/sys/kernel/random/boot_id\n", mount, quote(h.bootFile))
	}
	if h.opts.Busybox {
		fmt.Fprintf(&s, "%s --bind %s %s\n", mount, quote(h.tools.busybox), quote(h.tools.shTarget))
	}
	if h.opts.NoShell {
		empty := filepath.Join(h.root, "no-shell")
		fmt.Fprintf(&s, ": >%s\n%s --bind %s %s\n", quote(empty), mount, quote(empty), quote(h.tools.shTarget))
	}
	if len(h.opts.Hide) > 0 {
		empty := filepath.Join(h.root, "hidden")
		fmt.Fprintf(&s, ": >%s\nchmod 0644 %s\n", quote(empty), quote(empty))
		for _, p := range h.opts.Hide {
			fmt.Fprintf(&s, "%s --bind %s %s\n", mount, quote(empty), quote(p))
		}
	}
	for _, d := range h.opts.Tmpfs {
		fmt.Fprintf(&s, "mkdir -p %s\n%s -t tmpfs -o mode=1777 tmpfs %s\n", quote(d), mount, quote(d))
	}
	quoted := make([]string, len(sshd))
	for i, a := range sshd {
		quoted[i] = quote(a)
	}
	if ownPIDs(h.opts) {
		fmt.Fprintf(&s, "%s &\nwait $!\n", strings.Join(quoted, " "))
	} else {
		fmt.Fprintf(&s, "exec %s\n", strings.Join(quoted, " "))
	}
	cmd := exec.Command("/bin/sh", "-c", s.String())
	cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: flags}
	return cmd
}

func quote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// stopSignal is how a host's sshd (or its namespace's PID 1) is stopped.
// PID 1 of a PID namespace gets SIGKILL, which takes down the whole
// namespace; sshd gets SIGTERM (then SIGKILL if it lingers).
func stopSignal(kill bool) syscall.Signal {
	if kill {
		return syscall.SIGKILL
	}
	return syscall.SIGTERM
}

var errPortInUse = errors.New("port in use")

// startNewPort starts sshd on a free port, trying other ports if another
// process takes the chosen one first.
func (h *Host) startNewPort(t testing.TB) {
	t.Helper()
	var err error
	for attempt := 0; attempt < 10; attempt++ {
		var port int
		if port, err = freePort(); err != nil {
			t.Fatalf("finding a free port: %v", err)
		}
		if err = h.setPort(port); err != nil {
			t.Fatalf("writing sshd config %s: %v", h.config, err)
		}
		h.mu.Lock()
		err = h.launch()
		h.mu.Unlock()
		if !errors.Is(err, errPortInUse) {
			break
		}
	}
	if err != nil {
		t.Fatalf("starting sshd on %s as %s: %v (log: %s)\n%s", h.Addr, h.User, err, h.logPath, harness.Tail(h.logPath, 30))
	}
}

// launchRetry starts sshd on the host's port, waiting for the port to be
// free again if needed.
func (h *Host) launchRetry() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	deadline := time.Now().Add(15 * time.Second)
	for {
		err := h.launch()
		if !errors.Is(err, errPortInUse) || time.Now().After(deadline) {
			return err
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// launch starts sshd and waits until it serves its port. h.mu is held.
func (h *Host) launch() error {
	cmd := h.command()
	cmd.Env = append(os.Environ(), marker(h.root))
	if h.tracePath != "" {
		if err := appendLine(h.tracePath, "0 "+launchLine); err != nil {
			return err
		}
	}
	if h.cgroup != "" {
		// Into the cgroup from its first instruction (clone3's
		// CLONE_INTO_CGROUP): nothing of the host runs outside it.
		fd, err := syscall.Open(h.cgroup, syscall.O_DIRECTORY|syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
		if err != nil {
			return fmt.Errorf("opening the host's cgroup: %v", err)
		}
		defer syscall.Close(fd)
		if cmd.SysProcAttr == nil {
			cmd.SysProcAttr = &syscall.SysProcAttr{}
		}
		cmd.SysProcAttr.UseCgroupFD, cmd.SysProcAttr.CgroupFD = true, fd
	}
	banner := fmt.Sprintf("--- hoist e2e: starting sshd on %s at %s", h.Addr, time.Now().Format(time.RFC3339Nano))
	p, offset, err := harness.Start(cmd, h.logPath, banner)
	if err != nil {
		return err
	}

	ready := fmt.Sprintf("Server listening on 127.0.0.1 port %d.", h.Port)
	deadline := time.Now().Add(20 * time.Second)
	for {
		select {
		case <-p.Done:
			log := harness.ReadFrom(h.logPath, offset)
			if strings.Contains(log, "Address already in use") || strings.Contains(log, "Cannot bind any address") {
				return errPortInUse
			}
			return fmt.Errorf("sshd exited during startup (%v)", cmd.ProcessState)
		case <-time.After(20 * time.Millisecond):
		}
		if strings.Contains(harness.ReadFrom(h.logPath, offset), ready) {
			break
		}
		if time.Now().After(deadline) {
			p.Stop(syscall.SIGKILL)
			return errors.New("sshd did not report listening within 20s")
		}
	}
	if err := waitBanner(h.Addr, time.Until(deadline)); err != nil {
		p.Stop(syscall.SIGKILL)
		return err
	}
	h.running = p
	return nil
}

func appendLine(path, line string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(f, line)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// waitBanner connects to addr and waits for an SSH protocol banner.
func waitBanner(addr string, timeout time.Duration) error {
	conn, err := net.DialTimeout("tcp", addr, timeout)
	if err != nil {
		return fmt.Errorf("connecting to sshd: %v", err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(timeout))
	buf := make([]byte, 0, 256)
	for !strings.Contains(string(buf), "\n") && len(buf) < cap(buf) {
		n, err := conn.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err != nil {
			break
		}
	}
	if !strings.HasPrefix(string(buf), "SSH-2.0-") {
		return fmt.Errorf("no SSH banner from %s (got %q)", addr, buf)
	}
	return nil
}
