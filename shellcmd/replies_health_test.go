package shellcmd

import (
	"testing"
	"time"
)

// TestHealthReaders: the verdicts of a health-checked switch read by name,
// "-" as nothing, and the last field decoded.
func TestHealthReaders(t *testing.T) {
	if id, from, to := mustVerdict(t, "PREPARED 20261201T180233Z-3f9a2c - app-2").Prepared(); id != "20261201T180233Z-3f9a2c" || from != "" || to != "app-2" {
		t.Errorf("PREPARED: %q %q %q", id, from, to)
	}
	if st, took := mustVerdict(t, "RESTARTED timeout 30001").Restarted(); st != "timeout" || took != 30001*time.Millisecond {
		t.Errorf("RESTARTED: %q %v", st, took)
	}
	if n := mustVerdict(t, "PROBE 7").ProbeSeq(); n != 7 {
		t.Errorf("PROBE: %d", n)
	}
	p := mustVerdict(t, "PROBED 3 check1 fail 120 exit 1: no%25 such file").Probe()
	if p != (ProbeLine{Seq: 3, Name: "check1", Took: 120 * time.Millisecond, Detail: "exit 1: no% such file"}) {
		t.Errorf("PROBED: %+v", p)
	}
	if p := mustVerdict(t, "TRY 4 ok 15 -").Probe(); p != (ProbeLine{Seq: 4, OK: true, Took: 15 * time.Millisecond}) {
		t.Errorf("TRY: %+v", p)
	}
	h := mustVerdict(t, "HEALTHY x 1200 10050 12").Health()
	if h.ID != "x" || h.FirstOK != 1200*time.Millisecond || h.Stable != 10050*time.Millisecond || h.Tries != 12 {
		t.Errorf("HEALTHY: %+v", h)
	}
	if h := mustVerdict(t, "UNHEALTHY x deadline: check1: exit 1").Health(); h.Why != "deadline: check1: exit 1" {
		t.Errorf("UNHEALTHY: %+v", h)
	}
	if h := mustVerdict(t, "REVERTED x app-2 - none").Health(); h.To != "app-2" || h.From != "" || h.Verdict != "none" {
		t.Errorf("REVERTED: %+v", h)
	}
	b := mustVerdict(t, "BAD app-2 1700000000 x stable: http1: GET http://h/up: 500").Bad()
	if b != (BadMark{ID: "app-2", When: time.Unix(1700000000, 0), Rollout: "x", Why: "stable: http1: GET http://h/up: 500"}) {
		t.Errorf("BAD: %+v", b)
	}
	if rt := mustVerdict(t, "RT app-2 1 2 pb 3 app").Runtime(); !rt.Bad || !rt.Previous || rt.Current {
		t.Errorf("RT with flag b: %+v", rt)
	}
	if b := mustVerdict(t, "FREE").Bad(); b != (BadMark{}) {
		t.Errorf("FREE read as a bad mark: %+v", b)
	}
}
