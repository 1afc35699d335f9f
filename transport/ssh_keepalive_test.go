package transport

import (
	"context"
	"errors"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// freezingProxy forwards TCP to a backend until frozen; then it stops
// forwarding in both directions but keeps every socket open, like a link
// that died without a FIN or RST.
type freezingProxy struct {
	ln      net.Listener
	backend string
	frozen  atomic.Bool
	stop    chan struct{}

	mu    sync.Mutex
	conns []net.Conn
}

func newFreezingProxy(t *testing.T, backend string) *freezingProxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	must(t, err)
	p := &freezingProxy{ln: ln, backend: backend, stop: make(chan struct{})}
	t.Cleanup(func() {
		close(p.stop)
		ln.Close()
		p.mu.Lock()
		defer p.mu.Unlock()
		for _, c := range p.conns {
			c.Close()
		}
	})
	go func() {
		for {
			in, err := ln.Accept()
			if err != nil {
				return
			}
			out, err := net.Dial("tcp", backend)
			if err != nil {
				in.Close()
				continue
			}
			p.mu.Lock()
			p.conns = append(p.conns, in, out)
			p.mu.Unlock()
			go p.pipe(in, out)
			go p.pipe(out, in)
		}
	}()
	return p
}

func (p *freezingProxy) pipe(dst, src net.Conn) {
	buf := make([]byte, 32*1024)
	for {
		n, err := src.Read(buf)
		if p.frozen.Load() {
			<-p.stop // swallow everything from now on, keep the sockets open
			return
		}
		if n > 0 {
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

func (p *freezingProxy) dialer(ctx context.Context, network, _ string) (net.Conn, error) {
	var d net.Dialer
	return d.DialContext(ctx, network, p.ln.Addr().String())
}

func TestSSHKeepaliveClosesSilentlyDeadLink(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	proxy := newFreezingProxy(t, ts.addr)
	cfg := ts.clientConfig(t)
	cfg.Dialer = proxy.dialer
	const interval, missed = 100 * time.Millisecond, 3
	cfg.KeepaliveInterval, cfg.KeepaliveMaxMissed = interval, missed
	s := dialTest(t, cfg)

	done := make(chan error, 1)
	go func() {
		_, err := s.Run(context.Background(), Request{Command: "hang"}) // no deadline: only the keepalive can end it
		done <- err
	}()
	ts.expect(t, "started")
	time.Sleep(2 * interval) // keepalives flow on the healthy link
	proxy.frozen.Store(true)
	frozenAt := time.Now()

	select {
	case err := <-done:
		took := time.Since(frozenAt)
		if !errors.Is(err, ErrUnknownOutcome) || !strings.Contains(err.Error(), "keepalives unanswered") {
			t.Errorf("Run: %v, want ErrUnknownOutcome from the keepalive", err)
		}
		// The upper bound leaves room for a loaded machine; the point is
		// that the link is given up on at all, and not too early.
		if took < (missed-1)*interval || took > (missed+1)*interval+3*time.Second {
			t.Errorf("dead link detected after %v, want about %v", took, (missed+1)*interval)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run still blocked 10s after the link died")
	}
	if _, err := s.Run(runCtx(t), Request{Command: "exit 0"}); !errors.Is(err, ErrNotStarted) {
		t.Errorf("Run on the closed connection: %v, want ErrNotStarted", err)
	}
}

func TestSSHKeepaliveSparesHealthyIdleLink(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	cfg := ts.clientConfig(t)
	cfg.KeepaliveInterval, cfg.KeepaliveMaxMissed = 100*time.Millisecond, 5
	s := dialTest(t, cfg)
	// The command is silent for many intervals; only keepalive replies
	// show that the host is alive.
	if status, err := s.Run(runCtx(t), Request{Command: "sleep 2s"}); err != nil || status != 0 {
		t.Fatalf("Run: %d, %v", status, err)
	}
}

// A server that answers a connection's first request late (sshd finishing
// its setup after authentication) does not make the round trip look long:
// RoundTrip takes the fastest of its pings.
func TestSSHRoundTripIsTheFastestPing(t *testing.T) {
	t.Parallel()
	const slow = 300 * time.Millisecond
	ts := newTestServer(t, func(ts *testServer) { ts.slowFirst = slow })
	s := dialTest(t, ts.clientConfig(t))
	rtt, err := s.RoundTrip(2)
	if err != nil {
		t.Fatal(err)
	}
	if rtt >= slow {
		t.Errorf("RoundTrip(2) = %v, want the second ping's, under %v", rtt, slow)
	}
	s2 := dialTest(t, ts.clientConfig(t))
	if d, err := s2.Ping(); err != nil || d < slow {
		t.Errorf("the first ping on a new connection took %v (%v), want at least %v: the server option does not work", d, err, slow)
	}
}
