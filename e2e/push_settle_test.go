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
// host has already (v1: the push's first command switches), the one
// current names (v2, which the interrupted rollout switched to: settled
// back to v1, then switched to v2 again, as activate does), or a
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
		{"current", "2", nil},
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

// TestPushActivateInDoubtRefusesUnlessForce: an --atomic rollout whose
// client is killed once the first other host voted leaves that host in
// doubt. push --activate there refuses as activate does, naming the
// rollout and the resume, with the runtime promoted and current not
// switched; with --force it finishes the record as overridden and
// switches.
func TestPushActivateInDoubtRefusesUnlessForce(t *testing.T) {
	t.Parallel()
	f := newRolloutFleet(t, 3)
	rid := rolloutID(t, f.killedAt(t, "rollout.vote", f.atomicArgs()...))
	before := f.current(t, 1)
	v3 := sourceTree(t, "3")
	var r run
	for range 100 {
		if r = f.on(1).run("--json", "push", v3, "--name", "app", "--activate"); r.code != 75 {
			break
		}
	}
	if r.code != 1 || !strings.Contains(r.stdout, "rollout "+rid+" is in doubt here") || !strings.Contains(r.stdout, "hoist rollout resume "+rid) {
		t.Fatalf("want the in-doubt refusal: %s", r)
	}
	var p output.Push // --json: the error is in the host's object
	if err := json.Unmarshal([]byte(strings.TrimSpace(r.stdout)), &p); err != nil || p.Pushed == nil || !p.Promoted || p.Activated {
		t.Fatalf("want v3 promoted, not activated: %v %s", err, r)
	}
	if got := f.current(t, 1); got != before {
		t.Fatalf("the refused push switched the host in doubt: %s, was %s", got, before)
	}
	if r = f.on(1).run("push", v3, "--name", "app", "--activate", "--force"); r.code != 0 || f.current(t, 1) != p.ID {
		t.Fatalf("push --activate --force: want %s current: %s", p.ID, r)
	}
	if st := f.status(t, rid); st[1].State != "overridden" {
		t.Errorf("rollout status: host 1 is %s, want overridden", st[1].State)
	}
}
