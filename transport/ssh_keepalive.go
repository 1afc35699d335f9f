package transport

import (
	"fmt"
	"net"
	"sync/atomic"
	"time"
)

// activityConn counts the bytes received, so that the keepalive can tell a
// busy link from a dead one, and acknowledges them at once where it can
// (ack, from quickAcker).
type activityConn struct {
	net.Conn
	received atomic.Uint64
	ack      func()
}

func newActivityConn(c net.Conn) *activityConn {
	return &activityConn{Conn: c, ack: quickAcker(c)}
}

func (c *activityConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.received.Add(uint64(n))
	if n > 0 && c.ack != nil {
		c.ack()
	}
	return n, err
}

// keepalive probes the host with keepalive@openssh.com requests and closes
// the connection once maxMissed intervals in a row have passed with a probe
// outstanding and not a byte received. Like OpenSSH's ServerAliveInterval,
// any traffic counts as a sign of life: a keepalive reply can queue behind
// a long transfer on a slow link. Closing the connection is what unblocks
// every Run waiting on a link that died silently (no RST, no FIN).
func (s *SSH) keepalive(interval time.Duration, maxMissed int) {
	ticker := time.NewTicker(interval)
	defer ticker.Stop()
	var reply chan error // not nil while a probe is outstanding
	missed := 0
	seen := s.conn.received.Load()
	for {
		select {
		case <-s.done:
			return
		case <-s.connDone:
			return
		case err := <-reply:
			reply = nil
			if err != nil {
				return // the connection is closing anyway
			}
			missed = 0
			continue
		case <-ticker.C:
		}

		if now := s.conn.received.Load(); now != seen {
			seen, missed = now, 0
		} else if reply != nil {
			missed++
			if missed >= maxMissed {
				s.lose(fmt.Errorf("no sign of life from the host for %s (%d keepalives unanswered), connection closed",
					interval*time.Duration(maxMissed), maxMissed))
				return
			}
		}
		if reply == nil {
			// x/crypto serialises global requests, so at most one probe is
			// in flight; a stuck one blocks only this goroutine.
			reply = make(chan error, 1)
			go func(reply chan<- error) {
				_, err := s.Ping()
				reply <- err
			}(reply)
		}
	}
}
