package transport

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"slices"
	"strings"
	"syscall"
	"time"

	"golang.org/x/crypto/ssh"
)

// handshakeAttempts is the first attempt plus three retries. Retries happen
// only when the host closed the connection before key exchange finished:
// that is how sshd sheds unauthenticated connections beyond MaxStartups,
// and nothing has been authenticated or run yet.
const handshakeAttempts = 4

// dial makes the one connection an SSH value lives on, and says which
// identity the host accepted (Reached.Key).
func dial(ctx context.Context, cfg SSHConfig, t sshTarget) (_ *activityConn, _ *ssh.Client, key string, _ error) {
	ids, err := loadIdentities(cfg)
	if err != nil {
		return nil, nil, "", err
	}
	defer ids.close() // agent keys are only needed to sign during authentication
	if cfg.Logger != nil {
		args := []any{"target", t.user + "@" + t.addr(), "identities", strings.Join(ids.tried, ", ")}
		skipped := slices.Clone(ids.notes)
		for _, f := range ids.locked {
			skipped = append(skipped, f+" (passphrase-protected)")
		}
		if len(skipped) > 0 {
			args = append(args, "skipped", strings.Join(skipped, ", "))
		}
		cfg.Logger.Debug("dialing", append(args, "known_hosts", cfg.KnownHostsFile)...)
	}
	kh, err := loadKnownHosts(cfg)
	if err != nil {
		return nil, nil, "", err
	}
	for attempt := 1; ; attempt++ {
		conn, client, retry, err := dialOnce(ctx, cfg, t, ids, kh)
		if err == nil {
			return conn, client, ids.used.get(), nil
		}
		if !retry {
			return nil, nil, "", err
		}
		if attempt == handshakeAttempts {
			return nil, nil, "", dialErr(ErrHandshake, err,
				"the host closed the connection before the ssh key exchange, %d times; "+
					"the host may be overloaded (sshd MaxStartups) or the port may not speak SSH, try again later",
				attempt)
		}
		if err := sleepCtx(ctx, backoff(attempt)); err != nil {
			return nil, nil, "", interrupted(err)
		}
	}
}

// dialOnce makes one TCP connection and SSH handshake. retry reports that
// the failure is one a new attempt may cure.
func dialOnce(ctx context.Context, cfg SSHConfig, t sshTarget, ids *identities, kh *knownHosts) (
	_ *activityConn, _ *ssh.Client, retry bool, err error,
) {
	addr := t.addr()
	raw, err := dialTCP(ctx, cfg, addr)
	if err != nil {
		return nil, nil, false, err
	}
	// A variable of its own, not a result: the AfterFunc below may read
	// it while this function returns.
	conn := newActivityConn(raw)
	check, err := newHostKeyCheck(cfg, kh, addr)
	if err != nil {
		raw.Close()
		return nil, nil, false, err
	}
	config := &ssh.ClientConfig{
		User:              t.user,
		Auth:              ids.authMethods(),
		HostKeyCallback:   check.callback,
		HostKeyAlgorithms: check.algorithms(),
	}

	// x/crypto's own Timeout covers only its dial; a peer that accepts and
	// then says nothing would hang NewClientConn forever without this.
	deadline := time.Now().Add(cfg.HandshakeTimeout)
	_ = conn.SetDeadline(deadline)
	ids.setDeadline(deadline)
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	c, chans, reqs, err := ssh.NewClientConn(conn, addr, config)
	if !stop() {
		if err == nil {
			c.Close()
		}
		return nil, nil, false, interrupted(ctx.Err())
	}
	if err != nil {
		retry, err = handshakeError(err, deadline, cfg, t, check, ids)
		return nil, nil, retry, err
	}
	_ = conn.SetDeadline(time.Time{})
	return conn, ssh.NewClient(c, chans, reqs), false, nil
}

