package transport

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// muxDir is a directory for sockets, short enough for a socket's path
// (t.TempDir's are long), removed when the test ends.
func muxDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("/tmp", "hmt")
	must(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// testMaster is a master serving a connection to a testServer in this
// process, as ServeMaster would in its own.
type testMaster struct {
	m     *master
	cfg   SSHConfig // reaches the test server; Control names the master
	ended chan string
}

func startTestMaster(t *testing.T, ts *testServer, persist time.Duration) *testMaster {
	t.Helper()
	cfg := ts.clientConfig(t)
	cfg.Control = Control{Path: filepath.Join(muxDir(t), "cm"), Start: true, Persist: persist}
	return serveTestMaster(t, cfg)
}

// serveTestMaster dials cfg and serves it at cfg.Control.Socket().
func serveTestMaster(t *testing.T, cfg SSHConfig) *testMaster {
	t.Helper()
	up := dialTest(t, cfg)
	ln, fi, err := bindMaster(cfg.Control.Socket())
	must(t, err)
	m, err := newMaster(up, ln, cfg.Control.Socket(), fi, cfg.Control.Persist, "test")
	must(t, err)
	tm := &testMaster{m: m, cfg: cfg, ended: make(chan string, 1)}
	go func() { tm.ended <- m.serve() }()
	t.Cleanup(func() {
		m.end("test over")
		<-tm.ended
		tm.ended <- ""
	})
	return tm
}

// client connects through the master, failing the test if it does not.
func (tm *testMaster) client(t *testing.T) *SSH {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, look := dialMaster(ctx, tm.cfg, tm.cfg.Control.Socket(), false)
	if s == nil {
		t.Fatalf("no client through the master: %s", look.why)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// waitEnded is why the master ended, within d.
func (tm *testMaster) waitEnded(t *testing.T, d time.Duration) string {
	t.Helper()
	select {
	case why := <-tm.ended:
		tm.ended <- why
		return why
	case <-time.After(d):
		t.Fatalf("the master did not end within %s", d)
		return ""
	}
}

// logBuffer is a debug logger whose text the test reads.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

func (l *logBuffer) logger() *slog.Logger {
	return slog.New(slog.NewTextHandler(l, &slog.HandlerOptions{Level: slog.LevelDebug}))
}
