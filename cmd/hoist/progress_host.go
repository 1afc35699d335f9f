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
//
// Each number has one meaning: the archive's size (what this host is sent:
// files it has already travel as links), the position in it (a resumed
// upload starts at its offset), and what this push sent (from the offset
// on), which the rate and the result count.
type hostBar struct {
	pr   *progress
	name string
	wait time.Duration

	once sync.Once
	bar  *mpb.Bar

	mu               sync.Mutex
	at, size, offset int64
	begin, end       time.Time // of the upload
	text             string    // the step after the upload, or the result
	since            time.Time // when the step began: the host's steps show their time
	done             bool
}

// starting is store.PushOptions.Starting: the archive's size, and where
// the upload starts in it.
func (h *hostBar) starting(total, offset int64) {
	h.mu.Lock()
	h.begin, h.size, h.offset, h.at = time.Now(), total, offset, offset
	h.mu.Unlock()
	if offset > 0 {
		h.line(fmt.Sprintf("resuming the upload at %s: %s of the runtime's archive, %s, left to send",
			size(offset), size(total-offset), size(total)))
	} else {
		h.line(fmt.Sprintf("uploading the runtime's archive, %s (%s)", size(total), h.pr.artifact))
	}
	if b := h.ensureBar(); b != nil {
		b.SetTotal(total, false)
		b.SetCurrent(offset)
	}
}

// progress is store.PushOptions.Progress: the position in the archive.
func (h *hostBar) progress(at, total int64) {
	h.mu.Lock()
	if h.begin.IsZero() { // no Starting: the upload started now
		h.begin, h.size = time.Now(), total
	}
	h.at, h.size = at, max(total, at)
	h.mu.Unlock()
	if b := h.ensureBar(); b != nil {
		b.SetTotal(max(total, at), false)
		b.SetCurrent(at)
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
	sent, took := h.at-h.offset, h.end.Sub(h.begin)
	msg := fmt.Sprintf("uploaded %s in %s (%s/s); verifying and unpacking", size(sent), roundTook(took),
		size(int64(float64(sent)/max(took.Seconds(), 1e-6))))
	h.text, h.since = "verifying and unpacking", h.end
	h.mu.Unlock()
	h.line(msg)
}

// hostStepEnded says how long the host took to verify and unpack, once the
// host has moved on (it waits for the lock, or holds it).
func (h *hostBar) hostStepEnded() {
	h.mu.Lock()
	verifying := h.text == "verifying and unpacking"
	took := time.Since(h.since)
	h.mu.Unlock()
	if verifying {
		h.line("verified and unpacked in " + roundTook(took).String())
	}
}

func roundTook(d time.Duration) time.Duration {
	if d < 10*time.Millisecond {
		return d.Round(time.Microsecond)
	}
	return d.Round(time.Millisecond)
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
	h.text, h.since = text, time.Now()
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

// spinner turns while the host works on a step that says nothing until
// it ends.
var spinner = []string{"-", "\\", "|", "/"}

// describe is the text after the bar: during the upload the position in
// the archive of its size, this push's rate and the time left; then the
// host's step with a spinner and its time so far; then the result.
func (h *hostBar) describe(decor.Statistics) string {
	h.mu.Lock()
	defer h.mu.Unlock()
	switch {
	case h.done:
		return printable(h.text)
	case h.text != "":
		took := time.Since(h.since)
		return fmt.Sprintf("%s %s %s", spinner[int(took/(150*time.Millisecond))%len(spinner)], printable(h.text), took.Truncate(time.Second))
	case h.begin.IsZero():
		return ""
	}
	secs := max(time.Since(h.begin).Seconds(), 0.001)
	rate := float64(h.at-h.offset) / secs
	eta := "?"
	if rate > 0 {
		eta = time.Duration(float64(h.size-h.at) / rate * float64(time.Second)).Round(time.Second).String()
	}
	return fmt.Sprintf("%s / %s  %s/s  ETA %s", size(h.at), size(h.size), size(int64(rate)), eta)
}
