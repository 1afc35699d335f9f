package transport

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/crypto/ssh"
)

// muxProtocol is the number of the protocol between hoist's master and its
// clients: the SSH connection protocol on the socket plus the global
// requests below. A client that meets an older master has it drain and
// starts a new one; a newer master is left alone. A string, so that a test
// can build a hoist of another protocol (-ldflags -X).
var muxProtocol = "1"

const muxVersionPrefix = "SSH-2.0-hoist_mux_"

// The master's own global requests.
const (
	muxInfo = "info@mux.hoist" // reply: masterInfo, JSON
	muxStop = "stop@mux.hoist" // stop listening, exit once the last client is gone (ssh -O stop)
	muxExit = "exit@mux.hoist" // exit now (ssh -O exit)
	muxLost = "lost@mux.hoist" // master to client: why the connection is about to close
)

// MasterInfo is what a master says about itself.
type MasterInfo struct {
	PID      int    `json:"pid"`
	Version  string `json:"version"`  // of the hoist that started it
	Protocol string `json:"protocol"` // muxProtocol
	Socket   string `json:"socket"`
	Target   string `json:"target"`
	Reached  Reached
	Since    time.Time     `json:"since"`
	Clients  int           `json:"clients"`
	Persist  time.Duration `json:"persist"` // Control.Persist
	Draining bool          `json:"draining"`
}

// master serves one kept connection to its clients on a Unix socket.
type master struct {
	up     *SSH
	ln     *net.UnixListener
	path   string
	file   fs.FileInfo // the socket as linked, to remove only our own
	config *ssh.ServerConfig
	info   MasterInfo
	spare  *spareSession

	channels atomic.Int64
	lost     chan struct{} // closed when the connection to the host is gone

	mu       sync.Mutex
	clients  map[*ssh.ServerConn]struct{}
	draining bool
	idle     *time.Timer
	ended    chan string // why the master ends, once
	endOnce  sync.Once
}

// ErrMasterTaken is StartMaster's error when another master linked its
// socket first: use that one.
var ErrMasterTaken = errors.New("another master listens at the socket")

// bindMaster listens at path, atomically: a temporary name is bound with
// mode 0600 and linked into place, so that a socket at path always has a
// listener, and of two masters only one links. A live master at path
// makes it ErrMasterTaken; a stale socket of ours there is removed first.
func bindMaster(path string) (*net.UnixListener, fs.FileInfo, error) {
	fi, err := checkSocket(path)
	if err != nil {
		return nil, nil, err
	}
	if fi != nil {
		if c, err := net.Dial("unix", path); err == nil {
			c.Close()
			return nil, nil, ErrMasterTaken
		}
		removeIfSame(path, fi)
	}
	tmp := path + "." + randomName(16)
	old := syscall.Umask(0o177)
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: tmp, Net: "unix"})
	syscall.Umask(old)
	if err != nil {
		return nil, nil, fmt.Errorf("cannot listen at %s: %w", tmp, err)
	}
	ln.SetUnlinkOnClose(false)
	defer os.Remove(tmp)
	if err := os.Link(tmp, path); err != nil {
		ln.Close()
		if errors.Is(err, fs.ErrExist) {
			return nil, nil, ErrMasterTaken
		}
		return nil, nil, fmt.Errorf("cannot link the socket into place: %w", err)
	}
	fi, err = os.Lstat(path)
	if err != nil {
		ln.Close()
		return nil, nil, err
	}
	return ln, fi, nil
}

func randomName(n int) string {
	const letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	b := make([]byte, n)
	_, _ = rand.Read(b)
	for i := range b {
		b[i] = letters[int(b[i])%len(letters)]
	}
	return string(b)
}

// newMaster serves up on ln, bound at path (file).
func newMaster(up *SSH, ln *net.UnixListener, path string, file fs.FileInfo, persist time.Duration, version string) (*master, error) {
	_, key, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, err
	}
	signer, err := ssh.NewSignerFromKey(key)
	if err != nil {
		return nil, err
	}
	// No authentication: the kernel said who the client is (peerUID).
	config := &ssh.ServerConfig{NoClientAuth: true, ServerVersion: muxVersionPrefix + muxProtocol}
	config.AddHostKey(signer)
	m := &master{
		up: up, ln: ln, path: path, file: file, config: config,
		info: MasterInfo{PID: os.Getpid(), Version: version, Protocol: muxProtocol, Socket: path,
			Target: up.Target(), Reached: up.Reached(), Since: time.Now(), Persist: persist},
		lost:    make(chan struct{}),
		clients: map[*ssh.ServerConn]struct{}{},
		ended:   make(chan string, 1),
	}
	// Tried once: a host whose sessions are full answers the client,
	// which waits that out itself (whileFull).
	m.spare = &spareSession{open: func() (ssh.Channel, <-chan *ssh.Request, error) {
		return up.client.OpenChannel("session", nil)
	}}
	return m, nil
}

