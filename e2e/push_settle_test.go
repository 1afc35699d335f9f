package e2e

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/hoistdev/hoist/cmd/hoist/output"
)

// TestPushActivateSaysWhatItSettled: a host whose rollout was interrupted
// mid-check keeps an unfinished record; push --activate with a check
// settles it first (back on v1, whose check passes), then switches to v3.
// Its --json says the settle as activate's does (settled: the rollout,
// the side, the runtime, how its checks went), and stderr says it once.
func TestPushActivateSaysWhatItSettled(t *testing.T) {
	t.Parallel()
	f := newRolloutFleet(t, 1)
	rid, _ := f.interruptedMidCheck(t)
	f.touch(t, 0, "pass")
	r := f.c.run("--json", "push", sourceTree(t, "3"), "--name", "app", "--activate", "--check", "true", "--stable", "0s")
	var p output.Push
	if err := json.Unmarshal([]byte(strings.TrimSpace(r.stdout)), &p); r.code != 0 || err != nil || p.Pushed == nil {
		t.Fatalf("push --activate: %v\n%s", err, r)
	}
	want := []output.Settle{{Rollout: rid, Side: "from", Runtime: f.id1, Checks: "healthy"}}
	if got, w := must(json.Marshal(p.Settled)), must(json.Marshal(want)); string(got) != string(w) {
		t.Errorf("push --activate --json: settled %s, want %s\n%s", got, w, r)
	}
	if !p.Activated || f.current(t, 0) != p.ID {
		t.Errorf("want v3 (%s) current: %+v, current %s", p.ID, p.Pushed, f.current(t, 0))
	}
	if strings.Count(r.stderr, "rollout "+rid+" was settled here by the local rule: back on "+f.id1) != 1 {
		t.Errorf("want the settle said once on stderr: %s", r)
	}
}
