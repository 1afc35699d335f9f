package transport

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// outcomeOf is what a Run came to, in the words of the Transport
// contract: a status, did not start, or unknown.
func outcomeOf(status int, err error) string {
	switch {
	case errors.Is(err, ErrUnknownOutcome):
		return "unknown"
	case errors.Is(err, ErrNotStarted):
		return "not started"
	case err != nil:
		return "error " + err.Error()
	}
	return "exit " + strconv.Itoa(status)
}

// TestMasterKeepsOutcomes: every outcome a command can have is the same
// through a master as on a direct connection: its status, a signal's
// 128+n, its output and its input, a refused exec (not started), a host
// whose sessions are full (waited out), and a connection that drops
// (unknown).
func TestMasterKeepsOutcomes(t *testing.T) {
	cases := []struct {
		name  string
		cmd   string
		stdin string
		setup func(*testServer)
		want  string
	}{
		{name: "status", cmd: "exit 7", want: "exit 7"},
		{name: "signal", cmd: "signal KILL", want: "exit 137"},
		{name: "output", cmd: "output 300000 70000", want: "exit 0"},
		{name: "stdin", cmd: "cat", stdin: strings.Repeat("in", 100000), want: "exit 0"},
		{name: "refused exec", cmd: "exit 0", setup: func(ts *testServer) { ts.refuseExec = true }, want: "not started"},
		{name: "sessions full", cmd: "exit 3", setup: func(ts *testServer) { ts.fullSessions = 2 }, want: "exit 3"},
		{name: "dropped", cmd: "drop", want: "unknown"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, via := range []string{"direct", "master"} {
				ts := newTestServer(t)
				var s *SSH
				if via == "direct" {
					s = dialTest(t, ts.clientConfig(t))
				} else {
					tm := startTestMaster(t, ts, time.Minute)
					s = tm.client(t)
					// Every session goes to the host, to be refused there.
					tm.m.spare.close()
				}
				if c.setup != nil {
					ts.mu.Lock()
					c.setup(ts)
					ts.mu.Unlock()
				}
				var out, errOut bytes.Buffer
				req := Request{Command: c.cmd, Stdout: &out, Stderr: &errOut}
				if c.stdin != "" {
					req.Stdin = strings.NewReader(c.stdin)
				}
				status, err := s.Run(context.Background(), req)
				if got := outcomeOf(status, err); got != c.want {
					t.Fatalf("%s: %s, want %s", via, got, c.want)
				}
				switch c.name {
				case "output":
					if !bytes.Equal(out.Bytes(), pattern(300000, 'o')) || !bytes.Equal(errOut.Bytes(), pattern(70000, 'e')) {
						t.Fatalf("%s: output %d/%d bytes, not what the host wrote", via, out.Len(), errOut.Len())
					}
				case "stdin":
					if out.String() != c.stdin {
						t.Fatalf("%s: the command read %d bytes of %d", via, out.Len(), len(c.stdin))
					}
				}
			}
		})
	}
}

// TestMasterLostConnectionSaysWhy: when the master's connection drops
// mid-command, the client's command is an unknown outcome that says the
// master ended and why, and the master is gone with its socket.
func TestMasterLostConnectionSaysWhy(t *testing.T) {
	ts := newTestServer(t)
	tm := startTestMaster(t, ts, time.Minute)
	s := tm.client(t)
	go func() {
		ts.expect(t, "started")
		ts.close()
	}()
	_, err := s.Run(context.Background(), Request{Command: "hang"})
	if !errors.Is(err, ErrUnknownOutcome) || !strings.Contains(err.Error(), "the connection to the host was lost") {
		t.Fatalf("Run: %v, want an unknown outcome saying the master lost its connection", err)
	}
	why := tm.waitEnded(t, 5*time.Second)
	if !strings.Contains(why, "lost") {
		t.Fatalf("the master ended because %q", why)
	}
	if _, err := os.Lstat(tm.cfg.Control.Socket()); !os.IsNotExist(err) {
		t.Fatalf("the socket is still there after the master ended: %v", err)
	}
}

// TestMasterSFTPAndTCP: the sftp subsystem and direct-tcpip channels go
// through the master as they go directly.
func TestMasterSFTPAndTCP(t *testing.T) {
	ts := newTestServer(t)
	s := startTestMaster(t, ts, time.Minute).client(t)
	c, err := s.SFTP()
	must(t, err)
	defer c.Close()
	dir := t.TempDir()
	f, err := c.Create(filepath.Join(dir, "f"))
	must(t, err)
	_, err = f.Write(pattern(1<<20, 'x'))
	must(t, err)
	must(t, f.Close())
	if b, err := os.ReadFile(filepath.Join(dir, "f")); err != nil || !bytes.Equal(b, pattern(1<<20, 'x')) {
		t.Fatalf("the file written through the master: %d bytes, %v", len(b), err)
	}
	// The test server refuses direct-tcpip: the refusal is the host's.
	_, err = s.Client().Dial("tcp", "127.0.0.1:1")
	if err == nil || !strings.Contains(err.Error(), "no sessions here") {
		t.Fatalf("direct-tcpip through the master: %v, want the host's refusal", err)
	}
}

