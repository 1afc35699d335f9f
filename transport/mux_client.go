package transport

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/crypto/ssh"
)

// DialShared connects to cfg.Target as DialSSH does, over a kept
// connection when cfg.Control asks for one (docs/connections.md): through
// the live master at cfg.Control.Socket(), else, when the configuration
// lets commands start one (ControlMaster auto, autoask or yes, and
// ControlPersist), through a master that start starts (nil: none is
// started). The returned *SSH is the same either way; its Reached().Master
// names the master's socket.
//
// A master that is not as it must be (a socket in a directory others can
// write, owned by another user or open to them, a listener of another
// user, no answer, a protocol of a newer hoist) is never used: DialShared
// connects directly and says why on cfg.Logger. The errors are DialSSH's;
// a master that could not make its connection returns the error its dial
// returned, without a second attempt.
func DialShared(ctx context.Context, cfg SSHConfig, start func(context.Context) error) (*SSH, error) {
	c := cfg.Control
	if c.Path == "" {
		return DialSSH(ctx, cfg)
	}
	path := c.Socket()
	replace := c.mayStart() && start != nil
	s, look := dialMaster(ctx, cfg, path, replace)
	if s != nil {
		return s, nil
	}
	why := look.why
	switch {
	case look.state == masterRefused:
	case !c.mayStart():
		why += "; the configuration starts no master (ControlMaster auto, autoask or yes, and ControlPersist)"
	case start == nil:
	default:
		if look.state == masterStale {
			removeIfSame(path, look.file)
		}
		if cfg.Logger != nil {
			cfg.Logger.Debug("starting a master", "target", cfg.Target, "socket", path, "why", why)
		}
		err := start(ctx)
		switch {
		case err == nil, errors.Is(err, ErrMasterTaken):
			if s, look = dialMaster(ctx, cfg, path, false); s != nil {
				return s, nil
			}
			why = look.why
		case isDialFailure(err):
			return nil, err
		case ctx.Err() != nil:
			return nil, interrupted(ctx.Err())
		default:
			why = "the master did not start: " + causeText(err)
		}
	}
	if cfg.Logger != nil {
		cfg.Logger.Debug("connecting directly", "target", cfg.Target, "socket", path, "why", why)
	}
	return DialSSH(ctx, cfg)
}

// isDialFailure: err is one of DialSSH's own, as a master passes it on.
func isDialFailure(err error) bool {
	var de *DialError
	var he *HostKeyError
	var je *JumpError
	return errors.As(err, &de) || errors.As(err, &he) || errors.As(err, &je)
}

type masterState int

const (
	masterAbsent  masterState = iota // nothing at the socket path
	masterStale                      // a socket of ours, nobody listening
	masterOlder                      // a master of an older protocol, asked to drain
	masterRefused                    // anything else: never used, never removed
)

// masterLook is why dialMaster did not use a master.
type masterLook struct {
	state masterState
	why   string
	file  fs.FileInfo // the stale socket
}

// masterTimeout bounds connecting to a master and its handshake: it is
// on this machine, and a master that hangs is not waited for.
const masterTimeout = 5 * time.Second

// dialMaster connects to the master at path, checking each step
// (docs/connections.md, "The client's steps"), and makes an SSH value of
// the connection. A master of an older protocol is asked to stop only when
// replace says that a new one will take its place.
func dialMaster(ctx context.Context, cfg SSHConfig, path string, replace bool) (*SSH, masterLook) {
	begin := time.Now()
	cfg, t, err := cfg.target()
	if err != nil {
		return nil, masterLook{masterRefused, err.Error(), nil}
	}
	mc, look := connectMaster(ctx, path, min(cfg.HandshakeTimeout, masterTimeout))
	if mc == nil {
		return nil, look
	}
	refused := func(format string, args ...any) (*SSH, masterLook) {
		mc.sc.Close()
		return nil, masterLook{masterRefused, fmt.Sprintf(format, args...), nil}
	}
	switch mine := protocolNumber(); {
	case mc.protocol > mine:
		return refused("the master at %s speaks mux protocol %d, newer than this hoist's %d: left to the hoist that started it",
			path, mc.protocol, mine)
	case mc.protocol < mine && !replace:
		return refused("the master at %s speaks mux protocol %d, older than this hoist's %d: left to the hoist that started it",
			path, mc.protocol, mine)
	case mc.protocol < mine:
		_, _, _ = mc.sc.SendRequest(muxStop, true, nil)
		mc.sc.Close()
		return nil, masterLook{masterOlder, fmt.Sprintf("the master at %s speaks mux protocol %d, older than %d: asked it to stop",
			path, mc.protocol, mine), nil}
	}
	info, err := mc.info()
	if err != nil {
		return refused("the master at %s did not say how it is connected: %s", path, causeText(err))
	}
	_ = mc.conn.SetDeadline(time.Time{})
	lost := make(chan *ssh.Request, 1)
	s := newSSH(cfg, t, mc.conn, ssh.NewClient(mc.sc, mc.chans, masterRequests(mc.reqs, lost)), masterReached(info, path), begin)
	s.masterDone = make(chan struct{})
	go func() {
		defer close(s.masterDone)
		if r, ok := <-lost; ok {
			s.lose(fmt.Errorf("the master (pid %d) ended: %s", info.PID, printableText(r.Payload)))
		}
	}()
	return s, masterLook{}
}