// serve runs the master until it ends, and says why it ended.
func (m *master) serve() string {
	go func() {
		<-m.up.connDone
		close(m.lost)
	}()
	go m.accept()
	m.spare.fill()
	m.mu.Lock()
	m.idleLocked()
	m.mu.Unlock()
	var why string
	select {
	case <-m.lost:
		why = "the connection to the host was lost"
		if r := m.up.lostReason(); r != nil {
			why += ": " + r.Error()
		}
	case why = <-m.ended:
	}
	m.shutdown(why)
	return why
}

func (m *master) end(why string) {
	m.endOnce.Do(func() { m.ended <- why })
}

// shutdown stops listening, removes the socket if it is still ours, tells
// each client why and closes it, and closes the connection to the host.
func (m *master) shutdown(why string) {
	m.unlisten()
	m.spare.close()
	m.mu.Lock()
	clients := make([]*ssh.ServerConn, 0, len(m.clients))
	for c := range m.clients {
		clients = append(clients, c)
	}
	m.clients = nil
	m.mu.Unlock()
	var wg sync.WaitGroup
	for _, c := range clients {
		wg.Go(func() {
			t := time.AfterFunc(time.Second, func() { c.Close() })
			defer t.Stop()
			_, _, _ = c.SendRequest(muxLost, false, []byte(why))
			c.Close()
		})
	}
	wg.Wait()
	m.up.Close()
}

// unlisten closes the listener and removes the socket, once.
func (m *master) unlisten() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.ln == nil {
		return
	}
	m.ln.Close()
	m.ln = nil
	removeIfSame(m.path, m.file)
}

func (m *master) accept() {
	m.mu.Lock()
	ln := m.ln
	m.mu.Unlock()
	if ln == nil {
		return
	}
	for {
		c, err := ln.AcceptUnix()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			time.Sleep(10 * time.Millisecond)
			continue
		}
		go m.serveClient(c)
	}
}

// serveClient serves one client, a process of this user only: anyone else
// is cut off before a byte of SSH.
func (m *master) serveClient(c *net.UnixConn) {
	uid, _, err := peerUID(c)
	if err != nil || uid != uint32(os.Getuid()) {
		c.Close()
		return
	}
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	sc, chans, reqs, err := ssh.NewServerConn(c, m.config)
	if err != nil {
		c.Close()
		return
	}
	_ = c.SetDeadline(time.Time{})
	if !m.addClient(sc) {
		sc.Close()
		return
	}
	defer m.removeClient(sc)
	go m.requests(reqs)
	for nc := range chans {
		go m.forward(nc)
	}
}

func (m *master) addClient(c *ssh.ServerConn) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.clients == nil || m.draining {
		return false
	}
	m.clients[c] = struct{}{}
	if m.idle != nil {
		m.idle.Stop()
		m.idle = nil
	}
	return true
}

func (m *master) removeClient(c *ssh.ServerConn) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.clients == nil {
		return
	}
	delete(m.clients, c)
	m.idleLocked()
}

// idleLocked starts the ControlPersist clock when the last client is
// gone; a draining master ends then.
func (m *master) idleLocked() {
	if len(m.clients) > 0 {
		return
	}
	switch {
	case m.draining:
		m.end("stopped, and its last client is gone")
	case m.info.Persist > 0 && m.idle == nil:
		m.idle = time.AfterFunc(m.info.Persist, func() {
			m.mu.Lock()
			idle := len(m.clients) == 0
			m.mu.Unlock()
			if idle {
				m.end(fmt.Sprintf("no client for %s (ControlPersist)", m.info.Persist))
			}
		})
	}
}

// drain stops listening: the socket goes at once, and the master ends when
// its last client does (ssh -O stop).
func (m *master) drain() {
	m.unlisten()
	m.mu.Lock()
	defer m.mu.Unlock()
	m.draining = true
	m.idleLocked()
}

// requests answers a client's global requests: keepalives go to the host
// (so that they measure the whole way), the master's own requests are
// answered here, anything else is refused.
func (m *master) requests(reqs <-chan *ssh.Request) {
	for r := range reqs {
		switch r.Type {
		case "keepalive@openssh.com":
			go func(r *ssh.Request) {
				_, _, err := m.up.client.SendRequest(r.Type, true, nil)
				_ = r.Reply(err == nil, nil)
			}(r)
		case muxInfo:
			m.mu.Lock()
			info := m.info
			info.Clients, info.Draining = len(m.clients), m.draining
			m.mu.Unlock()
			b, _ := json.Marshal(info)
			_ = r.Reply(true, b)
		case muxStop:
			m.drain()
			_ = r.Reply(true, nil)
		case muxExit:
			_ = r.Reply(true, nil)
			m.end("told to exit (hoist mux exit)")
		default:
			if r.WantReply {
				_ = r.Reply(false, nil)
			}
		}
	}
}
