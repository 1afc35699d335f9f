package transport

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/pkg/sftp"
	"golang.org/x/crypto/ssh"
)

// SSHConfig describes how to reach one host. The zero value of every field
// but Target has a sensible default.
type SSHConfig struct {
	// Target is "[user@]host[:port]". IPv6 addresses take brackets when a
	// user or port is given: "[::1]:2222", "bob@[::1]:2222". The port
	// defaults to 22.
	Target string
	// User overrides the user in Target. Default: Target's user, else the
	// current OS user.
	User string
	// IdentityFiles are private key files to offer (-i FILE). Empty means
	// ConfigIdentityFiles, and when that is empty too, those of
	// ~/.ssh/id_ed25519, id_ecdsa and id_rsa that exist. A listed
	// file that is missing or unreadable makes DialSSH fail with
	// ErrIdentity; a passphrase-protected one is skipped and mentioned in
	// the ErrAuth message should authentication fail.
	IdentityFiles []string
	// NoAgent stops DialSSH from also offering the keys of the ssh-agent at
	// SSH_AUTH_SOCK.
	NoAgent bool
	// KnownHostsFile is the user's known_hosts file: read first, and the
	// one AcceptNewHostKey records keys in. Default ~/.ssh/known_hosts. A
	// missing file holds no keys. KnownHostsFiles and GlobalKnownHostsFiles
	// below are read too.
	KnownHostsFile string
	// AcceptNewHostKey records the key of a host that no known_hosts file
	// has a key for (creating KnownHostsFile 0600 and its directory 0700 as
	// needed); of a host that offers a certificate, the plain key inside
	// it. A key that differs from a recorded one is refused regardless,
	// and so is a host known only through @cert-authority lines whose
	// certificate does not pass.
	AcceptNewHostKey bool
	// DialTimeout bounds the TCP connect. Default 15s.
	DialTimeout time.Duration
	// HandshakeTimeout bounds the SSH handshake, authentication included,
	// of each connection attempt. Default 15s.
	HandshakeTimeout time.Duration
	// KeepaliveInterval is how often an idle connection is probed with a
	// keepalive@openssh.com request. Default 15s; negative disables
	// keepalives, and then a silently dead link can block Run forever.
	KeepaliveInterval time.Duration
	// Logger, when set, receives debug records of the connection: the
	// target as resolved, the identities offered, the time the connection
	// took and its round-trip time (measured once, with a keepalive
	// request, only when a logger is set).
	Logger *slog.Logger
	// KeepaliveMaxMissed is how many consecutive intervals may pass with a
	// probe outstanding and nothing at all received from the host before
	// the connection is closed, making every running Run return
	// ErrUnknownOutcome. Default 3.
	KeepaliveMaxMissed int
	// MaxSessions bounds the commands running at once on the connection;
	// further Runs wait for a slot. Default 8, below OpenSSH's default
	// MaxSessions of 10 so that an upload's first SFTP stream still finds
	// room. An upload's further streams are not counted: the host refuses
	// those it has no room for, and the upload goes on with the others.
	MaxSessions int
	// Dialer, when set, replaces the TCP dial (for proxies and tests). The
	// DialTimeout still applies through ctx.
	Dialer func(ctx context.Context, network, addr string) (net.Conn, error)

	// What an OpenSSH configuration adds (ssh_config(5); see ResolveConfig).

	// Name is what messages call the host: the name the user gave (an
	// alias of the configuration). Default user@host:port.
	Name string
	// Via says how the host is reached when not directly: "ProxyJump
	// a,b" or "ProxyCommand …", tokens expanded (set by Resolved.Apply,
	// for reports).
	Via string

	// IdentitiesOnly offers only IdentityFiles (and their certificates),
	// and of the agent's keys only those whose public key is one of them.
	IdentitiesOnly bool
	// IdentityAgent is the agent socket to use instead of SSH_AUTH_SOCK,
	// as ssh takes IdentityAgent once it has expanded ~, %-tokens and
	// ${VAR}: a path, "$VAR" for the path in an environment variable,
	// "SSH_AUTH_SOCK" for the environment's, or "none" for no agent.
	IdentityAgent string
	// CertificateFiles are OpenSSH user certificates to offer with the
	// matching private keys; a key's "<file>-cert.pub" is offered too. One
	// that is missing or not a usable user certificate makes DialSSH fail
	// with ErrIdentity (an expired one is skipped).
	CertificateFiles []string
	// ConfigIdentityFiles and ConfigCertificateFiles are the IdentityFile
	// and CertificateFile entries of the OpenSSH configuration, expanded
	// (set by Resolved.Apply). ConfigIdentityFiles are offered when
	// IdentityFiles is empty, instead of the default keys, as ssh offers
	// them; "none" among them stands for no file. A file of either that is
	// missing or unusable is skipped, as ssh skips it, and named with the
	// reason in the ErrAuth message and the debug log.
	ConfigIdentityFiles, ConfigCertificateFiles []string
	// Passphrase, when set, is asked for the passphrase of an encrypted
	// identity file (a terminal prompt); without it such a key is skipped
	// and named in the authentication error.
	Passphrase func(file string) ([]byte, error)
	// KnownHostsFiles are further user known_hosts files (after
	// KnownHostsFile), GlobalKnownHostsFiles the system-wide ones, read
	// only (default /etc/ssh/ssh_known_hosts and ssh_known_hosts2).
	KnownHostsFiles, GlobalKnownHostsFiles []string
	// HostKeyAlias is the name host keys are looked up and recorded under
	// instead of the host and port, as OpenSSH uses it: as written (in
	// lower case), matched whole against known_hosts patterns and hashed
	// entries, whatever it looks like ("[web]:2222", "web:2222", "::1").
	HostKeyAlias string
	// HashKnownHosts records accepted keys with hashed host names.
	HashKnownHosts bool
	// InsecureIgnoreHostKey accepts any host key (StrictHostKeyChecking
	// no), with a warning on the logger; a changed key is still refused.
	InsecureIgnoreHostKey bool
	// Control is how the configuration shares connections between
	// commands (ControlPath, ControlMaster, ControlPersist), for
	// DialShared; DialSSH ignores it.
	Control Control
}

