package main

import (
	"bytes"
	"io"
	"sync"
)

// prefixWriter starts every line with a prefix, for output from several
// hosts at once.
type prefixWriter struct {
	mu     sync.Mutex
	w      io.Writer
	prefix []byte
	buf    []byte
}

func newPrefixWriter(w io.Writer, prefix string) *prefixWriter {
	return &prefixWriter{w: w, prefix: []byte(prefix)}
}

func (p *prefixWriter) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.buf = append(p.buf, b...)
	for {
		i := bytes.IndexByte(p.buf, '\n')
		if i < 0 {
			return len(b), nil
		}
		line := append(append([]byte{}, p.prefix...), p.buf[:i+1]...)
		p.w.Write(line)
		p.buf = p.buf[i+1:]
	}
}

// Flush writes a last line that had no newline.
func (p *prefixWriter) Flush() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.buf) > 0 {
		p.w.Write(append(append(append([]byte{}, p.prefix...), p.buf...), '\n'))
		p.buf = nil
	}
}
