package transport

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pkg/sftp"
	"golang.org/x/crypto/ssh"
)

// testServer is an in-process SSH server on 127.0.0.1 that understands a
// handful of test commands (see execSession.run).
type testServer struct {
	t        *testing.T
	ln       net.Listener
	addr     string
	hostKeys []ssh.Signer  // ed25519, ecdsa
	plainKey ssh.PublicKey // with withHostCert: the key inside the certificate
	events   chan string
	release  chan struct{} // closed to let "block" commands finish

	mu             sync.Mutex
	conns          []net.Conn
	accepted       int
	dropFirst      int           // close this many connections before the banner
	refuseSessions bool          // reject "session" channel opens
	fullSessions   int           // reject this many "session" opens as sshd does past MaxSessions
	refuseExec     bool          // reply false to "exec"
	slowFirst      time.Duration // answer a connection's first global request this late
	active, peak   int           // concurrent "block" commands
	sftps, sftpNow int           // SFTP sessions served, and serving now
	authorized     map[string]bool
}

// testServerOpt configures a testServer before it accepts connections.
type testServerOpt func(*testServer)

func newTestServer(t *testing.T, opts ...testServerOpt) *testServer {
	t.Helper()
	ts := &testServer{
		t:          t,
		events:     make(chan string, 1000),
		release:    make(chan struct{}),
		authorized: map[string]bool{},
	}
	_, edPriv, err := ed25519.GenerateKey(rand.Reader)
	must(t, err)
	ecPriv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	must(t, err)
	for _, k := range []any{edPriv, ecPriv} {
		s, err := ssh.NewSignerFromKey(k)
		must(t, err)
		ts.hostKeys = append(ts.hostKeys, s)
	}
	for _, o := range opts {
		o(ts)
	}
	ts.ln, err = net.Listen("tcp", "127.0.0.1:0")
	must(t, err)
	ts.addr = ts.ln.Addr().String()
	t.Cleanup(ts.close)
	go ts.serve()
	return ts
}

func (ts *testServer) close() {
	ts.ln.Close()
	ts.mu.Lock()
	defer ts.mu.Unlock()
	for _, c := range ts.conns {
		c.Close()
	}
}

func (ts *testServer) authorize(pub ssh.PublicKey) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	ts.authorized[string(pub.Marshal())] = true
}

func (ts *testServer) acceptedCount() int {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	return ts.accepted
}

func (ts *testServer) serve() {
	config := &ssh.ServerConfig{
		PublicKeyCallback: func(_ ssh.ConnMetadata, key ssh.PublicKey) (*ssh.Permissions, error) {
			ts.mu.Lock()
			defer ts.mu.Unlock()
			if ts.authorized[string(key.Marshal())] {
				return nil, nil
			}
			return nil, io.ErrUnexpectedEOF // any error refuses the key
		},
	}
	for _, k := range ts.hostKeys {
		config.AddHostKey(k)
	}
	for {
		conn, err := ts.ln.Accept()
		if err != nil {
			return
		}
		ts.mu.Lock()
		ts.accepted++
		drop := ts.accepted <= ts.dropFirst
		ts.conns = append(ts.conns, conn)
		ts.mu.Unlock()
		if drop {
			conn.Close()
			continue
		}
		go ts.serveConn(conn, config)
	}
}

func (ts *testServer) serveConn(conn net.Conn, config *ssh.ServerConfig) {
	_, chans, reqs, err := ssh.NewServerConn(conn, config)
	if err != nil {
		return
	}
	ts.mu.Lock()
	slow := ts.slowFirst
	ts.mu.Unlock()
	// Keepalives are answered with "failure", as sshd does for unknown
	// requests; the first one late when slowFirst says so.
	go func() {
		for r := range reqs {
			if slow > 0 {
				time.Sleep(slow)
				slow = 0
			}
			if r.WantReply {
				_ = r.Reply(false, nil)
			}
		}
	}()
	for nc := range chans {
		go ts.serveChannel(nc, conn)
	}
}

