//go:build linux

package transport

import (
	"io"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

// asUID runs fn on an OS thread of its own whose effective uid is uid:
// Linux keeps credentials per thread, and records a socket's peer from
// the thread that connects or listens. Root only; the thread is never
// given back to Go.
func asUID(t *testing.T, uid int, fn func()) {
	t.Helper()
	if os.Geteuid() != 0 || runtime.GOOS != "linux" {
		t.Skip("needs root on Linux: another user's socket is made by a thread with that user's uid")
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		runtime.LockOSThread() // never unlocked: the thread ends with this goroutine
		keep := ^uintptr(0)
		if _, _, e := syscall.RawSyscall(syscall.SYS_SETRESUID, keep, uintptr(uid), keep); e != 0 {
			t.Errorf("setresuid: %v", e)
			return
		}
		fn()
	}()
	<-done
}

const otherUID = 65534

// TestDialSharedRefusesOtherUsers (root): a socket owned by another user,
// and a socket of ours that another user's process listens at, are
// refused; a master cuts off a client of another user before a byte of
// SSH, even when the socket's mode would let it connect.
func TestDialSharedRefusesOtherUsers(t *testing.T) {
	t.Run("their socket", func(t *testing.T) {
		asUID(t, otherUID, func() {}) // skips off root
		ts := newTestServer(t)
		tm := startTestMaster(t, ts, time.Minute)
		must(t, os.Chown(tm.cfg.Control.Socket(), otherUID, -1))
		if master, log := sharedVia(t, tm.cfg, nil); master != "" || !strings.Contains(log, "is owned by uid 65534") {
			t.Fatalf("through %q; want another user's socket refused: %s", master, log)
		}
	})
	t.Run("their listener", func(t *testing.T) {
		asUID(t, otherUID, func() {})
		ts := newTestServer(t)
		cfg := ts.clientConfig(t)
		cfg.Control = Control{Path: filepath.Join(muxDir(t), "cm"), Start: true, Persist: time.Minute}
		fd, err := syscall.Socket(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
		must(t, err)
		defer syscall.Close(fd)
		must(t, syscall.Bind(fd, &syscall.SockaddrUnix{Name: cfg.Control.Socket()}))
		must(t, os.Chmod(cfg.Control.Socket(), 0o600))
		var lerr error
		asUID(t, otherUID, func() { lerr = syscall.Listen(fd, 8) })
		must(t, lerr)
		if master, log := sharedVia(t, cfg, nil); master != "" || !strings.Contains(log, "is uid 65534's, not yours") {
			t.Fatalf("through %q; want a listener of another user refused: %s", master, log)
		}
	})
	t.Run("their client", func(t *testing.T) {
		asUID(t, otherUID, func() {})
		ts := newTestServer(t)
		tm := startTestMaster(t, ts, time.Minute)
		must(t, os.Chmod(filepath.Dir(tm.cfg.Control.Socket()), 0o711))
		must(t, os.Chmod(tm.cfg.Control.Socket(), 0o666))
		var c net.Conn
		var err error
		asUID(t, otherUID, func() { c, err = net.Dial("unix", tm.cfg.Control.Socket()) })
		must(t, err)
		defer c.Close()
		_ = c.SetDeadline(time.Now().Add(5 * time.Second))
		got, err := io.ReadAll(c)
		if len(got) > 0 || err != nil {
			t.Fatalf("the master sent %q (%v) to another user's client; want the connection closed unanswered", got, err)
		}
		// Its own user's clients are still served.
		must(t, os.Chmod(tm.cfg.Control.Socket(), 0o600))
		tm.client(t)
	})
}
