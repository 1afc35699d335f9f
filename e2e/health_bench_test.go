package e2e

import (
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hoistdev/hoist/lock"
	"github.com/hoistdev/hoist/store"
	"github.com/hoistdev/hoist/transport"
)

// BenchmarkRevertAfterDeadline: a runtime whose check never passes, by the
// host's clock: from its check deadline (the end of its restart plus
// --check-deadline) to the host serving the previous runtime again (the
// revert's restart ended). back-ms is that time (negative: the host knew
// before the deadline that no try could pass in time, since none could
// start before it), restart-ms the revert's restart, goal-ms 1 s plus the
// restart (the goal).
func BenchmarkRevertAfterDeadline(b *testing.B) {
	hh := newHealthHost(b, false)
	s := storeOn(dial(b, sshConfig(hh.h)), hh.root)
	marks := filepath.Join(hh.h.Dir, "restart-")
	deadline := 2500 * time.Millisecond
	c := store.Checks{Exec: []string{"test -f ok"}, Restart: "date +%s%N >" + marks + `"$HOIST_RUNTIME"; sleep 0.2`,
		Interval: time.Second, Deadline: deadline, Force: true}
	var back, restart time.Duration
	for b.Loop() {
		h, err := s.ActivateChecked(ctxT(b), hh.id2, c, 0, lock.Events{})
		var ue *store.UnhealthyError
		if !errors.As(err, &ue) || !ue.Reverted || h.Revert == nil {
			b.Fatalf("want a healthy revert: %v", err)
		}
		newEnd := nanosIn(b, marks+hh.id2).Add(h.Check.RestartTook)
		oldEnd := nanosIn(b, marks+hh.id1).Add(h.Revert.RestartTook)
		back += oldEnd.Sub(newEnd.Add(deadline))
		restart += h.Revert.RestartTook
	}
	n := float64(b.N) * float64(time.Millisecond)
	b.ReportMetric(float64(back)/n, "back-ms")
	b.ReportMetric(float64(restart)/n, "restart-ms")
	b.ReportMetric(float64(time.Second)/float64(time.Millisecond)+float64(restart)/n, "goal-ms")
}

func nanosIn(b *testing.B, path string) time.Time {
	b.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	n, err := strconv.ParseInt(strings.TrimSpace(string(data)), 10, 64)
	if err != nil {
		b.Fatal(err)
	}
	return time.Unix(0, n)
}

// BenchmarkHTTPProbeRoundTrips: --check-http's cost per try, in round
// trips, on the sequence's open connection. Each loop checks the same
// activation twice, over a link with 40 ms round trips (a latency proxy in
// front of sshd) and straight to sshd, so that the round trips are the
// slope: the time a try costs more on the slow link over the round trip
// it costs more, whatever the two ends compute. probe-rtts is the client's
// GET (the direct-tcpip channel's open and the request; goal 2), try-rtts
// the try as the host sees it (it asks with PROBE and waits for the answer:
// one more); raw-probe-rtts is the slow link's probe time over its round
// trip alone, and probe-ms-local the probe's time on the direct link (what
// the two ends compute).
func BenchmarkHTTPProbeRoundTrips(b *testing.B) {
	hh := newHealthHost(b, true)
	proxy := newLatencyProxy(b, hh.h.Addr, 20*time.Millisecond)
	url := "http://" + listen(b, http.StatusOK) + "/up"
	c := store.Checks{HTTP: []string{url}, Interval: 300 * time.Millisecond, Stable: time.Second}
	slow, fast := newProbeLink(b, hh, sshConfigVia(b, hh.h, proxy.Addr)), newProbeLink(b, hh, sshConfig(hh.h))
	for b.Loop() {
		slow.check(b, c)
		fast.check(b, c)
	}
	rtt := float64(slow.rtt - fast.rtt)
	b.ReportMetric((slow.probe()-fast.probe())/rtt, "probe-rtts")
	b.ReportMetric((slow.try()-fast.try())/rtt, "try-rtts")
	b.ReportMetric(2, "goal-rtts")
	b.ReportMetric(slow.probe()/float64(slow.rtt), "raw-probe-rtts")
	b.ReportMetric(fast.probe()/float64(time.Millisecond), "probe-ms-local")
	b.ReportMetric(float64(slow.rtt)/float64(time.Millisecond), "rtt-ms")
}

// probeLink is one connection to a health host and the HTTP probes' times
// over it.
type probeLink struct {
	hh           *healthHost
	s            *store.Store
	rtt          time.Duration
	probeT, tryT time.Duration
	tries        int
}

func newProbeLink(b *testing.B, hh *healthHost, cfg transport.SSHConfig) *probeLink {
	tr := dial(b, cfg)
	ssh, ok := tr.(*transport.SSH)
	if !ok {
		b.Fatal("not an SSH transport")
	}
	// The mean of several round trips, as the probes' times are means: a
	// best one would count the link's jitter as round trips.
	var rtt time.Duration
	for range 10 {
		d, err := ssh.Ping()
		if err != nil {
			b.Fatal(err)
		}
		rtt += d / 10
	}
	return &probeLink{hh: hh, s: storeOn(tr, hh.root), rtt: rtt}
}

// check activates the health host's second runtime with c, adds its tries'
// times, and activates the first again.
func (l *probeLink) check(b *testing.B, c store.Checks) {
	h, err := l.s.ActivateChecked(ctxT(b), l.hh.id2, c, 0, lock.Events{})
	if err != nil || !h.Healthy {
		b.Fatalf("the checked activation: %v %+v", err, h)
	}
	for _, t := range h.Check.Tries {
		l.probeT += t.Probes[0].Took
		l.tryT += t.Took
		l.tries++
	}
	if _, err := l.s.Activate(ctxT(b), l.hh.id1, 0, lock.Events{}); err != nil {
		b.Fatal(err)
	}
}

func (l *probeLink) probe() float64 { return float64(l.probeT) / float64(l.tries) }
func (l *probeLink) try() float64   { return float64(l.tryT) / float64(l.tries) }
