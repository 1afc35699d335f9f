package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hoistdev/hoist/cmd/hoist/output"
	"github.com/hoistdev/hoist/e2e/sshd"
)

// hoist rollout (docs/rollout.md, "A fleet"), end to end over six real
// sshd hosts, each its own login and so its own store under one --root.

type rolloutFleet struct {
	hosts    []*sshd.Host
	c        *cli
	root     string
	id1, id2 string
	v2       string
}

// newRolloutFleet starts n hosts where v1 is current; v2 is the artifact
// to roll out. A host's check fails when its login has a file "fail".
func newRolloutFleet(t *testing.T, n int) *rolloutFleet {
	t.Helper()
	if !isRoot() {
		t.Skip("needs root: each host logs in as a user of its own (one a shell), to have a store of its own")
	}
	f := &rolloutFleet{root: "~/rollout-" + strings.ReplaceAll(t.Name(), "/", "-")}
	shells := []string{"bash", "dash", "zsh", "fish", "tcsh", "mksh"}
	kh := filepath.Join(t.TempDir(), "known_hosts")
	var lines, targets []string
	var flags []string
	for i := range n {
		h := sshd.Start(t, sshd.Options{Shell: shells[i%len(shells)]})
		f.hosts = append(f.hosts, h)
		b, _ := os.ReadFile(h.KnownHosts)
		lines = append(lines, string(b))
		targets = append(targets, h.Target())
		flags = append(flags, "-i", h.KeyFile)
	}
	os.WriteFile(kh, []byte(strings.Join(lines, "")), 0o600)
	f.c = newCLI(t, f.hosts[0], "")
	f.c.flags = append([]string{"-H", strings.Join(targets, ","), "--known-hosts", kh, "--root", f.root}, flags...)
	v1 := sourceTree(t, "1")
	f.v2 = sourceTree(t, "2")
	r := f.c.run("--json", "push", v1, "--name", "app", "--activate")
	var p output.Push
	if err := json.Unmarshal([]byte(strings.SplitN(r.stdout, "\n", 2)[0]), &p); r.code != 0 || err != nil {
		t.Fatalf("push v1: %v\n%s", err, r)
	}
	f.id1 = p.ID
	for _, h := range f.hosts {
		t.Cleanup(func() {
			dir := strings.TrimPrefix(f.root, "~/")
			h.SSH(t, "exec /bin/sh -c 'chmod -R u+w "+dir+"; rm -rf "+dir+"'")
		})
	}
	return f
}

// failOn makes v2's check fail on host i (and not v1's): the file fail-2
// at the store's root.
func (f *rolloutFleet) failOn(t *testing.T, i int) {
	t.Helper()
	if _, st := f.hosts[i].SSH(t, "exec /bin/sh -c 'touch "+strings.TrimPrefix(f.root, "~/")+"/fail-2'"); st != 0 {
		t.Fatal("touch fail")
	}
}

// current is what host i's current names.
func (f *rolloutFleet) current(t *testing.T, i int) string {
	t.Helper()
	out, _ := f.hosts[i].SSH(t, "exec /bin/sh -c 'readlink "+strings.TrimPrefix(f.root, "~/")+"/current'")
	return strings.TrimPrefix(strings.TrimSpace(out), "runtimes/")
}

// rollout runs hoist --json rollout v2 and reads a row per host.
func (f *rolloutFleet) rollout(t *testing.T, args ...string) ([]output.Rollout, run) {
	t.Helper()
	r := f.c.run(append([]string{"--json", "rollout", f.v2, "--name", "app", "--check", `test ! -e "../../fail-$(cat VERSION)"`, "--check-deadline", "4s", "--stable", "0s", "--check-interval", "200ms"}, args...)...)
	var rows []output.Rollout
	for _, l := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		var o output.Rollout
		if err := json.Unmarshal([]byte(l), &o); err != nil {
			t.Fatalf("rollout --json: %v\n%s", err, r)
		}
		rows = append(rows, o)
	}
	if len(rows) != len(f.hosts) {
		t.Fatalf("want a row per host:\n%s", r)
	}
	if len(rows) > 0 {
		f.id2 = rows[0].To
	}
	return rows, r
}

func states(rows []output.Rollout) string {
	var s []string
	for _, r := range rows {
		s = append(s, r.State)
	}
	return strings.Join(s, ",")
}

// TestRolloutCanaryFailsStops: the canary's check fails: it goes back to
// v1 by itself and is marked bad there, no other host is switched, exit 3.
func TestRolloutCanaryFailsStops(t *testing.T) {
	t.Parallel()
	f := newRolloutFleet(t, 6)
	f.failOn(t, 0)
	rows, r := f.rollout(t)
	if r.code != 3 || states(rows) != "failed,unchanged,unchanged,unchanged,unchanged,unchanged" {
		t.Fatalf("want exit 3, the canary failed and no other switched: %s", r)
	}
	if rows[0].Batch != 1 || rows[0].Health == nil || rows[0].Health.Healthy || rows[0].From != f.id1 || rows[0].Exit != 3 {
		t.Fatalf("the canary's row: %+v", rows[0])
	}
	for i := range f.hosts {
		if got := f.current(t, i); got != f.id1 {
			t.Fatalf("host %d is on %s, want %s", i, got, f.id1)
		}
	}
	lr := f.c.run("--json", "list")
	for _, l := range strings.Split(strings.TrimSpace(lr.stdout), "\n") {
		var o output.List
		if err := json.Unmarshal([]byte(l), &o); err != nil {
			t.Fatalf("list --json: %v\n%s", err, lr)
		}
		bad := false
		for _, rt := range o.Runtimes {
			bad = bad || (rt.ID == f.id2 && rt.Bad != nil)
		}
		if bad != (o.Host == f.hosts[0].Target()) {
			t.Fatalf("%s: marked bad %v; want the canary alone: %s", o.Host, bad, lr)
		}
	}
	if !strings.Contains(r.stderr, "rollout ") || !strings.Contains(r.stderr, "batch 1/2") || !strings.Contains(r.stderr, "stopped") {
		t.Fatalf("stderr says the rollout, the batch and the stop: %s", r)
	}
}

