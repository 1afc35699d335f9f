package transport

import (
	"context"
	"fmt"
	"io"
	"os"
)

// Uploader is implemented by transports that can also write files on the
// host: [SSH] through SFTP, [Local] directly.
type Uploader interface {
	// Upload writes everything r yields into a new file at path on the
	// host, mode 0600, and returns the bytes written. A path that exists
	// already, as a file or as a symlink, is an error and nothing is written
	// through it: the file is created exclusively (O_EXCL). When ctx ends
	// first, the upload stops and what was written stays where it is.
	Upload(ctx context.Context, path string, r io.Reader) (int64, error)
}

// Upload implements [Uploader].
func (l *Local) Upload(ctx context.Context, path string, r io.Reader) (int64, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return 0, err
	}
	// Whatever the umask.
	if err := f.Chmod(0o600); err != nil {
		f.Close()
		return 0, err
	}
	n, err := io.Copy(f, ctxReader{ctx, r})
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return n, err
}

// Upload implements [Uploader] with SFTP, at line rate: many write requests
// are in flight at once (File.ReadFromWithConcurrency). Writing through
// io.Copy, or from a wrapped reader through File.ReadFrom, would send one
// request at a time.
func (s *SSH) Upload(ctx context.Context, path string, r io.Reader) (int64, error) {
	c, err := s.SFTP()
	if err != nil {
		return 0, err
	}
	defer c.Close()
	stop := context.AfterFunc(ctx, func() { c.Close() })
	defer stop()
	f, err := c.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL)
	if err != nil {
		return 0, fmt.Errorf("sftp open %s: %w", path, err)
	}
	// pkg/sftp (v1.13.12) has no way to put a mode in the open request,
	// so the server creates the file with its default, 0666 less sshd's
	// umask (0644, typically). The handle is narrowed to 0600 (fsetstat,
	// so it is this very file) before a byte is written. Until then the file is empty; but another
	// user who opens it in that window, one round trip long, keeps
	// reading what follows through that descriptor. Mode bits on the file
	// cannot close that window: a directory other users cannot enter can.
	if err := f.Chmod(0o600); err != nil {
		f.Close()
		if ctx.Err() != nil {
			return 0, ctx.Err()
		}
		return 0, fmt.Errorf("sftp chmod 0600 %s: %w", path, err)
	}
	n, err := f.ReadFromWithConcurrency(ctxReader{ctx, r}, 64)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil && ctx.Err() != nil {
		err = ctx.Err()
	}
	return n, err
}

// ctxReader stops a copy when its context ends.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}
