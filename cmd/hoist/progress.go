package main

import (
	"bytes"
	"io"
	"sync"
	"time"

	"github.com/vbauerster/mpb/v8"

	"github.com/hoistdev/hoist/lock"
)

// progress shows each host's push. On a terminal, mpb draws one bar per
// host with the bytes sent of the total, the rate and the time left; once
// the upload is done the bar names the step the host is at: verifying and
// unpacking, waiting for the lock held by someone, promoting, then the
// result. Elsewhere (a CI log, or a terminal of unknown width), each change
// of step is one plain line, with no redraws. -q shows neither.
//
// The bars are drawn on demand (mpb.WithManualRefresh) so that a message
// written above them (console.Write, through mpb) is on the screen at the
// next frame and never lost when the bars stop.
type progress struct {
	a        *app
	artifact string // what is pushed, for the first line: "3 files of 22 B"
	mode     int    // progressOff, progressPlain, progressBars
	p        *mpb.Progress
	refresh  chan any
	quit     chan struct{}
	mu       sync.Mutex
	hosts    []*hostBar
}

const (
	progressOff = iota
	progressPlain
	progressBars
)

func (a *app) newProgress() *progress {
	pr := &progress{a: a, mode: progressPlain}
	switch {
	case a.g.quiet:
		pr.mode = progressOff
	case a.con.tty && a.con.cols > 0:
		pr.mode = progressBars
		pr.start(a.con.w)
	}
	return pr
}

// start draws bars on w, refreshed every 150 ms.
func (pr *progress) start(w io.Writer) {
	pr.refresh, pr.quit = make(chan any), make(chan struct{})
	pr.p = mpb.New(mpb.WithOutput(w), mpb.WithManualRefresh(pr.refresh), mpb.WithWidth(100))
	pr.a.con.bars(writerFunc(func(b []byte) (int, error) {
		n, err := pr.p.Write(b)
		if err == nil {
			pr.redraw()
		}
		return n, err
	}))
	pr.a.mu.Lock()
	if pr.a.stdoutTTY {
		pr.a.held = new(bytes.Buffer) // results after the bars, not through them
	}
	pr.a.mu.Unlock()
	go func() {
		t := time.NewTicker(150 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-pr.quit:
				return
			case <-t.C:
				pr.redraw()
			}
		}
	}()
}

// redraw asks for a frame, unless the bars are stopping.
func (pr *progress) redraw() {
	select {
	case pr.refresh <- nil:
	case <-pr.quit:
	}
}

// stop ends the bars (the last frame shows every host's result) and prints
// what stdout kept back meanwhile.
func (pr *progress) stop() {
	if pr.mode != progressBars {
		return
	}
	pr.a.con.bars(nil)
	pr.mu.Lock()
	for _, h := range pr.hosts {
		h.finish("stopped", false)
	}
	pr.mu.Unlock()
	pr.refresh <- nil
	close(pr.quit)
	pr.p.Wait()
	pr.a.mu.Lock()
	defer pr.a.mu.Unlock()
	if pr.a.held != nil {
		pr.a.stdout.Write(pr.a.held.Bytes())
		pr.a.held = nil
	}
}

// host returns the progress of one host's push, which waits up to wait for
// the lock.
func (pr *progress) host(name string, wait time.Duration) *hostBar {
	h := &hostBar{pr: pr, name: name, wait: wait}
	pr.mu.Lock()
	pr.hosts = append(pr.hosts, h)
	pr.mu.Unlock()
	return h
}

// events are the lock events of a push on h: the wait is said once per
// holder, as for every command, and each step changes the bar or prints a
// line.
func (h *hostBar) events() lock.Events {
	a := h.pr.a
	return lock.Events{
		Waiting: func(s lock.State) {
			h.uploadEnded()
			h.hostStepEnded()
			if h.wait != 0 {
				a.say(h.name, "waiting for the store lock, held by %s (%s)", s.Describe(), s.Reason())
			}
			who := "another client" // the line above says more; the bar stays short
			if s.RecordOK && s.Record.Who != "" {
				who = s.Record.Who
			}
			h.step("waiting for the lock held by "+who, false)
		},
		Stole: func(s lock.State) {
			a.say(h.name, "took over the store lock of %s: %s", s.Describe(), s.Reason())
		},
		Acquired: func(string) {
			h.uploadEnded()
			h.hostStepEnded()
			if h.uploading() {
				h.step("promoting", true)
			} else {
				h.step("activating", true)
			}
		},
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(b []byte) (int, error) { return f(b) }
