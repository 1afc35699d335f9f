package transport

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"
)

// proxyCommandDialer runs an OpenSSH ProxyCommand on this machine and uses
// its standard input and output as the connection, as ssh does: that is how
// hosts behind AWS SSM, cloudflared or a corporate gateway are reached. The
// command runs through /bin/sh -c with exec, in a process group of its
// own; closing the connection ends it. Its standard error goes to hoist's.
func proxyCommandDialer(command string) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, _, addr string) (net.Conn, error) {
		inR, inW, err := os.Pipe()
		if err != nil {
			return nil, err
		}
		outR, outW, err := os.Pipe()
		if err != nil {
			inR.Close()
			inW.Close()
			return nil, err
		}
		cmd := exec.Command("/bin/sh", "-c", "exec "+command)
		cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, os.Stderr
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if err := cmd.Start(); err != nil {
			for _, f := range []*os.File{inR, inW, outR, outW} {
				f.Close()
			}
			return nil, dialErr(ErrUnreachable, err, "ProxyCommand %q could not start: %s; check the command", command, causeText(err))
		}
		inR.Close()
		outW.Close()
		c := &cmdConn{in: inW, out: outR, cmd: cmd, addr: addr, exited: make(chan struct{})}
		go func() {
			_ = cmd.Wait()
			close(c.exited)
		}()
		return c, nil
	}
}

// cmdConn is a ProxyCommand's standard input and output as a net.Conn.
type cmdConn struct {
	in     *os.File // the command's stdin: what we write
	out    *os.File // the command's stdout: what we read
	cmd    *exec.Cmd
	addr   string
	exited chan struct{}
	once   sync.Once
}

func (c *cmdConn) Read(p []byte) (int, error)  { return c.out.Read(p) }
func (c *cmdConn) Write(p []byte) (int, error) { return c.in.Write(p) }

// Close closes the command's input (most proxies end on EOF) and ends the
// command's process group if it has not ended a second later.
func (c *cmdConn) Close() error {
	c.once.Do(func() {
		c.in.Close()
		select {
		case <-c.exited:
		case <-time.After(time.Second):
			_ = syscall.Kill(-c.cmd.Process.Pid, syscall.SIGTERM)
		}
		c.out.Close()
	})
	return nil
}

func (c *cmdConn) LocalAddr() net.Addr  { return cmdAddr("proxycommand") }
func (c *cmdConn) RemoteAddr() net.Addr { return cmdAddr(c.addr) }

func (c *cmdConn) SetDeadline(t time.Time) error {
	return errors.Join(c.in.SetDeadline(t), c.out.SetDeadline(t))
}
func (c *cmdConn) SetReadDeadline(t time.Time) error  { return c.out.SetDeadline(t) }
func (c *cmdConn) SetWriteDeadline(t time.Time) error { return c.in.SetDeadline(t) }

type cmdAddr string

func (a cmdAddr) Network() string { return "proxycommand" }
func (a cmdAddr) String() string  { return string(a) }

// jumpHop is one host of a ProxyJump chain: the name to resolve, and the
// user and port the chain names for it ("" for none).
type jumpHop struct {
	host, user, port string
}

// parseJump reads a ProxyJump chain as ssh -G prints it,
// [user@]host[:port] or ssh://[user@]host[:port], comma-separated, and
// expands the tokens of each hop's user and host (ssh puts them into the
// ProxyCommand it makes of the chain, which expands them).
func parseJump(chain string, tok tokens) ([]jumpHop, error) {
	var hops []jumpHop
	for _, h := range strings.Split(chain, ",") {
		h = strings.TrimSpace(h)
		t, err := parseTarget(h)
		if err == nil {
			t.host, err = tok.expand(t.host, proxyTokens, false)
		}
		if err == nil {
			t.user, err = tok.expand(t.user, proxyTokens, false)
		}
		if err == nil {
			err = errors.Join(checkName("host name", t.host), checkName("user name", t.user))
		}
		if err != nil {
			return nil, fmt.Errorf("ProxyJump %q: %w; fix the chain (ssh refuses it too)", chain, err)
		}
		// A hop that names no port takes its own configuration's,
		// however its host is written ([::1], 10.0.0.1, a name).
		hop := jumpHop{host: t.host, user: t.user}
		if explicitPort(h) {
			hop.port = t.port
		}
		hops = append(hops, hop)
	}
	return hops, nil
}

