package sshd

import (
	"errors"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Proxy relays TCP connections from Addr to a target address, for fault
// injection between a client and a host.
type Proxy struct {
	Addr string // "127.0.0.1:PORT" (or another listen address) to connect to instead of the target

	target string
	ln     net.Listener

	mu     sync.Mutex
	cond   *sync.Cond
	frozen bool
	closed bool
	conns  map[*relay]struct{}

	toTarget, fromTarget atomic.Int64 // bytes relayed
}

// Sent is the number of bytes relayed from clients to the target so far:
// what a workstation sent the host, counted outside the client.
func (p *Proxy) Sent() int64 { return p.toTarget.Load() }

// Received is the number of bytes relayed from the target to clients.
func (p *Proxy) Received() int64 { return p.fromTarget.Load() }

// relay is one proxied connection.
type relay struct {
	client, server net.Conn
	cut            bool // guarded by Proxy.mu
}

// NewProxy listens on a free loopback port and relays every connection to
// target ("host:port"). It is closed when the test ends.
func NewProxy(t testing.TB, target string) *Proxy {
	t.Helper()
	return NewProxyOn(t, "127.0.0.1:0", target)
}

// NewProxyOn is NewProxy listening on listen ("[::1]:0" reaches the target
// over IPv6).
func NewProxyOn(t testing.TB, listen, target string) *Proxy {
	t.Helper()
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		t.Fatalf("proxy to %s: listening: %v", target, err)
	}
	p := &Proxy{Addr: ln.Addr().String(), target: target, ln: ln, conns: map[*relay]struct{}{}}
	p.cond = sync.NewCond(&p.mu)
	go p.serve()
	t.Cleanup(p.close)
	return p
}

// Cut closes every relayed connection now, on both sides, with a reset.
// Later connections are relayed as usual.
func (p *Proxy) Cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for r := range p.conns {
		p.cutLocked(r)
	}
	p.cond.Broadcast()
}

// Refuse stops listening and cuts every relayed connection: a later
// connection to Addr is refused, as by a host that is down or a firewall
// that rejects.
func (p *Proxy) Refuse() {
	p.ln.Close()
	p.Cut()
}

// Freeze stops relaying bytes, in both directions and for new connections
// too, while keeping every socket open: a silently dead link.
func (p *Proxy) Freeze() {
	p.mu.Lock()
	p.frozen = true
	p.mu.Unlock()
}

// Thaw resumes relaying, delivering what was held back.
func (p *Proxy) Thaw() {
	p.mu.Lock()
	p.frozen = false
	p.cond.Broadcast()
	p.mu.Unlock()
}

func (p *Proxy) close() {
	p.ln.Close()
	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
	p.Cut()
}

func (p *Proxy) serve() {
	for {
		client, err := p.ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			time.Sleep(10 * time.Millisecond)
			continue
		}
		go p.relay(client)
	}
}

func (p *Proxy) relay(client net.Conn) {
	server, err := net.DialTimeout("tcp", p.target, 10*time.Second)
	if err != nil {
		client.Close()
		return
	}
	r := &relay{client: client, server: server}
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		client.Close()
		server.Close()
		return
	}
	p.conns[r] = struct{}{}
	p.mu.Unlock()

	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); p.pump(r, server, client) }()
	go func() { defer wg.Done(); p.pump(r, client, server) }()
	wg.Wait()

	p.mu.Lock()
	delete(p.conns, r)
	p.mu.Unlock()
	client.Close()
	server.Close()
}

// pump copies src to dst, holding each chunk while the proxy is frozen.
func (p *Proxy) pump(r *relay, dst, src net.Conn) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			if !p.waitThawed(r) {
				return
			}
			if _, werr := dst.Write(buf[:n]); werr != nil {
				p.cutRelay(r)
				return
			}
			if dst == r.server {
				p.toTarget.Add(int64(n))
			} else {
				p.fromTarget.Add(int64(n))
			}
		}
		if err == io.EOF {
			if !p.waitThawed(r) {
				return
			}
			if tc, ok := dst.(*net.TCPConn); ok {
				tc.CloseWrite()
			}
			return
		}
		if err != nil {
			p.cutRelay(r)
			return
		}
	}
}

// waitThawed blocks while the proxy is frozen and reports whether the
// relay is still open.
func (p *Proxy) waitThawed(r *relay) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	for p.frozen && !r.cut {
		p.cond.Wait()
	}
	return !r.cut
}

func (p *Proxy) cutRelay(r *relay) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cutLocked(r)
	p.cond.Broadcast()
}

func (p *Proxy) cutLocked(r *relay) {
	if r.cut {
		return
	}
	r.cut = true
	for _, c := range []net.Conn{r.client, r.server} {
		if tc, ok := c.(*net.TCPConn); ok {
			tc.SetLinger(0)
		}
		c.Close()
	}
}
