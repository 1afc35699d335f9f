package remote

import (
	"bytes"
	"errors"
	"io"
	"sync"
	"time"
)

// maxVerdict bounds a verdict line; a longer one is a protocol error.
const maxVerdict = 64 << 10

// holdBack is how long output that might start a verdict is held back before
// it is delivered anyway, so a line of output is not kept waiting for its
// newline.
const holdBack = 30 * time.Millisecond

// demux passes a command's output through to out and hands every line of the
// form "\n<marker> <text>\n" to verdict instead. The newline that introduces a
// verdict belongs to it, so output that does not end with a newline is
// delivered unchanged.
//
// Output that could be the start of a verdict ("\n", "\n<mark") is held back
// for at most holdBack. If it is delivered and turns out to start a verdict
// after all, the verdict is still recognized; only that newline shows in the
// output. A verdict is written with one write, so this needs a verdict split
// across packets by a stall longer than holdBack.
type demux struct {
	mu      sync.Mutex
	pattern []byte // "\n" + marker + " "
	out     io.Writer
	verdict func(text string)
	buf     []byte // unprocessed bytes; outside a line, a prefix of pattern
	sent    int    // bytes at the start of buf already delivered early
	inLine  bool
	timer   *time.Timer
	err     error
}

func newDemux(marker string, out io.Writer, verdict func(string)) *demux {
	if out == nil {
		out = io.Discard
	}
	d := &demux{pattern: []byte("\n" + marker + " "), out: out, verdict: verdict}
	d.timer = time.AfterFunc(time.Hour, d.flushHeld)
	d.timer.Stop()
	return d
}

func (d *demux) Write(p []byte) (int, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.buf = append(d.buf, p...)
	for {
		if d.inLine {
			i := bytes.IndexByte(d.buf, '\n')
			if i < 0 {
				if len(d.buf) > maxVerdict {
					d.fail(errors.New("verdict line too long"))
					d.buf = d.buf[:0]
				}
				return len(p), nil
			}
			d.verdict(string(d.buf[:i]))
			d.consume(i + 1)
			d.inLine = false
			continue
		}
		if j := bytes.Index(d.buf, d.pattern); j >= 0 {
			d.emitUpTo(j)
			d.consume(j + len(d.pattern))
			d.inLine = true
			continue
		}
		keep := partialSuffix(d.buf, d.pattern)
		upto := len(d.buf) - keep
		d.emitUpTo(upto)
		d.consume(upto)
		if len(d.buf) > d.sent {
			d.timer.Reset(holdBack)
		}
		return len(p), nil
	}
}

// Close delivers what is held back. A verdict cut short is an error.
func (d *demux) Close() error {
	d.timer.Stop()
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.inLine {
		d.fail(errors.New("verdict line cut short"))
	} else {
		d.emitUpTo(len(d.buf))
	}
	d.buf, d.sent = nil, 0
	return d.err
}

func (d *demux) flushHeld() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.inLine {
		d.emitUpTo(len(d.buf))
		d.sent = len(d.buf)
	}
}

// emitUpTo delivers buf[:n] except what was delivered early.
func (d *demux) emitUpTo(n int) {
	if n <= d.sent {
		return
	}
	// A reader that went away must not stop the verdicts from being read.
	if _, err := d.out.Write(d.buf[d.sent:n]); err != nil {
		d.out = io.Discard
	}
}

func (d *demux) consume(n int) {
	d.buf = append(d.buf[:0], d.buf[n:]...)
	d.sent = max(0, d.sent-n)
}

func (d *demux) fail(err error) {
	if d.err == nil {
		d.err = err
	}
}

// partialSuffix is the length of the longest suffix of b that is a proper
// prefix of pattern: those bytes may start a verdict and are held back.
func partialSuffix(b, pattern []byte) int {
	n := min(len(b), len(pattern)-1)
	for ; n > 0; n-- {
		if bytes.HasSuffix(b, pattern[:n]) {
			return n
		}
	}
	return 0
}
