package transport

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/pkg/sftp"
	"golang.org/x/crypto/ssh"
)

// SFTP opens an SFTP session on the connection, set up for line-rate
// uploads: concurrent writes, with up to 64 requests in flight per file.
// Write into its files with File.WriteAt of large buffers or
// File.ReadFromWithConcurrency (or io.Copy from a plain *os.File): wrapping
// the source in another reader makes io.Copy fall back to one request at a
// time, which at 10 ms of latency runs near 3 MiB/s. A host that has as
// many sessions open on the connection as it allows is asked again for a
// moment (whileFull).
func (s *SSH) SFTP() (*sftp.Client, error) {
	return s.openSFTP(context.Background(), true)
}

// openSFTP is SFTP, asking again while the host's sessions are full only
// when wait is set.
func (s *SSH) openSFTP(ctx context.Context, wait bool) (*sftp.Client, error) {
	open := func() (*sftp.Client, error) {
		return sftp.NewClient(s.client,
			sftp.UseConcurrentWrites(true),
			sftp.MaxConcurrentRequestsPerFile(64),
		)
	}
	var c *sftp.Client
	var err error
	if wait {
		c, err = whileFull(ctx, open)
	} else {
		c, err = open()
	}
	if err != nil {
		return nil, fmt.Errorf("sftp: %w; check that the host's sshd has the sftp subsystem enabled", err)
	}
	return c, nil
}

// SessionsFull reports whether err is a host's refusal of a session
// because the connection has as many open as its sshd allows (OpenSSH's
// MaxSessions answers "open failed", reason "connect failed"). One of this
// connection's own sessions that just closed frees its place a moment
// later, once the host has reaped it.
func SessionsFull(err error) bool {
	var oe *ssh.OpenChannelError
	return errors.As(err, &oe) && (oe.Reason == ssh.ConnectionFailed || oe.Reason == ssh.ResourceShortage)
}

// whileFull calls open until it succeeds, fails for another reason than
// SessionsFull, or about 1.3 s of backoff have passed (or ctx ended).
func whileFull[T any](ctx context.Context, open func() (T, error)) (T, error) {
	delay := 10 * time.Millisecond
	for {
		v, err := open()
		if err == nil || !SessionsFull(err) || delay > 640*time.Millisecond {
			return v, err
		}
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return v, err
		case <-t.C:
		}
		delay *= 2
	}
}
