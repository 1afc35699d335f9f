package transport

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"
)

func dialErrFor(t *testing.T, cfg SSHConfig) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := DialSSH(ctx, cfg)
	if err == nil {
		s.Close()
		t.Fatal("DialSSH succeeded, want an error")
	}
	return err
}

// checkMessage enforces the shape the CLI relies on: one line, "<what
// happened>; <what to do>", lowercase, no host name.
func checkMessage(t *testing.T, err error, host string) {
	t.Helper()
	msg := err.Error()
	if strings.Contains(msg, "\n") || !strings.Contains(msg, "; ") || strings.HasSuffix(msg, ".") {
		t.Errorf("message %q: want one line \"<what>; <what to do>\"", msg)
	}
	if msg[:1] != strings.ToLower(msg[:1]) && !strings.HasPrefix(msg, "HOST KEY CHANGED") {
		t.Errorf("message %q does not start lowercase", msg)
	}
	if host != "" && strings.Contains(msg, host) {
		t.Errorf("message %q names the host %q", msg, host)
	}
}

func TestSSHDialClosedPortIsUnreachable(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	must(t, err)
	addr := ln.Addr().String()
	ln.Close()
	_, port, _ := net.SplitHostPort(addr)

	ts := newTestServer(t)
	cfg := ts.clientConfig(t)
	cfg.Target = "tester@localhost:" + port
	err = dialErrFor(t, cfg)
	var de *DialError
	if !errors.Is(err, ErrUnreachable) || !errors.As(err, &de) {
		t.Fatalf("DialSSH: %v, want ErrUnreachable", err)
	}
	if !strings.Contains(err.Error(), ":"+port+": connection refused; check the host name and port") {
		t.Errorf("message %q", err)
	}
	checkMessage(t, err, "localhost")
}

func TestSSHDialSilentListenerIsHandshakeTimeout(t *testing.T) {
	t.Parallel()
	ln := silentListener(t)
	ts := newTestServer(t)
	cfg := ts.clientConfig(t)
	cfg.Target = "tester@" + ln.Addr().String()
	cfg.HandshakeTimeout = 300 * time.Millisecond
	start := time.Now()
	err := dialErrFor(t, cfg)
	if !errors.Is(err, ErrHandshakeTimeout) {
		t.Fatalf("DialSSH: %v, want ErrHandshakeTimeout", err)
	}
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("gave up after %v, want about 300ms", took)
	}
	if !strings.HasPrefix(err.Error(), "ssh handshake did not finish within 300ms; ") {
		t.Errorf("message %q", err)
	}
	checkMessage(t, err, "")
}

func TestSSHDialCancelledDuringHandshake(t *testing.T) {
	t.Parallel()
	ln := silentListener(t)
	ts := newTestServer(t)
	cfg := ts.clientConfig(t)
	cfg.Target = "tester@" + ln.Addr().String()
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := DialSSH(ctx, cfg)
	if !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, ErrHandshakeTimeout) {
		t.Errorf("DialSSH: %v, want the context's error", err)
	}
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("returned after %v", took)
	}
}

func TestSSHDialRetriesHandshakeDroppedBeforeBanner(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, func(ts *testServer) { ts.dropFirst = 1 })
	s := dialTest(t, ts.clientConfig(t))
	if n := ts.acceptedCount(); n != 2 {
		t.Errorf("server accepted %d connections, want 2", n)
	}
	if status, err := s.Run(runCtx(t), Request{Command: "exit 7"}); err != nil || status != 7 {
		t.Errorf("Run: %d, %v", status, err)
	}
}

func TestSSHDialGivesUpAfterThreeRetries(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, func(ts *testServer) { ts.dropFirst = 100 })
	err := dialErrFor(t, ts.clientConfig(t))
	if !errors.Is(err, ErrHandshake) {
		t.Fatalf("DialSSH: %v, want ErrHandshake", err)
	}
	if n := ts.acceptedCount(); n != handshakeAttempts {
		t.Errorf("server accepted %d connections, want %d", n, handshakeAttempts)
	}
	checkMessage(t, err, "")
}

func TestParseTarget(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]sshTarget{
		"web1":                  {"", "web1", "22"},
		"bob@web1":              {"bob", "web1", "22"},
		"bob@web1:2222":         {"bob", "web1", "2222"},
		"[::1]:2222":            {"", "::1", "2222"},
		"bob@[::1]:2222":        {"bob", "::1", "2222"},
		"[fe80::1%eth0]":        {"", "fe80::1%eth0", "22"},
		"::1":                   {"", "::1", "22"},
		"a@b@10.0.0.1:23":       {"a@b", "10.0.0.1", "23"},
		"deploy@example.com:22": {"deploy", "example.com", "22"},
	} {
		got, err := parseTarget(in)
		if err != nil || got != want {
			t.Errorf("parseTarget(%q) = %+v, %v; want %+v", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "@web1", "web1:", "web1:0", "web1:99999", "web1:ssh", "[::1", "[::1]x", "bob@"} {
		if got, err := parseTarget(bad); err == nil {
			t.Errorf("parseTarget(%q) = %+v, want an error", bad, got)
		}
	}
}

// silentListener accepts connections and never says a word on them.
func silentListener(t *testing.T) net.Listener {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	must(t, err)
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			t.Cleanup(func() { c.Close() })
		}
	}()
	return ln
}
