package transport

import (
	"errors"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/crypto/ssh"
)

// forward opens on the host the channel a client asked the master for and
// splices the two. The host's refusal is the client's, with the host's
// reason (sshd's MaxSessions answers "connect failed", which the client
// waits out as it does on a direct connection).
func (m *master) forward(nc ssh.NewChannel) {
	var up ssh.Channel
	var upReqs <-chan *ssh.Request
	var err error
	switch nc.ChannelType() {
	case "session":
		up, upReqs, err = m.spare.take()
	case "direct-tcpip":
		up, upReqs, err = m.up.client.OpenChannel("direct-tcpip", nc.ExtraData())
	default:
		_ = nc.Reject(ssh.UnknownChannelType, "the master forwards session and direct-tcpip channels only")
		return
	}
	if err != nil {
		var oe *ssh.OpenChannelError
		if errors.As(err, &oe) {
			_ = nc.Reject(oe.Reason, oe.Message)
		} else {
			_ = nc.Reject(ssh.ConnectionFailed, causeText(err))
		}
		return
	}
	down, downReqs, err := nc.Accept()
	if err != nil {
		up.Close()
		return
	}
	m.channels.Add(1)
	defer m.channels.Add(-1)
	splice(down, downReqs, up, upReqs, nc.ChannelType() == "session", m.lost)
}

// splice relays a client's channel (down) and the host's (up) both ways:
// data, extended data, EOF once both streams are drained, and every
// request, in order, with the host's answer. It returns once the host's
// channel is closed and everything it sent has been relayed.
//
// The client's channel is then closed, with one exception: a session that
// ended without an exit status because the master's connection was lost.
// Closing that channel would look to the client like a host that closed a
// session without a status; the master closes the client's whole
// connection instead, which the client reports as lost contact, as it
// reports a direct connection that dropped. Either way the outcome is
// unknown.
func splice(down ssh.Channel, downReqs <-chan *ssh.Request, up ssh.Channel, upReqs <-chan *ssh.Request, session bool, lost <-chan struct{}) {
	var fromHost sync.WaitGroup
	var status atomic.Bool // an exit-status or exit-signal was relayed
	var asking sync.Mutex  // held while a client's request waits for the host's answer
	fromHost.Add(2)
	go func() {
		defer fromHost.Done()
		streams(down, up)
	}()
	go func() {
		defer fromHost.Done()
		relayRequests(down, upReqs, &status, nil)
	}()
	go streams(up, down)
	go func() {
		relayRequests(up, downReqs, nil, &asking)
		// The client closed its channel (or its connection went): the
		// host sees its client go away, as it would directly.
		_ = up.Close()
	}()
	fromHost.Wait()
	// A command that exits at once can close the host's channel before
	// the answer to its exec is relayed: the client gets the answer first,
	// or it would take its command for one that may not have run.
	asking.Lock()
	defer asking.Unlock()
	if session && !status.Load() {
		// The host's channel can close a moment before the master learns
		// that the whole connection is gone.
		select {
		case <-lost:
			return
		case <-time.After(100 * time.Millisecond):
		}
	}
	_ = down.Close()
}

// streams copies src's data and extended data to dst, then sends EOF. A
// dst that stops taking data is not waited for: the rest of src is read
// and dropped, so that the other side's window never fills.
func streams(dst, src ssh.Channel) {
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); relay(dst, src) }()
	go func() { defer wg.Done(); relay(dst.Stderr(), src.Stderr()) }()
	wg.Wait()
	_ = dst.CloseWrite()
}

func relay(dst io.Writer, src io.Reader) {
	if _, err := io.Copy(dst, src); err != nil {
		_, _ = io.Copy(io.Discard, src)
	}
}

// relayRequests sends each request of src on dst and answers it with dst's
// answer. A request that got no answer (dst closed while it was on its
// way, or before) is not answered "no" on dst's behalf: the asker's
// channel is closed instead (splice closes it once the host's side is
// done), so that a request that may have reached the host (an exec) is
// never mistaken for one the host refused.
//
// asking, when set, is held from a request's arrival to its answer.
func relayRequests(dst ssh.Channel, src <-chan *ssh.Request, status *atomic.Bool, asking *sync.Mutex) {
	for r := range src {
		if status != nil && (r.Type == "exit-status" || r.Type == "exit-signal") {
			status.Store(true)
		}
		if !relayRequest(dst, r, asking) {
			dropRequests(src)
			return
		}
	}
}

func relayRequest(dst ssh.Channel, r *ssh.Request, asking *sync.Mutex) bool {
	if asking != nil {
		asking.Lock()
		defer asking.Unlock()
	}
	ok, err := dst.SendRequest(r.Type, r.WantReply, r.Payload)
	if err != nil {
		return false
	}
	if r.WantReply {
		_ = r.Reply(ok, nil)
	}
	return true
}

// dropRequests answers nothing more: the requests still coming are dropped
// until the channel closes.
func dropRequests(src <-chan *ssh.Request) {
	go func() {
		for range src {
		}
	}()
}
