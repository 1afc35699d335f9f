package main

import (
	"fmt"
	"io"
	"sync"
	"time"
)

// console is stderr, for people. Messages, log records, the live "waiting"
// line and the upload bars take turns on it: a message clears the live
// line first, and while bars are drawn it goes above them.
type console struct {
	mu    sync.Mutex
	w     io.Writer
	tty   bool
	cols  int       // the terminal's width, 0 when unknown (no bars then)
	above io.Writer // the bars' container, while bars are drawn
	live  string    // the live line on screen, if any
	stop  chan struct{}
}

// Write writes whole lines (a message, a log record).
func (c *console) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.above != nil {
		if n, err := c.above.Write(p); err == nil {
			return n, nil
		}
	}
	c.wipe()
	return c.w.Write(p)
}

// line writes one line.
func (c *console) line(s string) { c.Write([]byte(s + "\n")) }

// bars routes messages above the bars drawn by w, or back to the
// terminal with nil.
func (c *console) bars(w io.Writer) {
	c.mu.Lock()
	c.above = w
	c.mu.Unlock()
}

// startLive shows text followed by the time since now, refreshed every
// second, until clearLive: the wait for a lock on a terminal.
func (c *console) startLive(text string, bound time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stop != nil || !c.tty {
		return
	}
	stop := make(chan struct{})
	c.stop = stop
	begin := time.Now()
	go func() {
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			c.mu.Lock()
			if c.stop != stop {
				c.mu.Unlock()
				return
			}
			c.live = fmt.Sprintf("%s: %s of %s", text, time.Since(begin).Round(time.Second), bound)
			fmt.Fprintf(c.w, "\r\033[K%s", c.live)
			c.mu.Unlock()
			select {
			case <-stop:
				return
			case <-t.C:
			}
		}
	}()
}

// clearLive removes the live line for good.
func (c *console) clearLive() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stop != nil {
		close(c.stop)
		c.stop = nil
	}
	c.wipe()
}

// wipe erases the live line from the screen; the next tick redraws it.
func (c *console) wipe() {
	if c.live != "" {
		fmt.Fprint(c.w, "\r\033[K")
		c.live = ""
	}
}
