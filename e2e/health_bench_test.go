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

// BenchmarkHTTPProbeRoundTrips: --check-http's cost per try, in round trips
// of a link with 40 ms of them (a latency proxy in front of sshd), on the
// sequence's open connection: probe-rtts is the client's GET (the
// direct-tcpip channel's open and the request; goal 2), try-rtts the try as
// the host sees it (it asks with PROBE and waits for the answer: one more).
func BenchmarkHTTPProbeRoundTrips(b *testing.B) {
	hh := newHealthHost(b, true)
	proxy := newLatencyProxy(b, hh.h.Addr, 20*time.Millisecond)
	tr := dial(b, sshConfigVia(b, hh.h, proxy.Addr))
	ssh, ok := tr.(*transport.SSH)
	if !ok {
		b.Fatal("not an SSH transport")
	}
	rtt, err := ssh.RoundTrip(3)
	if err != nil {
		b.Fatal(err)
	}
	s := storeOn(tr, hh.root)
	url := "http://" + listen(b, http.StatusOK) + "/up"
	c := store.Checks{HTTP: []string{url}, Interval: 300 * time.Millisecond, Stable: time.Second}
	var probe, try time.Duration
	tries := 0
	for b.Loop() {
		h, err := s.ActivateChecked(ctxT(b), hh.id2, c, 0, lock.Events{})
		if err != nil || !h.Healthy {
			b.Fatalf("the checked activation: %v %+v", err, h)
		}
		for _, t := range h.Check.Tries {
			probe += t.Probes[0].Took
			try += t.Took
			tries++
		}
		if _, err := s.Activate(ctxT(b), hh.id1, 0, lock.Events{}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(probe)/float64(tries)/float64(rtt), "probe-rtts")
	b.ReportMetric(float64(try)/float64(tries)/float64(rtt), "try-rtts")
	b.ReportMetric(2, "goal-rtts")
	b.ReportMetric(float64(rtt)/float64(time.Millisecond), "rtt-ms")
}