// TestMasterPersistIdle: the master ends once no client has been connected
// for ControlPersist, and not while one is.
func TestMasterPersistIdle(t *testing.T) {
	ts := newTestServer(t)
	tm := startTestMaster(t, ts, 300*time.Millisecond)
	s := tm.client(t)
	time.Sleep(time.Second)
	if _, err := s.Run(context.Background(), Request{Command: "exit 0"}); err != nil {
		t.Fatalf("a client connected past ControlPersist: %v", err)
	}
	s.Close()
	if why := tm.waitEnded(t, 5*time.Second); !strings.Contains(why, "ControlPersist") {
		t.Fatalf("the master ended because %q, want ControlPersist", why)
	}
	if _, err := os.Lstat(tm.cfg.Control.Socket()); !os.IsNotExist(err) {
		t.Fatalf("the socket is still there: %v", err)
	}
}

// TestMasterStopAndExit: stop removes the socket at once and lets running
// commands finish; exit ends them (unknown outcome).
func TestMasterStopAndExit(t *testing.T) {
	t.Run("stop", func(t *testing.T) {
		ts := newTestServer(t)
		tm := startTestMaster(t, ts, time.Minute)
		s := tm.client(t)
		done := make(chan error, 1)
		go func() {
			_, err := s.Run(context.Background(), Request{Command: "block"})
			done <- err
		}()
		ts.expect(t, "started")
		if _, err := ControlMaster(context.Background(), tm.cfg, MasterStop); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Lstat(tm.cfg.Control.Socket()); !os.IsNotExist(err) {
			t.Fatalf("the socket is still there after stop: %v", err)
		}
		close(ts.release)
		if err := <-done; err != nil {
			t.Fatalf("the running command after stop: %v", err)
		}
		s.Close()
		if why := tm.waitEnded(t, 5*time.Second); !strings.Contains(why, "stopped") {
			t.Fatalf("ended because %q", why)
		}
	})
	t.Run("exit", func(t *testing.T) {
		ts := newTestServer(t)
		tm := startTestMaster(t, ts, time.Minute)
		s := tm.client(t)
		go func() {
			ts.expect(t, "started")
			if _, err := ControlMaster(context.Background(), tm.cfg, MasterExit); err != nil {
				t.Error(err)
			}
		}()
		_, err := s.Run(context.Background(), Request{Command: "hang"})
		if !errors.Is(err, ErrUnknownOutcome) || !strings.Contains(err.Error(), "told to exit") {
			t.Fatalf("Run: %v, want an unknown outcome saying the master was told to exit", err)
		}
	})
}

// TestMasterSpareSession: after its first session the master keeps one
// open on the host, and the next client's session takes it.
func TestMasterSpareSession(t *testing.T) {
	ts := newTestServer(t)
	tm := startTestMaster(t, ts, time.Minute)
	s := tm.client(t)
	for i := range 3 {
		if _, err := s.Run(context.Background(), Request{Command: "exit 0"}); err != nil {
			t.Fatalf("run %d: %v", i, err)
		}
	}
	waitUntil(t, func() bool {
		tm.m.spare.mu.Lock()
		defer tm.m.spare.mu.Unlock()
		return tm.m.spare.ch != nil
	})
	time.Sleep(spareMaxAge + time.Second)
	tm.m.spare.mu.Lock()
	left := tm.m.spare.ch
	tm.m.spare.mu.Unlock()
	if left != nil {
		t.Fatalf("a spare unused for %s is still open", spareMaxAge)
	}
}

func waitUntil(t *testing.T, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !cond(); {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 5s")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestMasterFastExit: a command that exits at once closes the host's
// channel about when the host answers its exec request; through the
// master the client must still get the answer, then the status, never
// an unknown outcome.
func TestMasterFastExit(t *testing.T) {
	ts := newTestServer(t)
	s := startTestMaster(t, ts, time.Minute).client(t)
	for i := range 300 {
		status, err := s.Run(context.Background(), Request{Command: "exit 3"})
		if got := outcomeOf(status, err); got != "exit 3" {
			t.Fatalf("run %d: %s (%v), want exit 3", i, got, err)
		}
	}
}
