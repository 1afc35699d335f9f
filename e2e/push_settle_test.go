package e2e

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/hoistdev/hoist/cmd/hoist/output"
)

// TestPushActivateSettlesFirst: a host whose rollout was interrupted
// mid-check keeps an unfinished record; push --activate settles it first
// (back on v1, whose check passes), then switches, whichever way it goes:
// a runtime uploaded and switched in its promotion's host command, one the
// host has already (v1: the push's first command switches), or a
// health-checked switch of its own. Its --json says the settle as
// activate's does (settled: the rollout, the side, the runtime, how its
// checks went), stderr says it once, and the record is finished: list
// names no unfinished rollout after it.
func TestPushActivateSettlesFirst(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		version string
		flags   []string
	}{
		{"uploaded", "3", nil},
		{"present", "1", nil},
		{"checked", "3", []string{"--check", "true", "--stable", "0s"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newRolloutFleet(t, 1)
			rid, _ := f.interruptedMidCheck(t)
			f.touch(t, 0, "pass")
			r := f.c.run(append([]string{"--json", "push", sourceTree(t, tc.version), "--name", "app", "--activate"}, tc.flags...)...)
			var p output.Push
			if err := json.Unmarshal([]byte(strings.TrimSpace(r.stdout)), &p); r.code != 0 || err != nil || p.Pushed == nil {
				t.Fatalf("push --activate: %v\n%s", err, r)
			}
			want := []output.Settle{{Rollout: rid, Side: "from", Runtime: f.id1, Checks: "healthy"}}
			if got, w := must(json.Marshal(p.Settled)), must(json.Marshal(want)); string(got) != string(w) {
				t.Errorf("push --activate --json: settled %s, want %s\n%s", got, w, r)
			}
			if !p.Activated || f.current(t, 0) != p.ID {
				t.Errorf("want %s current: %+v, current %s", p.ID, p.Pushed, f.current(t, 0))
			}
			if strings.Count(r.stderr, "rollout "+rid+" was settled here by the local rule: back on "+f.id1) != 1 {
				t.Errorf("want the settle said once on stderr: %s", r)
			}
			if l := f.c.run("list"); l.code != 0 || strings.Contains(l.stderr, "unfinished") {
				t.Errorf("want the record finished: %s", l)
			}
		})
	}
}
