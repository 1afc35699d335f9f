package sshd

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// tools are the absolute paths of the programs a host needs.
type tools struct {
	sshd, keygen string
	mount        string // with Busybox, BootNamespace, PIDNamespace, NoShell or Hide
	busybox      string // with Busybox: busybox itself
	shTarget     string // with Busybox or NoShell: the file /bin/sh resolves to
}

func findTools(opts Options) (tools, error) {
	var tl tools
	var err error
	if tl.sshd, err = findProgram("sshd", "/usr/sbin/sshd", "/usr/local/sbin/sshd"); err != nil {
		return tl, errors.New("sshd not found: run `make test`, which installs openssh-server")
	}
	if tl.keygen, err = findProgram("ssh-keygen", "/usr/bin/ssh-keygen"); err != nil {
		return tl, errors.New("ssh-keygen not found: run `make test`, which installs openssh-client")
	}
	if opts.Busybox || ownPIDs(opts) || opts.NoShell || len(opts.Hide) > 0 {
		if tl.mount, err = findProgram("mount", "/usr/bin/mount", "/bin/mount"); err != nil {
			return tl, errors.New("mount not found: run `make test`, which installs util-linux")
		}
	}
	if opts.Busybox {
		if tl.busybox, err = findProgram("busybox", "/usr/bin/busybox", "/bin/busybox"); err != nil {
			return tl, errors.New("busybox not found: run `make test`, which installs busybox")
		}
		if tl.busybox, err = filepath.EvalSymlinks(tl.busybox); err != nil {
			return tl, err
		}
	}
	if opts.Busybox || opts.NoShell {
		if tl.shTarget, err = filepath.EvalSymlinks("/bin/sh"); err != nil {
			return tl, fmt.Errorf("resolving /bin/sh: %v", err)
		}
	}
	return tl, nil
}

// findProgram looks name up in PATH, then at the given absolute paths
// (sbin directories are often missing from non-root PATHs).
func findProgram(name string, fallbacks ...string) (string, error) {
	if p, err := exec.LookPath(name); err == nil {
		return filepath.Abs(p)
	}
	for _, p := range fallbacks {
		if info, err := os.Stat(p); err == nil && info.Mode().IsRegular() && info.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s not found", name)
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
	if !h.opts.Busybox && !ownPIDs(h.opts) && !h.opts.NoShell && len(h.opts.Hide) == 0 {
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

// process is one run of a host's sshd (or of its namespace's PID 1).
type process struct {
	cmd  *exec.Cmd
	done chan struct{} // closed when cmd has been waited for
}

// stop ends the process. PID 1 of a PID namespace gets SIGKILL, which
// takes down the whole namespace; sshd gets SIGTERM, then SIGKILL.
func (p *process) stop(kill bool) {
	sig := syscall.SIGTERM
	if kill {
		sig = syscall.SIGKILL
	}
	p.cmd.Process.Signal(sig)
	select {
	case <-p.done:
	case <-time.After(5 * time.Second):
		p.cmd.Process.Kill()
		<-p.done
	}
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
		t.Fatalf("starting sshd on %s as %s: %v (log: %s)\n%s", h.Addr, h.User, err, h.logPath, h.logTail(30))
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
	logf, err := os.OpenFile(h.logPath, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	offset, err := logf.Seek(0, io.SeekEnd)
	if err != nil {
		logf.Close()
		return err
	}
	fmt.Fprintf(logf, "--- hoist e2e: starting sshd on %s at %s\n", h.Addr, time.Now().Format(time.RFC3339Nano))
	cmd := h.command()
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.Env = append(os.Environ(), marker(h.root))
	err = cmd.Start()
	logf.Close()
	if err != nil {
		return fmt.Errorf("starting %s: %v", cmd.Path, err)
	}
	p := &process{cmd: cmd, done: make(chan struct{})}
	go func() {
		cmd.Wait()
		close(p.done)
	}()

	ready := fmt.Sprintf("Server listening on 127.0.0.1 port %d.", h.Port)
	deadline := time.Now().Add(20 * time.Second)
	for {
		select {
		case <-p.done:
			log := readFrom(h.logPath, offset)
			if strings.Contains(log, "Address already in use") || strings.Contains(log, "Cannot bind any address") {
				return errPortInUse
			}
			return fmt.Errorf("sshd exited during startup (%v)", cmd.ProcessState)
		case <-time.After(20 * time.Millisecond):
		}
		if strings.Contains(readFrom(h.logPath, offset), ready) {
			break
		}
		if time.Now().After(deadline) {
			p.stop(true)
			return errors.New("sshd did not report listening within 20s")
		}
	}
	if err := waitBanner(h.Addr, time.Until(deadline)); err != nil {
		p.stop(true)
		return err
	}
	h.running = p
	return nil
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

func readFrom(path string, offset int64) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	if _, err := f.Seek(offset, io.SeekStart); err != nil {
		return ""
	}
	data, _ := io.ReadAll(f)
	return string(data)
}

// logTail returns the last n lines of the sshd log.
func (h *Host) logTail(n int) string {
	lines := strings.Split(strings.TrimRight(readFrom(h.logPath, 0), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