func (ts *testServer) serveChannel(nc ssh.NewChannel, conn net.Conn) {
	ts.mu.Lock()
	refuse, refuseExec := ts.refuseSessions, ts.refuseExec
	full := ts.fullSessions > 0
	if full {
		ts.fullSessions--
	}
	ts.mu.Unlock()
	if refuse || nc.ChannelType() != "session" {
		_ = nc.Reject(ssh.Prohibited, "no sessions here")
		return
	}
	if full {
		_ = nc.Reject(ssh.ConnectionFailed, "open failed")
		return
	}
	ch, reqs, err := nc.Accept()
	if err != nil {
		return
	}
	es := &execSession{ts: ts, ch: ch, conn: conn, closed: make(chan struct{})}
	cmds := make(chan string, 1)
	sftpReq := make(chan struct{}, 1)
	go func() {
		defer close(es.closed) // the client closed the channel
		execed := false
		for r := range reqs {
			if r.Type == "subsystem" && !execed {
				execed = true
				var p struct{ Name string }
				_ = ssh.Unmarshal(r.Payload, &p)
				_ = r.Reply(p.Name == "sftp", nil)
				if p.Name == "sftp" {
					sftpReq <- struct{}{}
				}
				continue
			}
			if r.Type == "exec" && !execed {
				execed = true
				var p struct{ Command string }
				_ = ssh.Unmarshal(r.Payload, &p)
				_ = r.Reply(!refuseExec, nil)
				if !refuseExec {
					cmds <- p.Command
				}
				continue
			}
			es.mu.Lock()
			es.requests = append(es.requests, r.Type)
			es.mu.Unlock()
			_ = r.Reply(false, nil)
		}
	}()
	select {
	case cmd := <-cmds:
		es.run(cmd)
	case <-sftpReq:
		ts.mu.Lock()
		ts.sftps++
		ts.sftpNow++
		ts.mu.Unlock()
		es.serveSFTP()
		ts.mu.Lock()
		ts.sftpNow--
		ts.mu.Unlock()
	case <-es.closed:
		ch.Close()
	}
}

// serveSFTP answers the "sftp" subsystem with pkg/sftp's server on the
// local file system, which, like OpenSSH's sftp-server, creates files with
// the mode an open request asks for, else 0644 (less the umask).
func (es *execSession) serveSFTP() {
	srv, err := sftp.NewServer(es.ch)
	if err != nil {
		es.ch.Close()
		return
	}
	_ = srv.Serve()
	srv.Close()
}

// execSession is one exec request on the test server.
type execSession struct {
	ts     *testServer
	ch     ssh.Channel
	conn   net.Conn
	closed chan struct{}

	mu       sync.Mutex
	requests []string // channel requests after exec, such as "signal"
}

func (es *execSession) event(e string) { es.ts.events <- e }

// run interprets the test command language:
//
//	exit N          exit with status N
//	signal NAME     exit with signal NAME
//	output N M      write N bytes to stdout and M to stderr, exit 0
//	cat             copy stdin to stdout until EOF, exit 0
//	wait-stdin      read stdin; report "stdin-eof" on EOF; report "closed" when the channel closes
//	hang            report "closed" when the channel closes; never exit
//	spew            write to stdout until that fails
//	drop            close the TCP connection
//	block           count as active until testServer.release is closed, exit 0
//	sleep D         exit 0 after duration D
//
// A "subsystem" request for "sftp" instead gets an SFTP server (serveSFTP).
func (es *execSession) run(cmd string) {
	f := strings.Fields(cmd)
	es.event("started")
	switch f[0] {
	case "exit":
		n, _ := strconv.Atoi(f[1])
		es.exit(n)
	case "signal":
		_, _ = es.ch.SendRequest("exit-signal", false, ssh.Marshal(struct {
			Signal     string
			CoreDumped bool
			Error      string
			Lang       string
		}{Signal: f[1]}))
		es.ch.Close()
	case "output":
		n, _ := strconv.Atoi(f[1])
		m, _ := strconv.Atoi(f[2])
		_, _ = es.ch.Write(pattern(n, 'o'))
		_, _ = es.ch.Stderr().Write(pattern(m, 'e'))
		es.exit(0)
	case "cat":
		_, _ = io.Copy(es.ch, es.ch)
		es.event("stdin-eof")
		es.exit(0)
	case "wait-stdin":
		_, _ = io.Copy(io.Discard, es.ch)
		es.event("stdin-eof")
		<-es.closed
		es.event("closed")
	case "hang":
		<-es.closed
		es.mu.Lock()
		es.event("closed after requests " + strings.Join(es.requests, ","))
		es.mu.Unlock()
	case "spew":
		chunk := pattern(4096, 's')
		for {
			if _, err := es.ch.Write(chunk); err != nil {
				return
			}
		}
	case "drop":
		es.conn.Close()
	case "block":
		es.ts.mu.Lock()
		es.ts.active++
		es.ts.peak = max(es.ts.peak, es.ts.active)
		es.ts.mu.Unlock()
		<-es.ts.release
		es.ts.mu.Lock()
		es.ts.active--
		es.ts.mu.Unlock()
		es.exit(0)
	case "sleep":
		d, _ := time.ParseDuration(f[1])
		time.Sleep(d)
		es.exit(0)
	}
}

func (es *execSession) exit(code int) {
	_, _ = es.ch.SendRequest("exit-status", false, ssh.Marshal(struct{ Status uint32 }{uint32(code)}))
	es.ch.Close()
}