const (
	defaultDialTimeout       = 15 * time.Second
	defaultHandshakeTimeout  = 15 * time.Second
	defaultKeepaliveInterval = 15 * time.Second
	defaultKeepaliveMaxMiss  = 3
	defaultMaxSessions       = 8
)

// withDefaults fills in the defaults documented on SSHConfig.
func (c SSHConfig) withDefaults() (SSHConfig, error) {
	if c.DialTimeout <= 0 {
		c.DialTimeout = defaultDialTimeout
	}
	if c.HandshakeTimeout <= 0 {
		c.HandshakeTimeout = defaultHandshakeTimeout
	}
	if c.KeepaliveInterval == 0 {
		c.KeepaliveInterval = defaultKeepaliveInterval
	}
	if c.KeepaliveMaxMissed <= 0 {
		c.KeepaliveMaxMissed = defaultKeepaliveMaxMiss
	}
	if c.MaxSessions <= 0 {
		c.MaxSessions = defaultMaxSessions
	}
	if c.KnownHostsFile == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return c, fmt.Errorf("cannot find the known_hosts file: %w", err)
		}
		c.KnownHostsFile = filepath.Join(home, ".ssh", "known_hosts")
	}
	return c, nil
}

// SSH runs commands on one host over a single SSH connection, opening one
// session per command. It is safe for concurrent use.
type SSH struct {
	target   string // user@host:port
	client   *ssh.Client
	conn     *activityConn
	sessions chan struct{} // one token per running session

	closeOnce sync.Once
	closeErr  error
	done      chan struct{} // closed by Close
	connDone  chan struct{} // closed when the connection is gone, for whatever reason

	rtt time.Duration // measured once, with a logger

	reached Reached

	mu       sync.Mutex
	lostWhy  error // why the connection was closed by us, for Run's errors
	lostOnce sync.Once
	spare    chan *sftp.Client // an upload's first stream, opened ahead (Prepare)

	// masterDone, on a connection to a master, is closed once the master's
	// last word (why it ended, if it said) has been taken in.
	masterDone chan struct{}
}

var _ Transport = (*SSH)(nil)

// DialSSH connects and authenticates to cfg.Target. Errors:
//   - ErrIdentity: a file in cfg.IdentityFiles is missing or not a key;
//   - ErrKnownHosts: cfg.KnownHostsFile cannot be read or written;
//   - ErrUnreachable: the TCP connection failed (or, through a ProxyJump,
//     the last jump host could not make it, or the chain is a loop);
//   - ErrHandshakeTimeout: the SSH handshake did not finish in time;
//   - ErrHandshake: the peer broke off the handshake (retried first, up to
//     three times, when it closed the connection before the key exchange,
//     which is how sshd's MaxStartups sheds load);
//   - ErrAuth: every key was refused;
//   - ErrHostKey, as a *HostKeyError: unknown, changed or revoked host key;
//   - a *JumpError when a jump host of a ProxyJump chain failed: it names
//     the hop and wraps what dialling it returned, one of these errors;
//   - ctx.Err(), wrapped, when ctx ends first;
//   - a plain error for a malformed cfg.Target.
//
// All but the last two are *DialError, *HostKeyError or *JumpError.
func DialSSH(ctx context.Context, cfg SSHConfig) (*SSH, error) {
	start := time.Now()
	cfg, t, err := cfg.target()
	if err != nil {
		return nil, err
	}
	conn, client, key, err := dial(ctx, cfg, t)
	if err != nil {
		return nil, err
	}
	reached := Reached{User: t.user, Addr: t.addr(), Via: cfg.Via, Identities: cfg.IdentityFilesToTry(), Key: key}
	return newSSH(cfg, t, conn, client, reached, start), nil
}

