package transport

import (
	"sync"
	"time"

	"golang.org/x/crypto/ssh"
)

// spareMaxAge is how long the master keeps a spare session unused. A
// script's next command comes within it; sshd's ChannelTimeout, which may
// close idle channels, is set in minutes where it is set at all, and a
// spare the host closes as a client takes it would cost that client's
// command an unknown outcome.
const spareMaxAge = 5 * time.Second

// spareSession is the session channel the master keeps open on the host
// ahead of the next client's: the client's channel open then costs no
// round trip to the host. It is opened when the master starts and again
// after each one taken, and closed when unused for spareMaxAge.
type spareSession struct {
	open func() (ssh.Channel, <-chan *ssh.Request, error)

	mu      sync.Mutex
	ch      ssh.Channel
	reqs    <-chan *ssh.Request
	filling bool
	closed  bool
}

// take is the spare, if there is a live one, else a session opened now;
// either way a new spare is being opened when it returns.
func (s *spareSession) take() (ssh.Channel, <-chan *ssh.Request, error) {
	s.mu.Lock()
	ch, reqs := s.ch, s.reqs
	s.ch, s.reqs = nil, nil
	s.mu.Unlock()
	if ch != nil && !idleOpen(reqs) {
		ch.Close()
		ch = nil
	}
	defer s.fill()
	if ch != nil {
		return ch, reqs, nil
	}
	return s.open()
}

// idleOpen: nothing came on the spare's requests, and the host has not
// closed it.
func idleOpen(reqs <-chan *ssh.Request) bool {
	select {
	case r, ok := <-reqs:
		if ok && r.WantReply {
			_ = r.Reply(false, nil)
		}
		return false
	default:
		return true
	}
}

// fill opens a spare in the background unless there is one or one is
// being opened. A host that refuses it (its sessions are full) gets no
// spare until the next take.
func (s *spareSession) fill() {
	s.mu.Lock()
	if s.ch != nil || s.filling || s.closed {
		s.mu.Unlock()
		return
	}
	s.filling = true
	s.mu.Unlock()
	go func() {
		ch, reqs, err := s.open()
		s.mu.Lock()
		defer s.mu.Unlock()
		s.filling = false
		if err != nil {
			return
		}
		if s.ch != nil || s.closed {
			go ch.Close()
			return
		}
		s.ch, s.reqs = ch, reqs
		time.AfterFunc(spareMaxAge, func() { s.expire(ch) })
	}()
}

// expire closes ch if it is still the unused spare.
func (s *spareSession) expire(ch ssh.Channel) {
	s.mu.Lock()
	mine := s.ch == ch
	if mine {
		s.ch, s.reqs = nil, nil
	}
	s.mu.Unlock()
	if mine {
		ch.Close()
	}
}

// close closes the spare and opens no more.
func (s *spareSession) close() {
	s.mu.Lock()
	ch := s.ch
	s.ch, s.reqs, s.closed = nil, nil, true
	s.mu.Unlock()
	if ch != nil {
		ch.Close()
	}
}
