package main

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
	"time"
)

// bars draws one upload progress bar per host on a terminal: stderr only,
// never with --json, and nothing at all when stderr is not a terminal.
type bars struct {
	mu    sync.Mutex
	w     io.Writer
	on    bool
	state map[string][2]int64 // host → sent, total
	start time.Time
	lines int
	tick  *time.Ticker
	quit  chan struct{}
}

func (a *app) newBars() *bars {
	b := &bars{w: a.stderr, on: a.stderrTTY && !a.json && !a.quiet, state: map[string][2]int64{}, start: time.Now()}
	if b.on {
		b.tick, b.quit = time.NewTicker(200*time.Millisecond), make(chan struct{})
		go func() {
			for {
				select {
				case <-b.tick.C:
					b.draw()
				case <-b.quit:
					return
				}
			}
		}()
	}
	return b
}

// progress returns the callback for one host's upload.
func (b *bars) progress(host string) func(sent, total int64) {
	if !b.on {
		return nil
	}
	return func(sent, total int64) {
		b.mu.Lock()
		b.state[host] = [2]int64{sent, total}
		b.mu.Unlock()
	}
}

// done removes a host's bar.
func (b *bars) done(host string) {
	if !b.on {
		return
	}
	b.mu.Lock()
	delete(b.state, host)
	b.mu.Unlock()
	b.draw()
}

func (b *bars) stop() {
	if !b.on {
		return
	}
	b.tick.Stop()
	close(b.quit)
	b.mu.Lock()
	b.state = map[string][2]int64{}
	b.mu.Unlock()
	b.draw()
}

func (b *bars) draw() {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out strings.Builder
	if b.lines > 0 {
		fmt.Fprintf(&out, "\033[%dF", b.lines) // back to the first bar
	}
	hosts := make([]string, 0, len(b.state))
	for h := range b.state {
		hosts = append(hosts, h)
	}
	sort.Strings(hosts)
	secs := time.Since(b.start).Seconds()
	for _, h := range hosts {
		st := b.state[h]
		frac := 0.0
		if st[1] > 0 {
			frac = min(1, float64(st[0])/float64(st[1]))
		}
		fill := int(frac * 30)
		fmt.Fprintf(&out, "\033[K%s [%s%s] %3.0f%% %s %s/s\n", h, strings.Repeat("=", fill), strings.Repeat(" ", 30-fill),
			frac*100, size(st[0]), size(int64(float64(st[0])/max(secs, 0.001))))
	}
	for i := len(hosts); i < b.lines; i++ {
		out.WriteString("\033[K\n")
	}
	if extra := b.lines - len(hosts); extra > 0 {
		fmt.Fprintf(&out, "\033[%dF", extra)
	}
	b.lines = len(hosts)
	b.w.Write([]byte(out.String()))
}
