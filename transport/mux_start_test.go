package transport

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestMain runs this test binary as a master process (ServeMaster) when a
// test starts it so, as hoist runs itself as "hoist mux serve".
func TestMain(m *testing.M) {
	if os.Getenv("HOIST_TEST_MASTER") == "1" {
		why, err := ServeMaster(func(_ context.Context, spec []byte, cfg *SSHConfig) error {
			var s helperSpec
			if err := json.Unmarshal(spec, &s); err != nil {
				return err
			}
			cfg.Target, cfg.IdentityFiles, cfg.KnownHostsFile, cfg.NoAgent, cfg.Control = s.Target, s.IdentityFiles, s.KnownHostsFile, true, s.Control
			return nil
		}, "helper")
		fmt.Fprintln(os.Stderr, why, err)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

type helperSpec struct {
	Target         string
	IdentityFiles  []string
	KnownHostsFile string
	Control        Control
}

// startHelper starts this binary as the master for cfg.
func startHelper(t *testing.T, ctx context.Context, cfg SSHConfig) error {
	t.Helper()
	spec, err := json.Marshal(helperSpec{cfg.Target, cfg.IdentityFiles, cfg.KnownHostsFile, cfg.Control})
	must(t, err)
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), "HOIST_TEST_MASTER=1", "HOIST_TEST_SOCKET="+cfg.Control.Socket())
	t.Cleanup(func() {
		if cfg.Control.Path != "" {
			_, _ = ControlMaster(context.Background(), cfg, MasterExit)
		}
	})
	return StartMaster(ctx, cfg, cmd, spec)
}

func muxConfig(t *testing.T, ts *testServer) SSHConfig {
	cfg := ts.clientConfig(t)
	cfg.Control = Control{Path: filepath.Join(muxDir(t), "cm"), Start: true, Persist: time.Minute}
	return cfg
}

// TestStartMaster: the started master dials, its debug log reaches the
// starting command, it listens, and it runs in a session of its own.
func TestStartMaster(t *testing.T) {
	ts := newTestServer(t)
	cfg := muxConfig(t, ts)
	var lb logBuffer
	cfg.Logger = lb.logger()
	if err := startHelper(t, context.Background(), cfg); err != nil {
		t.Fatalf("StartMaster: %v", err)
	}
	if !strings.Contains(lb.String(), "msg=connected") {
		t.Fatalf("the master's log did not reach the starting command: %s", lb.String())
	}
	info, err := ControlMaster(context.Background(), cfg, MasterCheck)
	if err != nil {
		t.Fatal(err)
	}
	if info.PID == os.Getpid() || info.Version != "helper" || info.Reached.Key == "" {
		t.Fatalf("the master says %+v", info)
	}
	if sid, err := sessionID(info.PID); runtime.GOOS == "linux" && (err != nil || sid != info.PID) {
		t.Fatalf("the master (pid %d) is in session %d (%v), want one of its own", info.PID, sid, err)
	}
	if ts.acceptedCount() != 1 {
		t.Fatalf("%d connections to the host, want the master's one", ts.acceptedCount())
	}
}

// sessionID reads a process's session from /proc.
func sessionID(pid int) (int, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	f := strings.Fields(string(b)[strings.LastIndexByte(string(b), ')')+1:])
	var sid int
	_, err = fmt.Sscan(f[3], &sid)
	return sid, err
}