// target is cfg with its defaults, and the target it names, its user
// filled in.
func (cfg SSHConfig) target() (SSHConfig, sshTarget, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return cfg, sshTarget{}, err
	}
	t, err := parseTarget(cfg.Target)
	if err != nil {
		return cfg, t, err
	}
	if cfg.User != "" {
		t.user = cfg.User
	}
	if t.user == "" {
		if t.user, err = currentUser(); err != nil {
			return cfg, t, err
		}
	}
	return cfg, t, nil
}

// newSSH is the SSH value on a connection made (directly or to a master)
// since start.
func newSSH(cfg SSHConfig, t sshTarget, conn *activityConn, client *ssh.Client, reached Reached, start time.Time) *SSH {
	name := t.user + "@" + t.addr()
	if cfg.Name != "" {
		name = cfg.Name
	}
	s := &SSH{
		reached:  reached,
		target:   name,
		client:   client,
		conn:     conn,
		sessions: make(chan struct{}, cfg.MaxSessions),
		done:     make(chan struct{}),
		connDone: make(chan struct{}),
	}
	go func() {
		_ = client.Wait()
		close(s.connDone)
	}()
	if cfg.KeepaliveInterval > 0 {
		go s.keepalive(cfg.KeepaliveInterval, cfg.KeepaliveMaxMissed)
	}
	if cfg.Logger != nil {
		s.rtt, _ = s.RoundTrip(2)
		args := []any{"target", s.target, "took", time.Since(start).Round(time.Millisecond),
			"rtt", s.rtt.Round(10 * time.Microsecond), "key", reached.Key}
		if reached.Master != "" {
			args = append(args, "master", reached.Master)
		}
		cfg.Logger.Debug("connected", args...)
	}
	return s
}

// RTT is the connection's round-trip time, measured once when it was made
// with a logger; zero when it was not measured.
func (s *SSH) RTT() time.Duration { return s.rtt }

// Ping measures one round trip on the connection now: a global request the
// server answers at once (OpenSSH's keepalive).
func (s *SSH) Ping() (time.Duration, error) {
	begin := time.Now()
	if _, _, err := s.client.SendRequest("keepalive@openssh.com", true, nil); err != nil {
		return 0, err
	}
	return time.Since(begin), nil
}

// RoundTrip is the connection's round-trip time: the fastest of n pings,
// one after another. One alone can overstate it by far: the first request
// on a new connection also waits for the server to finish setting up the
// login after authentication (OpenSSH's sshd: a few milliseconds on a
// loopback where a round trip is 0.2 ms, and 40 ms more where the client
// delays its acknowledgements, see quickAcker).
func (s *SSH) RoundTrip(n int) (time.Duration, error) {
	var best time.Duration
	for i := range max(n, 1) {
		d, err := s.Ping()
		if err != nil {
			if i > 0 {
				return best, nil
			}
			return 0, err
		}
		if i == 0 || d < best {
			best = d
		}
	}
	return best, nil
}

// Target implements [Transport]: "user@host:port".
func (s *SSH) Target() string { return s.target }

// Client returns the underlying connection, for SFTP. Sessions opened on it
// do not count against MaxSessions.
func (s *SSH) Client() *ssh.Client { return s.client }

// Reached is how a connection was made, for reports (hoist doctor).
type Reached struct {
	User, Addr string
	// Via is "" for a direct connection, else "ProxyJump …" or
	// "ProxyCommand …".
	Via string
	// Identities are the identity files that were to be offered
	// (SSHConfig.IdentityFilesToTry).
	Identities []string
	// Key is the identity the host accepted: a file (or a certificate
	// file), or "ssh-agent key SHA256:…" for a key only the agent holds.
	Key string
	// Master is the socket of the master whose connection this is (see
	// DialShared), "" for a connection of its own.
	Master string `json:",omitempty"`
}

// Reached says how this connection was made.
func (s *SSH) Reached() Reached { return s.reached }

// Close implements [Transport]. Commands still running on the host see
// their client go away; Runs in progress return ErrUnknownOutcome.
func (s *SSH) Close() error {
	s.closeOnce.Do(func() {
		close(s.done)
		s.closeErr = s.client.Close()
		if errors.Is(s.closeErr, net.ErrClosed) {
			s.closeErr = nil // already closed by the keepalive
		}
	})
	return s.closeErr
}

// lose closes the connection because it is no longer usable, remembering
// why so that Run can say so.
func (s *SSH) lose(why error) {
	s.lostOnce.Do(func() {
		s.mu.Lock()
		s.lostWhy = why
		s.mu.Unlock()
		_ = s.client.Close()
	})
}

// awaitMaster gives a master's last word, which comes just before it
// closes the connection, time to be taken in, so that an error can say why
// the master ended: only when the connection is gone, or going.
func (s *SSH) awaitMaster() {
	if s.masterDone == nil {
		return
	}
	select {
	case <-s.connDone:
	case <-time.After(100 * time.Millisecond):
		return
	}
	select {
	case <-s.masterDone:
	case <-time.After(time.Second):
	}
}

func (s *SSH) lostReason() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lostWhy
}