// handshakeError turns a failed ssh.NewClientConn into one of the dial
// errors.
func handshakeError(err error, deadline time.Time, cfg SSHConfig, t sshTarget, check *hostKeyCheck, ids *identities) (retry bool, _ error) {
	verified, refusal := check.result()
	switch {
	case refusal != nil:
		return false, refusal
	case isTimeout(err) || !time.Now().Before(deadline):
		return false, dialErr(ErrHandshakeTimeout, err,
			"ssh handshake did not finish within %s; check that the port speaks SSH and the network is not filtering it",
			cfg.HandshakeTimeout)
	case verified && strings.Contains(strings.ToLower(err.Error()), "authenticat"):
		return false, ids.authError(t.user, err)
	}
	why := causeText(err)
	switch {
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
		why = "the host closed the connection"
	case errors.Is(err, syscall.ECONNRESET):
		why = "the host reset the connection"
	default:
		return false, dialErr(ErrHandshake, err, "ssh handshake failed: %s; check that the port speaks SSH", why)
	}
	if verified {
		// Past key exchange, a dropped connection is the host's considered
		// answer (for example sshd's MaxAuthTries), not load shedding.
		return false, dialErr(ErrHandshake, err,
			"ssh handshake failed: %s during authentication; check the host's sshd log", why)
	}
	return true, dialErr(ErrHandshake, err, "ssh handshake failed: %s; check that the port speaks SSH", why)
}

func dialTCP(ctx context.Context, cfg SSHConfig, addr string) (net.Conn, error) {
	dctx, cancel := context.WithTimeout(ctx, cfg.DialTimeout)
	defer cancel()
	var conn net.Conn
	var err error
	if cfg.Dialer != nil {
		conn, err = cfg.Dialer(dctx, "tcp", addr)
	} else {
		d := net.Dialer{KeepAliveConfig: net.KeepAliveConfig{Enable: true}}
		conn, err = d.DialContext(dctx, "tcp", addr)
	}
	var jump *JumpError
	var said *DialError
	switch {
	case err == nil:
		return conn, nil
	case ctx.Err() != nil:
		return nil, interrupted(ctx.Err())
	case cfg.Dialer != nil && (errors.As(err, &jump) || errors.As(err, &said)):
		// A proxy that says what failed (a jump host, for one) is not
		// the host refusing the connection.
		return nil, err
	default:
		return nil, unreachable(err, cfg.DialTimeout)
	}
}

// unreachable describes a failed TCP dial without naming the host: the
// caller prefixes the target. The resolved address is not a name, and
// tells which of several addresses failed.
func unreachable(err error, timeout time.Duration) error {
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) {
		why := dnsErr.Err
		if dnsErr.IsTimeout {
			why = "lookup timed out"
		}
		return dialErr(ErrUnreachable, err, "cannot resolve the host name: %s; check the host name and the DNS settings", why)
	}
	where := "cannot connect"
	var opErr *net.OpError
	if errors.As(err, &opErr) && opErr.Addr != nil {
		where += " to " + opErr.Addr.String()
	}
	why, todo := causeText(err), "check the host name and port, and that sshd is running"
	var errno syscall.Errno
	switch {
	case isTimeout(err):
		why = "no answer within " + timeout.String()
		todo = "check the host name and port, and that no firewall drops the connection"
	case errors.As(err, &errno):
		why = errno.Error()
	}
	return dialErr(ErrUnreachable, err, "%s: %s; %s", where, why, todo)
}

// causeText renders an underlying error for a "<what>; <what to do>"
// message: without x/crypto's prefixes, on one line, and without
// semicolons of its own.
func causeText(err error) string {
	s := err.Error()
	for _, p := range []string{"ssh: handshake failed: ", "ssh: ", "knownhosts: "} {
		s = strings.TrimPrefix(s, p)
	}
	return strings.NewReplacer(";", ",", "\n", " ", "\r", " ").Replace(s)
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.Is(err, os.ErrDeadlineExceeded) || errors.Is(err, context.DeadlineExceeded) ||
		errors.As(err, &ne) && ne.Timeout()
}

func interrupted(err error) error {
	return fmt.Errorf("connecting abandoned: %w", err)
}

// backoff spreads retries so that clients shed together do not return
// together.
func backoff(attempt int) time.Duration {
	base := 100 * time.Millisecond << (attempt - 1)
	return base/2 + rand.N(base)
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