// TestStartMasterDialErrors: a master that cannot make its connection
// gives the starting command the error DialSSH would have given it: the
// same type, kind and message, from one attempt.
func TestStartMasterDialErrors(t *testing.T) {
	for _, c := range []struct {
		name  string
		spoil func(*SSHConfig)
		is    error
	}{
		{"unknown host key", func(cfg *SSHConfig) { must(t, os.WriteFile(cfg.KnownHostsFile, nil, 0o600)) }, ErrHostKey},
		{"key refused", func(cfg *SSHConfig) {
			cfg.IdentityFiles[0], _ = writeKey(t, t.TempDir(), "other", "")
		}, ErrAuth},
		{"unreachable", func(cfg *SSHConfig) { cfg.Target = "tester@127.0.0.1:1" }, ErrUnreachable},
	} {
		t.Run(c.name, func(t *testing.T) {
			ts := newTestServer(t)
			cfg := muxConfig(t, ts)
			c.spoil(&cfg)
			_, direct := DialSSH(context.Background(), cfg)
			before := ts.acceptedCount()
			err := startHelper(t, context.Background(), cfg)
			if !errors.Is(err, c.is) || err.Error() != direct.Error() || fmt.Sprintf("%T", err) != fmt.Sprintf("%T", direct) {
				t.Fatalf("through the master: %T %v\ndirectly:           %T %v", err, err, direct, direct)
			}
			var he *HostKeyError
			if errors.As(err, &he) && !he.Unknown {
				t.Fatalf("the host key error lost its fields: %+v", he)
			}
			if n := ts.acceptedCount() - before; c.is != ErrUnreachable && n != 1 {
				t.Fatalf("the master connected %d times, want once", n)
			}
			if _, err := os.Lstat(cfg.Control.Socket()); !os.IsNotExist(err) {
				t.Fatalf("a socket is left: %v", err)
			}
		})
	}
}

// TestStartMasterPassphrase: the master asks the starting command for the
// passphrase of an encrypted key, and authenticates with it.
func TestStartMasterPassphrase(t *testing.T) {
	ts := newTestServer(t)
	cfg := muxConfig(t, ts)
	file, pub := writeKey(t, t.TempDir(), "locked", "sesame")
	ts.authorize(pub)
	cfg.IdentityFiles = []string{file}
	var asked []string
	cfg.Passphrase = func(f string) ([]byte, error) {
		asked = append(asked, f)
		return []byte("sesame"), nil
	}
	if err := startHelper(t, context.Background(), cfg); err != nil {
		t.Fatalf("StartMaster: %v", err)
	}
	if len(asked) != 1 || asked[0] != file {
		t.Fatalf("asked for %v, want %s once", asked, file)
	}
}

// TestStartMasterRace: of two masters started at once, one listens and
// the other says the socket is taken; both commands then use the one.
func TestStartMasterRace(t *testing.T) {
	ts := newTestServer(t)
	cfg := muxConfig(t, ts)
	errs := make(chan error, 2)
	for range 2 {
		go func() { errs <- startHelper(t, context.Background(), cfg) }()
	}
	e1, e2 := <-errs, <-errs
	if !(e1 == nil && errors.Is(e2, ErrMasterTaken) || e2 == nil && errors.Is(e1, ErrMasterTaken)) {
		t.Fatalf("the two starts: %v and %v, want one master and one ErrMasterTaken", e1, e2)
	}
	info, err := ControlMaster(context.Background(), cfg, MasterCheck)
	if err != nil {
		t.Fatal(err)
	}
	waitUntil(t, func() bool {
		if runtime.GOOS != "linux" {
			return true // no /proc to count them in
		}
		pids := helperPIDs(cfg.Control.Socket())
		return len(pids) == 1 && pids[0] == info.PID
	})
	if n := ts.acceptedCount(); n != 2 {
		t.Fatalf("%d connections to the host, want the two masters' (the loser's closed)", n)
	}
}

// helperPIDs are the live master processes started for socket.
func helperPIDs(socket string) []int {
	var pids []int
	names, _ := filepath.Glob("/proc/[0-9]*/environ")
	for _, name := range names {
		b, err := os.ReadFile(name)
		if err != nil || !strings.Contains(string(b), "\x00HOIST_TEST_SOCKET="+socket+"\x00") {
			continue
		}
		var pid int
		if _, err := fmt.Sscan(filepath.Base(filepath.Dir(name)), &pid); err == nil {
			if stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid)); err == nil && !strings.Contains(string(stat), ") Z") {
				pids = append(pids, pid)
			}
		}
	}
	return pids
}