// renderJump writes a chain as ProxyJump takes it.
func renderJump(hops []jumpHop) string {
	var parts []string
	for _, h := range hops {
		s := h.host
		if h.port != "" {
			s = net.JoinHostPort(h.host, h.port)
		} else if strings.Contains(s, ":") {
			s = "[" + s + "]"
		}
		if h.user != "" {
			s = h.user + "@" + s
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, ",")
}

// proxyJumpDialer reaches the target, self (the name it was given, resolved
// with opts), through a ProxyJump chain: the first hop is resolved
// and dialled like any host (its own ProxyJump or ProxyCommand included),
// each next hop and finally the target through the previous hop's
// connection (a direct-tcpip channel, as ssh -J does). Each hop is checked
// against known_hosts and authenticated with base's flags and its own
// configuration. A hop's failure comes back as a *JumpError naming it; a
// hop whose own ProxyJump leads back to a host being reached is a loop,
// reported at once.
func proxyJumpDialer(chain []jumpHop, base SSHConfig, opts ConfigOptions, self string) (func(ctx context.Context, network, addr string) (net.Conn, error), error) {
	var hops []ConfigOptions
	var names []string
	for _, h := range chain {
		hops = append(hops, ConfigOptions{File: opts.File, User: h.user, Port: h.port})
		names = append(names, h.host)
	}
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		var clients []*SSH
		fail := func(err error) (net.Conn, error) {
			for i := len(clients) - 1; i >= 0; i-- {
				clients[i].Close()
			}
			return nil, err
		}
		path, _ := ctx.Value(jumpPathKey{}).([]jumpStep)
		if len(path) == 0 {
			path = []jumpStep{{hopID(self, opts), self}}
		}
		for i, o := range hops {
			id := hopID(names[i], o)
			if i == 0 { // only the first hop is reached by its own configuration
				if j := slices.IndexFunc(path, func(s jumpStep) bool { return s.id == id }); j >= 0 {
					var loop []string
					for _, s := range append(path[j:], jumpStep{id, names[i]}) {
						loop = append(loop, s.name)
					}
					return fail(dialErr(ErrUnreachable, nil, "ProxyJump loop (%s): each host is reached through the next, "+
						"back to %s; fix ProxyJump in the OpenSSH configuration", strings.Join(loop, " -> "), names[i]))
				}
			}
			hopCtx := context.WithValue(ctx, jumpPathKey{}, append(slices.Clip(path), jumpStep{id, names[i]}))
			r, err := ResolveConfig(hopCtx, names[i], o)
			if err != nil {
				return fail(&JumpError{Host: names[i], Err: err})
			}
			cfg := SSHConfig{KnownHostsFile: base.KnownHostsFile, AcceptNewHostKey: base.AcceptNewHostKey,
				NoAgent: base.NoAgent, Passphrase: base.Passphrase, Logger: base.Logger,
				DialTimeout: base.DialTimeout, HandshakeTimeout: base.HandshakeTimeout}
			if i > 0 {
				prev := clients[i-1]
				cfg.Dialer = func(ctx context.Context, network, addr string) (net.Conn, error) {
					return prev.Client().DialContext(ctx, network, addr)
				}
			}
			if err := r.Apply(&cfg, names[i], o); err != nil {
				return fail(&JumpError{Host: names[i], Err: err})
			}
			c, err := DialSSH(hopCtx, cfg)
			if err != nil {
				return fail(&JumpError{Host: names[i], Err: err})
			}
			clients = append(clients, c)
		}
		last := names[len(names)-1]
		conn, err := clients[len(clients)-1].Client().DialContext(ctx, network, addr)
		if err != nil {
			return fail(dialErr(ErrUnreachable, err, "jump host %s cannot reach %s: %s; check the host name and port, "+
				"and that sshd is running there", last, addr, causeText(err)))
		}
		return &jumpConn{Conn: conn, hops: clients}, nil
	}, nil
}

// hopID tells hosts apart for the loop check: a name resolved with the
// same options resolves the same way.
func hopID(name string, o ConfigOptions) string {
	return strings.Join(append([]string{name, o.File}, o.argv("", "")...), "\x00")
}

// jumpPathKey is the context key of the jump hosts being reached, the
// target first: the steps that led to the hop being dialled.
type jumpPathKey struct{}

type jumpStep struct{ id, name string }

// JumpError is the error DialSSH returns when a jump host of a ProxyJump
// chain failed: Host is the hop as the chain names it, Err what dialling
// it returned (errors.Is sees through to its kind: ErrAuth, ErrHostKey,
// ErrUnreachable, ...).
type JumpError struct {
	Host string
	Err  error
}

func (e *JumpError) Error() string { return "jump host " + e.Host + ": " + e.Err.Error() }
func (e *JumpError) Unwrap() error { return e.Err }

// jumpConn is a connection through jump hosts; closing it closes them.
type jumpConn struct {
	net.Conn
	hops []*SSH
	once sync.Once

	mu    sync.Mutex
	timer *time.Timer
}

func (c *jumpConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() {
		for i := len(c.hops) - 1; i >= 0; i-- {
			c.hops[i].Close()
		}
	})
	return err
}

// SetDeadline: an SSH channel has no deadlines of its own, so a deadline
// that passes closes the connection (the handshake's bound is all hoist
// uses them for).
func (c *jumpConn) SetDeadline(t time.Time) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.timer != nil {
		c.timer.Stop()
		c.timer = nil
	}
	if !t.IsZero() {
		c.timer = time.AfterFunc(time.Until(t), func() { c.Close() })
	}
	return nil
}
func (c *jumpConn) SetReadDeadline(t time.Time) error  { return c.SetDeadline(t) }
func (c *jumpConn) SetWriteDeadline(t time.Time) error { return c.SetDeadline(t) }
