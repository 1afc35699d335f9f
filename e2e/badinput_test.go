package e2e

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/hoistdev/hoist/e2e/sshd"
)

// oneLine fails unless r failed with want on a single stderr line that
// names the target and says what to do.
func oneLine(t *testing.T, r run, code int, target string, want ...string) {
	t.Helper()
	line := strings.TrimSuffix(r.stderr, "\n")
	if r.code != code || strings.Contains(line, "\n") || !strings.HasPrefix(line, "hoist: "+target) {
		t.Fatalf("want exit %d and one line starting with %q:\n%s", code, "hoist: "+target, r)
	}
	for _, w := range want {
		if !strings.Contains(line, w) {
			t.Fatalf("the error does not say %q:\n%s", w, line)
		}
	}
}

func TestBadInput(t *testing.T) {
	t.Parallel()
	h := sshd.Start(t, sshd.Options{})
	root := filepath.Join(h.Dir, "store")

	t.Run("UnknownHostKey", func(t *testing.T) {
		c := newCLI(t, h, root)
		kh := filepath.Join(t.TempDir(), "known_hosts")
		c.flags[5] = kh
		fp := fingerprint(t, h)
		oneLine(t, c.run("lock", "status"), 1, h.Target(), "unknown host key", fp, "--accept-new-host-key")
		if exists(kh) {
			t.Fatal("a refused key was recorded")
		}
		if r := c.run("--accept-new-host-key", "lock", "status"); r.code != 0 {
			t.Fatalf("accepting the new key: %s", r)
		}
		if r := c.run("lock", "status"); r.code != 0 {
			t.Fatalf("the recorded key is not used: %s", r)
		}
	})
	t.Run("ChangedHostKey", func(t *testing.T) {
		other := sshd.Start(t, sshd.Options{})
		c := newCLI(t, h, root)
		// known_hosts holds another host's key for this address.
		kh := filepath.Join(t.TempDir(), "known_hosts")
		line := "[127.0.0.1]:" + strconv.Itoa(h.Port) + " " + other.HostKey + "\n"
		if err := os.WriteFile(kh, []byte(line), 0o600); err != nil {
			t.Fatal(err)
		}
		c.flags[5] = kh
		oneLine(t, c.run("--accept-new-host-key", "lock", "status"), 1, h.Target(), "HOST KEY CHANGED", "ssh-keygen -R")
	})
	t.Run("AuthFailure", func(t *testing.T) {
		c := newCLI(t, h, root)
		key := filepath.Join(t.TempDir(), "id_ed25519")
		if out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", key).CombinedOutput(); err != nil {
			t.Fatalf("ssh-keygen: %v %s", err, out)
		}
		c.flags[3] = key
		oneLine(t, c.run("lock", "status"), 1, h.Target(), "authentication failed", "-i")
	})
	t.Run("Unreachable", func(t *testing.T) {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := l.Addr().String()
		l.Close()
		c := newCLI(t, h, root)
		c.flags[1] = h.User + "@" + addr
		oneLine(t, c.run("lock", "status"), 1, h.User+"@"+addr, "cannot connect", "connection refused")
	})
	t.Run("HandshakeTimeout", func(t *testing.T) {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		go func() {
			for {
				c, err := l.Accept()
				if err != nil {
					return
				}
				defer c.Close() // accepts, never speaks
			}
		}()
		c := newCLI(t, h, root)
		c.flags[1] = h.User + "@" + l.Addr().String()
		oneLine(t, c.run("-o", "ConnectTimeout=1", "lock", "status"), 1, h.User+"@"+l.Addr().String(), "handshake")
	})
	t.Run("LockPathIsAFile", func(t *testing.T) {
		dir := filepath.Join(h.Dir, "file-lock")
		c := newCLI(t, h, dir)
		if r := c.run("lock", "status"); r.code != 0 {
			t.Fatal(r)
		}
		h.SSH(t, "mkdir -p "+dir+"/runtimes && echo keep >"+dir+"/runtimes/.store-lock")
		oneLine(t, c.run("lock", "acquire", "--wait", "0"), 1, h.Target(), "is a file, not the lock directory", "by hand")
		if out, _ := h.SSH(t, "cat "+dir+"/runtimes/.store-lock"); out != "keep\n" {
			t.Fatalf("the file was touched: %q", out)
		}
	})
	t.Run("LockPathIsASymlink", func(t *testing.T) {
		dir := filepath.Join(h.Dir, "link-lock")
		h.SSH(t, "mkdir -p "+dir+"/runtimes "+dir+"/target && ln -s "+dir+"/target "+dir+"/runtimes/.store-lock")
		c := newCLI(t, h, dir)
		oneLine(t, c.run("run", "--wait", "0", "--", "true"), 1, h.Target(), "is a symlink, not the lock directory")
		if out, _ := h.SSH(t, "ls -A "+dir+"/target"); out != "" {
			t.Fatalf("something was written through the symlink: %q", out)
		}
	})
	t.Run("RelativeRoot", func(t *testing.T) {
		for _, bad := range []string{"relative/dir", "-rf", "~user/x", ""} {
			c := newCLI(t, h, bad)
			r := c.run("lock", "status")
			line := strings.TrimSuffix(r.stderr, "\n")
			if r.code != 2 || strings.Contains(line, "\n") || !strings.Contains(line, "absolute path or start with ~/") {
				if bad == "" && r.code == 0 {
					continue // an empty --root means the default
				}
				t.Fatalf("--root %q: want a one-line usage error:\n%s", bad, r)
			}
		}
	})
	t.Run("NoShell", func(t *testing.T) {
		ns := sshd.Start(t, sshd.Options{NoShell: true})
		c := newCLI(t, ns, filepath.Join(ns.Dir, "store"))
		oneLine(t, c.run("lock", "status"), 1, ns.Target(), "cannot run /bin/sh", "POSIX /bin/sh")
	})
}

