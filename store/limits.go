package store

import (
	"context"
	"fmt"
	"io"
	"strconv"
)

// DefaultMaxSize is the largest runtime Open and OpenReader read when
// OpenOptions.MaxSize is zero: 32 GiB, the sum of its files' sizes.
const DefaultMaxSize int64 = 32 << 30

// claim counts a file of size bytes at p towards the runtime's size, and
// refuses it before a byte of it is read when that passes the limit: an
// archive declares its entries' sizes (a sparse entry its logical size,
// holes included; a zip its uncompressed one), and a few KiB can declare
// far more than a workstation should hash.
func (a *Artifact) claim(p string, size int64) error {
	limit := a.maxSize
	if limit <= 0 {
		limit = DefaultMaxSize
	}
	a.claimed += size
	if size < 0 || size > limit {
		return fmt.Errorf("%w: %s: %s is %s, over the limit of %s; push --max-size raises it", ErrArtifact, a.Source, p, bytesize(size), bytesize(limit))
	}
	if a.claimed > limit || a.claimed < 0 {
		return fmt.Errorf("%w: %s: its files come to %s by %s, over the limit of %s; push --max-size raises it", ErrArtifact, a.Source, bytesize(a.claimed), p, bytesize(limit))
	}
	return nil
}

// bytesize says n in bytes, and in GiB, MiB or KiB when that is shorter.
func bytesize(n int64) string {
	b := strconv.FormatInt(n, 10) + " bytes"
	for _, u := range []struct {
		shift uint
		name  string
	}{{40, "TiB"}, {30, "GiB"}, {20, "MiB"}, {10, "KiB"}} {
		if n >= 1<<u.shift {
			return strconv.FormatFloat(float64(n)/float64(int64(1)<<u.shift), 'f', 1, 64) + " " + u.name + " (" + b + ")"
		}
	}
	return b
}

// cancelable reads r in a goroutine of its own, so that a read that blocks
// (standard input from a producer that stalled) does not hold up a
// cancellation: once ctx is done, Read returns its error at once. stop
// ends the goroutine after its read in progress, if any.
func cancelable(ctx context.Context, r io.Reader) (_ io.Reader, stop func()) {
	c := &chanReader{ctx: ctx, ch: make(chan chunk), free: make(chan []byte, 2), done: make(chan struct{})}
	for range 2 {
		c.free <- make([]byte, 1<<16)
	}
	go func() {
		for {
			var b []byte
			select {
			case b = <-c.free:
			case <-c.done:
				return
			}
			n, err := r.Read(b)
			select {
			case c.ch <- chunk{b, n, err}:
			case <-c.done:
				return
			}
			if err != nil {
				return
			}
		}
	}()
	return c, func() { close(c.done) }
}

type chunk struct {
	b   []byte
	n   int
	err error
}

type chanReader struct {
	ctx  context.Context
	ch   chan chunk
	free chan []byte
	done chan struct{}
	cur  chunk // what the last chunk has left, from off
	off  int
	err  error
}

func (c *chanReader) Read(p []byte) (int, error) {
	for c.off == c.cur.n {
		if c.err != nil {
			return 0, c.err
		}
		if c.cur.b != nil {
			c.free <- c.cur.b
			c.cur.b = nil
		}
		select {
		case <-c.ctx.Done():
			c.err = c.ctx.Err()
			return 0, c.err
		case c.cur = <-c.ch:
			c.off, c.err = 0, c.cur.err
		}
	}
	n := copy(p, c.cur.b[c.off:c.cur.n])
	c.off += n
	return n, nil
}
