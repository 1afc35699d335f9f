package main

import (
	"fmt"
	"sync"
	"time"

	"github.com/vbauerster/mpb/v8"
	"github.com/vbauerster/mpb/v8/decor"
)

// hostBar is one host's push as progress shows it. Its mutex guards the
// state only: mpb's goroutines call describe, so no bar method and no
// console write happens while it is held.
type hostBar struct {
	pr   *progress
	name string
	wait time.Duration

	once sync.Once
	bar  *mpb.Bar

	mu          sync.Mutex
	sent, total int64
	begin, end  time.Time // of the upload
	text        string    // the step after the upload, or the result
	done        bool
}

// progress is store.PushOptions.Progress: the bytes sent so far, and the
// size of the files (the tar around them adds its headers).
func (h *hostBar) progress(sent, total int64) {
	h.mu.Lock()
	first := h.begin.IsZero()
	if first {
		h.begin = time.Now()
	}
	h.sent, h.total = sent, max(total, sent)
	h.mu.Unlock()
	if first {
		h.line("uploading the runtime (" + size(total) + ")")
	}
	if b := h.ensureBar(); b != nil {
		b.SetTotal(max(total, sent), false)
		b.SetCurrent(sent)
	}
}

// uploadEnded moves on to the host's verify and unpack, once: the upload
// returned (store.PushOptions.Uploaded), or the host waits for the lock or holds it.
func (h *hostBar) uploadEnded() {
	h.mu.Lock()
	if h.begin.IsZero() || !h.end.IsZero() {
		h.mu.Unlock()
		return
	}
	h.end = time.Now()
	took := h.end.Sub(h.begin)
	unit := time.Millisecond
	if took < 10*time.Millisecond {
		unit = time.Microsecond
	}
	msg := fmt.Sprintf("uploaded %s in %s (%s/s); verifying and unpacking", size(h.sent),
		took.Round(unit), size(int64(float64(h.sent)/max(took.Seconds(), 1e-6))))
	h.text = "verifying and unpacking"
	h.mu.Unlock()
	h.line(msg)
}

// uploading reports whether this push uploads (a runtime already on the
// host is only activated).
func (h *hostBar) uploading() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return !h.begin.IsZero()
}

// step shows what the host does now; with line, also as a plain line.
func (h *hostBar) step(text string, line bool) {
	h.ensureBar()
	h.mu.Lock()
	h.text = text
	h.mu.Unlock()
	if line {
		h.line(text)
	}
}

// finish shows the result on the bar, which stays drawn.
func (h *hostBar) finish(text string, ok bool) {
	h.mu.Lock()
	if h.done {
		h.mu.Unlock()
		return
	}
	h.done, h.text = true, text
	b := h.bar
	h.mu.Unlock()
	switch {
	case b == nil:
	case ok:
		b.SetTotal(-1, true)
	default:
		b.Abort(false)
	}
}

// line prints one line for a log (not on a terminal: the bar says it).
func (h *hostBar) line(text string) {
	if h.pr.mode == progressPlain {
		h.pr.a.say(h.name, "%s", text)
	}
}

func (h *hostBar) ensureBar() *mpb.Bar {
	if h.pr.mode != progressBars {
		return nil
	}
	h.once.Do(func() {
		b := h.pr.p.New(0, mpb.BarStyle(), mpb.BarWidth(32),
			mpb.PrependDecorators(decor.Name(printable(h.name), decor.WCSyncWidthR)),
			mpb.AppendDecorators(decor.Any(h.describe)))
		h.mu.Lock()
		h.bar = b
		h.mu.Unlock()
	})
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.bar
}

// describe is the text after the bar: during the upload the bytes sent of
// the total, the rate and the time left; then the step, then the result.
func (h *hostBar) describe(decor.Statistics) string {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.text != "" || h.begin.IsZero() {
		return printable(h.text)
	}
	secs := max(time.Since(h.begin).Seconds(), 0.001)
	rate := float64(h.sent) / secs
	eta := "?"
	if rate > 0 {
		eta = time.Duration(float64(h.total-h.sent) / rate * float64(time.Second)).Round(time.Second).String()
	}
	return fmt.Sprintf("%s / %s  %s/s  ETA %s", size(h.sent), size(h.total), size(int64(rate)), eta)
}