// TestHostileRootCLI: --root values with spaces, quotes, $(…), backticks, a
// newline and a leading dash are used literally and execute nothing.
func TestHostileRootCLI(t *testing.T) {
	t.Parallel()
	h := sshd.Start(t, sshd.Options{})
	pwned := filepath.Join(h.Dir, "pwned")
	for i, name := range []string{
		"-n", "--help", "sp ace", `q'uo"te`, "$(touch " + pwned + ")", "`touch " + pwned + "`", "new\nline", `back\slash`, "semi;colon&amp",
	} {
		root := filepath.Join(h.Dir, strconv.Itoa(i), name)
		c := newCLI(t, h, root)
		hold := c.run("lock", "acquire")
		if hold.code != 0 {
			t.Fatalf("root %q: acquire: %s", name, hold)
		}
		if !exists(lockPath(root)) {
			t.Fatalf("root %q: the lock is not at the literal path", name)
		}
		if r := c.run("lock", "release", "--token", strings.TrimSpace(hold.stdout)); r.code != 0 {
			t.Fatalf("root %q: release: %s", name, r)
		}
		if r := c.run("run", "--", "true"); r.code != 0 {
			t.Fatalf("root %q: run: %s", name, r)
		}
	}
	if exists(pwned) {
		t.Fatal("a --root value was executed")
	}
}

