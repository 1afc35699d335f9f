package e2e

import (
	"net"
	"testing"
	"time"
)

// latencyProxy forwards TCP to target, delaying every byte by delay in each
// direction (a round trip costs 2*delay) without limiting bandwidth: round
// trips become visible in wall time, so they can be counted.
type latencyProxy struct {
	Addr  string
	delay time.Duration
}

func newLatencyProxy(t testing.TB, target string, delay time.Duration) *latencyProxy {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	p := &latencyProxy{Addr: l.Addr().String(), delay: delay}
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			s, err := net.Dial("tcp", target)
			if err != nil {
				c.Close()
				continue
			}
			go p.pipe(c, s)
			go p.pipe(s, c)
		}
	}()
	return p
}

func (p *latencyProxy) pipe(dst, src net.Conn) {
	type chunk struct {
		b   []byte
		due time.Time
	}
	q := make(chan chunk, 4096)
	go func() {
		defer dst.Close()
		for c := range q {
			time.Sleep(time.Until(c.due))
			if _, err := dst.Write(c.b); err != nil {
				return
			}
		}
	}()
	defer close(q)
	for {
		buf := make([]byte, 64<<10)
		n, err := src.Read(buf)
		if n > 0 {
			q <- chunk{buf[:n], time.Now().Add(p.delay)}
		}
		if err != nil {
			return
		}
	}
}