// TestRolloutRevertAfterSecondBatch: canary and first batch pass, a host
// of the second batch fails: with --on-fail revert every host ends on v1.
func TestRolloutRevertAfterSecondBatch(t *testing.T) {
	t.Parallel()
	f := newRolloutFleet(t, 6)
	f.failOn(t, 4)
	var before []int
	for _, h := range f.hosts {
		before = append(before, accepted(t, h))
	}
	rows, r := f.rollout(t, "--batch", "2", "--on-fail", "revert")
	for i, h := range f.hosts {
		if n := accepted(t, h) - before[i]; n != 1 {
			t.Fatalf("host %d: %d logins for the rollout, want one connection for all of it", i, n)
		}
	}
	// Batches: [0] [1 2] [3 4] [5].
	if r.code != 3 || states(rows) != "reverted,reverted,reverted,reverted,failed,unchanged" {
		t.Fatalf("want exit 3, every switched host reverted: %s", r)
	}
	for i := range f.hosts {
		if got := f.current(t, i); got != f.id1 {
			t.Fatalf("host %d is on %s, want %s", i, got, f.id1)
		}
	}
	if rows[3].Batch != 3 || rows[3].Revert == nil || !rows[3].Revert.Healthy || rows[5].Batch != 0 {
		t.Fatalf("rows: %+v", rows)
	}
}

// TestRolloutPasses: every host switched and healthy, exit 0, in the
// batches asked for.
func TestRolloutPasses(t *testing.T) {
	t.Parallel()
	f := newRolloutFleet(t, 6)
	rows, r := f.rollout(t, "--batch", "1,50%")
	if r.code != 0 || states(rows) != "switched,switched,switched,switched,switched,switched" {
		t.Fatalf("want every host switched: %s", r)
	}
	// canary, 1, then 50% of 6 = 3, then the rest (1).
	want := []int{1, 2, 3, 3, 3, 4}
	for i, row := range rows {
		if row.Batch != want[i] || row.From != f.id1 || f.current(t, i) != row.To {
			t.Fatalf("host %d: %+v, want batch %d", i, row, want[i])
		}
	}
}

// TestRolloutUnreachable: a stopped host fails the rollout before any
// switch; with --skip-unreachable it is skipped and the others switch.
func TestRolloutUnreachable(t *testing.T) {
	t.Parallel()
	f := newRolloutFleet(t, 6)
	f.hosts[2].Stop()
	rows, r := f.rollout(t)
	if r.code != 1 || states(rows) != "unchanged,unchanged,failed,unchanged,unchanged,unchanged" {
		t.Fatalf("want exit 1 and no host switched: %s", r)
	}
	for _, i := range []int{0, 1, 3, 4, 5} {
		if got := f.current(t, i); got != f.id1 {
			t.Fatalf("host %d is on %s before every host was staged", i, got)
		}
	}
	rows, r = f.rollout(t, "--skip-unreachable")
	if r.code != 0 || states(rows) != "switched,switched,skipped,switched,switched,switched" {
		t.Fatalf("want the others switched, the stopped host skipped, exit 0: %s", r)
	}
}

// TestRolloutMaxFailContinue: one failure in a batch of three does not
// exceed --max-fail 1, so the rollout goes on; with --on-fail continue a
// batch that exceeds it does not stop it either. Without --json: the id
// first, then a row per host.
func TestRolloutMaxFailContinue(t *testing.T) {
	t.Parallel()
	f := newRolloutFleet(t, 6)
	f.failOn(t, 1)
	f.failOn(t, 4)
	f.failOn(t, 5)
	// Batches: [0] [1 2 3] [4 5].
	r := f.c.run("rollout", f.v2, "--name", "app", "--check", `test ! -e "../../fail-$(cat VERSION)"`, "--check-deadline", "4s",
		"--stable", "0s", "--check-interval", "200ms", "--batch", "3", "--max-fail", "1", "--on-fail", "continue")
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if r.code != 3 || len(lines) != 7 || !strings.HasPrefix(lines[0], "rollout ") {
		t.Fatalf("want exit 3, the id and a row per host: %s", r)
	}
	want := []string{"switched", "failed", "switched", "switched", "failed", "failed"}
	for i, w := range want {
		fields := strings.Fields(lines[i+1])
		if len(fields) < 2 || fields[0] != f.hosts[i].Target() || fields[1] != w {
			t.Fatalf("row %d: %q, want %s %s:\n%s", i, lines[i+1], f.hosts[i].Target(), w, r)
		}
	}
	if !strings.Contains(r.stderr, "batch 3/3") || strings.Contains(r.stderr, "stopped") {
		t.Fatalf("every batch ran: %s", r)
	}
}