func fingerprint(t *testing.T, h *sshd.Host) string {
	t.Helper()
	f := filepath.Join(t.TempDir(), "key.pub")
	if err := os.WriteFile(f, []byte(h.HostKey+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("ssh-keygen", "-l", "-f", f).Output()
	if err != nil {
		t.Fatal(err)
	}
	fields := strings.Fields(string(out))
	if len(fields) < 2 {
		t.Fatalf("ssh-keygen -l: %q", out)
	}
	return fields[1]
}

// sparseTar is a tar of a few KiB that declares one file of size bytes,
// all of it a hole (GNU tar --sparse).
func sparseTar(t *testing.T, size int64) string {
	t.Helper()
	dir := t.TempDir()
	f, err := os.Create(filepath.Join(dir, "big"))
	if err == nil {
		err = f.Truncate(size)
		f.Close()
	}
	if err != nil {
		t.Fatal(err)
	}
	tarball := filepath.Join(t.TempDir(), "big.tar")
	if out, err := exec.Command("tar", "-S", "-C", dir, "-cf", tarball, "big").CombinedOutput(); err != nil {
		t.Fatalf("tar -S: %v %s", err, out)
	}
	os.Remove(filepath.Join(dir, "big"))
	return tarball
}

// opened waits until the process pid has the file p open: it is reading
// it, so its signal handlers are in place.
func opened(t *testing.T, pid int, p string) {
	t.Helper()
	for range 200 {
		fds, _ := filepath.Glob("/proc/" + strconv.Itoa(pid) + "/fd/*")
		for _, fd := range fds {
			if l, _ := os.Readlink(fd); l == p {
				return
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("hoist (pid %d) never opened %s", pid, p)
}

// TestHugeSparseArchive: a tar of 10 KiB that declares a 200 GiB file (one
// hole) is refused at once under the default --max-size, naming both sizes;
// with a limit above it, hoist starts hashing its 200 GiB of zeros, and
// SIGINT or SIGTERM stops it at once (130, 143), saying so. So does a push
// from a standard input whose writer stalls. Nothing reaches the host.
func TestHugeSparseArchive(t *testing.T) {
	t.Parallel()
	h := sshd.Start(t, sshd.Options{})
	root := filepath.Join(h.Dir, "store")
	c := newCLI(t, h, root)
	tarball := sparseTar(t, 200<<30)
	if fi, _ := os.Stat(tarball); fi.Size() > 64<<10 {
		t.Fatalf("the sparse tar is %d bytes", fi.Size())
	}
	oneLine(t, c.run("push", tarball), 1, "", "200.0 GiB (214748364800 bytes)", "over the limit of 32.0 GiB (34359738368 bytes)",
		"push --max-size raises it", "nothing was sent to any host")
	oneLine(t, c.run("push", tarball, "--max-size", "100G"), 1, "", "over the limit of 100.0 GiB")
	oneLine(t, c.run("push", tarball, "--max-size", "10GB0"), 2, "", "--max-size")

	for _, sig := range []struct {
		sig  syscall.Signal
		code int
	}{{syscall.SIGINT, 130}, {syscall.SIGTERM, 143}} {
		t.Run(sig.sig.String(), func(t *testing.T) {
			p := c.start("push", tarball, "--max-size", "1T")
			opened(t, p.cmd.Process.Pid, tarball)
			time.Sleep(200 * time.Millisecond) // well into the hashing
			sent := time.Now()
			p.cmd.Process.Signal(sig.sig)
			code := p.wait(t, 30*time.Second)
			t.Logf("exit %d %v after the signal", code, time.Since(sent).Round(time.Millisecond))
			if code != sig.code || !strings.Contains(p.stderr(), "hoist: "+tarball+": stopped while it was being read (signal: "+sig.sig.String()+"); nothing was sent to any host") {
				t.Fatalf("exit %d, want %d, saying it stopped: %s", code, sig.code, p.stderr())
			}
		})
	}
	t.Run("stalled stdin", func(t *testing.T) {
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		defer w.Close()
		cmd := c.command("push", "-", "--name", "app")
		cmd.Stdin = r
		var stderr strings.Builder
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		r.Close()
		// The first bytes of a tar header, then nothing: once they are
		// read, hoist waits for more, its handlers in place.
		w.Write([]byte("app/"))
		for i := 0; unread(t, w) > 0; i++ {
			if i == 500 {
				t.Fatal("hoist never read its standard input")
			}
			time.Sleep(20 * time.Millisecond)
		}
		cmd.Process.Signal(syscall.SIGINT)
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			cmd.Process.Kill()
			t.Fatalf("hoist still reads a stalled standard input 30 s after SIGINT: %s", stderr.String())
		}
		if cmd.ProcessState.ExitCode() != 130 || !strings.Contains(stderr.String(), "hoist: -: stopped while it was being read (signal: interrupt)") {
			t.Fatalf("exit %d: %s", cmd.ProcessState.ExitCode(), stderr.String())
		}
	})
	if exists(root) {
		t.Errorf("a push stopped before any host made the store %s", root)
	}
}

// unread is how many bytes written to the pipe w are not read yet.
func unread(t *testing.T, w *os.File) int {
	var n int32
	if _, _, errno := syscall.Syscall(syscall.SYS_IOCTL, w.Fd(), syscall.TIOCINQ, uintptr(unsafe.Pointer(&n))); errno != 0 {
		t.Fatalf("FIONREAD: %v", errno)
	}
	return int(n)
}
