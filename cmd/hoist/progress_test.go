package main

import (
	"bytes"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hoistdev/hoist/lock"
)

var holder = lock.State{Store: true, Locked: true, RecordOK: true,
	Record: lock.Record{Who: "bob@laptop", Command: "hoist run -- make", Since: time.Now()}}

// TestProgressPlainLines: not on a terminal, a push says each step once, in
// a line of its own, and -q says nothing.
func TestProgressPlainLines(t *testing.T) {
	var out, errb bytes.Buffer
	a := newApp(&out, &errb, nil)
	pr := a.newProgress()
	pr.artifact = "3 files of 2.9 KiB"
	h := pr.host("web1", time.Minute)
	ev := h.events()
	h.starting(4096, 0)
	for sent := int64(0); sent <= 4096; sent += 512 {
		h.progress(sent, 4096)
	}
	h.uploadEnded()
	ev.Waiting(holder)
	ev.Acquired("token")
	h.finish("promoted", true)
	pr.stop()
	want := []string{
		`^hoist: web1: uploading the runtime's archive, 4\.0 KiB \(3 files of 2\.9 KiB\)$`,
		`^hoist: web1: uploaded 4\.0 KiB in \S+ \(\S+ \S+/s\); verifying and unpacking$`,
		`^hoist: web1: verified and unpacked in \S+$`,
		`^hoist: web1: waiting for the store lock, held by bob@laptop \(hoist run -- make\) since .*$`,
		`^hoist: web1: promoting$`,
	}
	wantLines(t, errb.String(), want)

	errb.Reset()
	a.g.quiet = true
	pr = a.newProgress()
	h = pr.host("web1", time.Minute)
	h.progress(10, 10)
	h.uploadEnded()
	h.events().Acquired("token")
	pr.stop()
	if errb.Len() > 0 {
		t.Errorf("-q printed: %s", errb.String())
	}
}

// TestProgressResumedCountsWhatIsSent: a resumed upload says where it
// resumes and what is left of the archive; what it says it uploaded, and
// its rate, count the bytes it sent, not the ones the host had already.
func TestProgressResumedCountsWhatIsSent(t *testing.T) {
	var out, errb bytes.Buffer
	a := newApp(&out, &errb, nil)
	h := a.newProgress().host("web1", time.Minute)
	h.starting(10<<20, 8<<20)
	h.mu.Lock()
	h.begin = h.begin.Add(-4 * time.Second) // as if the upload took four seconds
	h.mu.Unlock()
	h.progress(10<<20, 10<<20)
	h.uploadEnded()
	want := []string{
		`^hoist: web1: resuming the upload at 8\.0 MiB: 2\.0 MiB of the runtime's archive, 10\.0 MiB, left to send$`,
		`^hoist: web1: uploaded 2\.0 MiB in 4(\.\d+)?s \(51[12]\.\d KiB/s\); verifying and unpacking$`,
	}
	wantLines(t, errb.String(), want)
}

// wantLines checks that text is lines matching want, one each.
func wantLines(t *testing.T, text string, want []string) {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	if len(lines) != len(want) {
		t.Fatalf("want %d lines, got:\n%s", len(want), text)
	}
	for i, w := range want {
		if !regexp.MustCompile(w).MatchString(lines[i]) {
			t.Errorf("line %d: %q, want %s", i+1, lines[i], w)
		}
	}
}

// TestProgressBars: on a terminal, mpb draws a bar per host with the total,
// the rate and the time left, then each step, then the result; a message
// goes above the bars, and the results on stdout wait for the bars to end.
func TestProgressBars(t *testing.T) {
	var out bytes.Buffer
	var errb syncBuffer // mpb draws from its own goroutine
	a := newApp(&out, &errb, nil)
	a.stdoutTTY = true
	pr := &progress{a: a, mode: progressBars}
	pr.start(&errb)
	frame := func() { // the third request is taken once the first frame is drawn
		for range 3 {
			pr.redraw()
		}
	}
	web1, web2 := pr.host("web1", time.Minute), pr.host("web2.example.com", time.Minute)
	web1.progress(1<<20, 4<<20)
	web2.progress(3<<20, 4<<20)
	frame()
	if s := errb.String(); !regexp.MustCompile(`web1 .*1\.0 MiB / 4\.0 MiB  \S+ \S+/s  ETA \S+`).MatchString(s) ||
		!strings.Contains(s, "web2.example.com") {
		t.Fatalf("no upload bars:\n%s", s)
	}
	web1.uploadEnded()
	frame()
	// The host's step says nothing until it ends: a spinner turns, and its
	// time so far shows.
	if !regexp.MustCompile(`[-\\|/] verifying and unpacking \d+s`).MatchString(errb.String()) {
		t.Fatalf("no step with a spinner after the upload:\n%s", errb.String())
	}
	web1.events().Waiting(holder)
	frame()
	if s := errb.String(); !strings.Contains(s, "waiting for the lock held by bob@laptop") ||
		!strings.Contains(s, "hoist: web1: waiting for the store lock, held by bob@laptop") {
		t.Fatalf("no wait on the bar and above it:\n%s", s)
	}
	web1.events().Acquired("token")
	frame()
	if !strings.Contains(errb.String(), "promoting") {
		t.Fatalf("no promotion step:\n%s", errb.String())
	}
	web1.finish("uploaded 4.0 MiB, promoted, active", true)
	a.data("web1: app-0123456789ab uploaded 4.0 MiB, promoted, active\n")
	if out.Len() > 0 {
		t.Fatalf("a result went to stdout while the bars are drawn: %s", out.String())
	}
	pr.stop() // web2 never finished: stopped
	if s := errb.String(); !strings.Contains(s, "promoted, active") || !strings.Contains(s, "stopped") {
		t.Fatalf("the last frame lacks the results:\n%s", s)
	}
	if !strings.HasPrefix(out.String(), "web1: app-0123456789ab") {
		t.Fatalf("stdout after the bars: %q", out.String())
	}
	a.con.line("after")
	if !strings.HasSuffix(errb.String(), "after\n") {
		t.Fatalf("a message after the bars did not go straight to stderr")
	}
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