// masterConn is an SSH connection to a master, handshake done.
type masterConn struct {
	conn     *activityConn
	sc       ssh.Conn
	chans    <-chan ssh.NewChannel
	reqs     <-chan *ssh.Request
	protocol int
}

// connectMaster checks the socket at path, connects, checks that the
// listener is this user's and makes the SSH handshake, within timeout (the
// connection's deadline stays set). Nil with why when any of it fails.
func connectMaster(ctx context.Context, path string, timeout time.Duration) (*masterConn, masterLook) {
	fi, err := checkSocket(path)
	switch {
	case err != nil:
		return nil, masterLook{masterRefused, err.Error(), nil}
	case fi == nil:
		return nil, masterLook{masterAbsent, "no master listens at " + path, nil}
	}
	d := net.Dialer{Timeout: timeout}
	raw, err := d.DialContext(ctx, "unix", path)
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return nil, masterLook{masterStale, "the socket " + path + " is stale (nobody listens)", fi}
	case errors.Is(err, fs.ErrNotExist):
		return nil, masterLook{masterAbsent, "no master listens at " + path, nil}
	case err != nil:
		return nil, masterLook{masterRefused, "cannot connect to " + path + ": " + causeText(err), nil}
	}
	uc := raw.(*net.UnixConn)
	fail := func(format string, args ...any) (*masterConn, masterLook) {
		uc.Close()
		return nil, masterLook{masterRefused, fmt.Sprintf(format, args...), nil}
	}
	if uid, _, err := peerUID(uc); err != nil {
		return fail("cannot tell who listens at %s: %s", path, causeText(err))
	} else if uid != uint32(os.Getuid()) {
		return fail("the process listening at %s is uid %d's, not yours", path, uid)
	}
	conn := newActivityConn(uc)
	_ = conn.SetDeadline(time.Now().Add(timeout))
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	sc, chans, reqs, err := ssh.NewClientConn(conn, "hoist-mux", &ssh.ClientConfig{
		User: "hoist",
		// The kernel said that the master is this user's own process
		// (peerUID): its key, made when it started, proves nothing more.
		HostKeyCallback: func(string, net.Addr, ssh.PublicKey) error { return nil },
	})
	if err == nil && !stop() {
		sc.Close()
		err = ctx.Err()
	}
	if err != nil {
		return fail("no SSH handshake with the master at %s: %s", path, causeText(err))
	}
	n, ok := masterProtocol(string(sc.ServerVersion()))
	if !ok {
		sc.Close()
		return fail("%s is not a hoist master (%q)", path, printableText(sc.ServerVersion()))
	}
	return &masterConn{conn: conn, sc: sc, chans: chans, reqs: reqs, protocol: n}, masterLook{}
}

// info asks the master about itself.
func (mc *masterConn) info() (MasterInfo, error) {
	var info MasterInfo
	ok, payload, err := mc.sc.SendRequest(muxInfo, true, nil)
	if err == nil && !ok {
		err = errors.New("it refused the info request")
	}
	if err == nil {
		err = json.Unmarshal(payload, &info)
	}
	return info, err
}

// masterRequests passes a master's global requests on to x/crypto, but
// for muxLost, which goes to lost.
func masterRequests(reqs <-chan *ssh.Request, lost chan<- *ssh.Request) <-chan *ssh.Request {
	out := make(chan *ssh.Request)
	go func() {
		defer close(out)
		defer close(lost)
		for r := range reqs {
			if r.Type == muxLost {
				select {
				case lost <- r:
				default:
				}
				continue
			}
			out <- r
		}
	}()
	return out
}

func masterReached(info MasterInfo, path string) Reached {
	r := info.Reached
	r.Master = path
	return r
}

// masterProtocol reads the mux protocol number from a master's version
// string.
func masterProtocol(version string) (int, bool) {
	v, ok := strings.CutPrefix(version, muxVersionPrefix)
	if !ok {
		return 0, false
	}
	v, _, _ = strings.Cut(v, " ")
	n, err := strconv.Atoi(v)
	return n, err == nil
}

func protocolNumber() int {
	n, _ := strconv.Atoi(muxProtocol)
	return n
}

// printableText keeps a master's words on one line.
func printableText(b []byte) string {
	return strings.Map(func(r rune) rune {
		if r < ' ' || r == 0x7f {
			return ' '
		}
		return r
	}, string(b))
}
