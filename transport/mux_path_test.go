package transport

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// sharedVia dials cfg with DialShared, no master started, and says whether
// the connection went through a master, with the debug log.
func sharedVia(t *testing.T, cfg SSHConfig, start func(context.Context) error) (master string, log string) {
	t.Helper()
	var lb logBuffer
	cfg.Logger = lb.logger()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := DialShared(ctx, cfg, start)
	if err != nil {
		t.Fatalf("DialShared: %v", err)
	}
	defer s.Close()
	if _, err := s.Run(ctx, Request{Command: "exit 0"}); err != nil {
		t.Fatalf("Run: %v (master %q)\n%s", err, s.Reached().Master, lb.String())
	}
	return s.Reached().Master, lb.String()
}

// TestDialSharedRefusesUntrustedSockets: a master's socket that anyone
// else could have put there or could use is never used: DialShared
// connects directly and says why. A directory above that is sticky (as
// /tmp) is fine, and so is a symlink to a good directory.
func TestDialSharedRefusesUntrustedSockets(t *testing.T) {
	cases := []struct {
		name   string
		spoil  func(t *testing.T, tm *testMaster)
		refuse string // in the log; "" for a master used
	}{
		{name: "good"},
		{name: "loose socket", refuse: "mode 0666", spoil: func(t *testing.T, tm *testMaster) {
			must(t, os.Chmod(tm.cfg.Control.Socket(), 0o666))
		}},
		{name: "group socket", refuse: "mode 0660", spoil: func(t *testing.T, tm *testMaster) {
			must(t, os.Chmod(tm.cfg.Control.Socket(), 0o660))
		}},
		{name: "writable directory", refuse: "can be written by others (mode 0777)", spoil: func(t *testing.T, tm *testMaster) {
			must(t, os.Chmod(filepath.Dir(tm.cfg.Control.Socket()), 0o777))
		}},
		{name: "sticky directory", refuse: "can be written by others (mode 1777)", spoil: func(t *testing.T, tm *testMaster) {
			must(t, os.Chmod(filepath.Dir(tm.cfg.Control.Socket()), 0o777|os.ModeSticky))
		}},
		{name: "writable directory above", refuse: "can be written by others (mode 0777)", spoil: func(t *testing.T, tm *testMaster) {
			// The master's directory moves into one others can write.
			above := muxDir(t)
			must(t, os.Chmod(above, 0o777))
			moved := filepath.Join(above, "d")
			must(t, os.Rename(filepath.Dir(tm.cfg.Control.Socket()), moved))
			tm.cfg.Control.Path = filepath.Join(moved, "cm")
		}},
		{name: "sticky directory above", spoil: func(t *testing.T, tm *testMaster) {
			above := muxDir(t)
			must(t, os.Chmod(above, 0o777|os.ModeSticky))
			moved := filepath.Join(above, "d")
			must(t, os.Rename(filepath.Dir(tm.cfg.Control.Socket()), moved))
			tm.cfg.Control.Path = filepath.Join(moved, "cm")
		}},
		{name: "symlinked directory", spoil: func(t *testing.T, tm *testMaster) {
			link := filepath.Join(muxDir(t), "l")
			must(t, os.Symlink(filepath.Dir(tm.cfg.Control.Socket()), link))
			tm.cfg.Control.Path = filepath.Join(link, "cm")
		}},
		{name: "not a socket", refuse: "is not a socket", spoil: func(t *testing.T, tm *testMaster) {
			tm.cfg.Control.Path = filepath.Join(filepath.Dir(tm.cfg.Control.Socket()), "file")
			must(t, os.WriteFile(tm.cfg.Control.Socket(), nil, 0o600))
		}},
		{name: "too long", refuse: "longer than a Unix socket takes", spoil: func(t *testing.T, tm *testMaster) {
			tm.cfg.Control.Path = filepath.Join(filepath.Dir(tm.cfg.Control.Socket()), strings.Repeat("x", 100))
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ts := newTestServer(t)
			tm := startTestMaster(t, ts, time.Minute)
			if c.spoil != nil {
				c.spoil(t, tm)
			}
			before := ts.acceptedCount()
			master, log := sharedVia(t, tm.cfg, nil)
			direct := ts.acceptedCount() - before
			switch {
			case c.refuse == "" && (master == "" || direct != 0):
				t.Fatalf("not through the master (%d direct connections): %s", direct, log)
			case c.refuse != "" && (master != "" || direct != 1):
				t.Fatalf("through the master at %q, %d direct connections; want it refused: %s", master, direct, log)
			case c.refuse != "" && !strings.Contains(log, "connecting directly") || !strings.Contains(log, c.refuse):
				t.Fatalf("the log does not say why the socket was refused (%q): %s", c.refuse, log)
			}
		})
	}
}

// TestDialSharedStaleSocket: a socket nobody listens at (a master that
// was killed) is removed and a new master started in its place.
func TestDialSharedStaleSocket(t *testing.T) {
	ts := newTestServer(t)
	cfg := ts.clientConfig(t)
	cfg.Control = Control{Path: filepath.Join(muxDir(t), "cm"), Start: true, Persist: time.Minute}
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: cfg.Control.Socket(), Net: "unix"})
	must(t, err)
	must(t, os.Chmod(cfg.Control.Socket(), 0o600))
	ln.SetUnlinkOnClose(false)
	ln.Close()
	started := 0
	start := func(context.Context) error {
		started++
		serveTestMaster(t, cfg)
		return nil
	}
	master, log := sharedVia(t, cfg, start)
	if master != cfg.Control.Socket() || started != 1 || !strings.Contains(log, "is stale") {
		t.Fatalf("through %q after %d starts; want a new master in the stale socket's place: %s", master, started, log)
	}
}

// TestDialSharedVersions: a master of an older protocol is asked to stop
// (it drains and ends) and replaced; a newer one is left alone, and the
// client connects directly.
func TestDialSharedVersions(t *testing.T) {
	mine := muxProtocol
	defer func() { muxProtocol = mine }()
	for _, c := range []struct{ name, theirs, log string }{
		{"older", "0", "older than 1: asked it to stop"},
		{"older, no leave to start one", "0", "older than this hoist's 1: left to the hoist that started it"},
		{"newer", "2", "newer than this hoist's 1"},
	} {
		t.Run(c.name, func(t *testing.T) {
			ts := newTestServer(t)
			muxProtocol = c.theirs
			tm := startTestMaster(t, ts, time.Minute)
			muxProtocol = mine
			replaced := 0
			start := func(context.Context) error {
				replaced++
				// The old master has removed its socket: the new one binds.
				serveTestMaster(t, tm.cfg)
				return nil
			}
			cfg := tm.cfg
			if c.name == "older, no leave to start one" {
				cfg.Control.Start = false
			}
			master, log := sharedVia(t, cfg, start)
			if !strings.Contains(log, c.log) {
				t.Fatalf("the log does not say %q: %s", c.log, log)
			}
			if c.name == "older" {
				if master == "" || replaced != 1 {
					t.Fatalf("through %q after %d starts, want a new master", master, replaced)
				}
				if why := tm.waitEnded(t, 5*time.Second); !strings.Contains(why, "stopped") {
					t.Fatalf("the old master ended because %q", why)
				}
				return
			}
			if master != "" || replaced != 0 {
				t.Fatalf("through %q after %d starts; want a direct connection, the newer master left alone", master, replaced)
			}
			select {
			case why := <-tm.ended:
				t.Fatalf("the newer master ended: %s", why)
			default:
			}
		})
	}
}
