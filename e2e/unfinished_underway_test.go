package e2e

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/hoistdev/hoist/cmd/hoist/output"
)

// unfinishedRows reads unfinished_rollouts from a --json list or lock
// status on one host.
func unfinishedRows(t *testing.T, r run) []output.UnfinishedRollout {
	t.Helper()
	var obj struct {
		Unfinished []output.UnfinishedRollout `json:"unfinished_rollouts"`
	}
	if err := json.Unmarshal([]byte(strings.TrimSpace(r.stdout)), &obj); err != nil {
		t.Fatalf("%v\n%s", err, r)
	}
	return obj.Unfinished
}

// TestReadOnlyCommandsTellUnderWayRollout: while a rollout's host command
// runs its checks, holding the lock under the token its record's plan
// names, list and lock status say the record is under way (its hold owns
// the lock), suggest no resume, and have under_way in --json; list, which
// cannot read the lock's age, points at lock status for it. Once lock
// status finds that lock stale (its record backdated past its lease), it
// says the host command died or stalled, with the resume, and under_way
// false. Once the host command is killed and its lock released, the
// record reads as interrupted, with the resume, on both.
func TestReadOnlyCommandsTellUnderWayRollout(t *testing.T) {
	t.Parallel()
	f := newRolloutFleet(t, 1)
	s := f.c.start("rollout", f.v2, "--name", "app", "--check", "touch ../../checking-$(cat VERSION); sleep 120",
		"--check-timeout", "180s", "--check-deadline", "180s", "--stable", "0s")
	dir := strings.TrimPrefix(f.root, "~/")
	waitFor(t, 60*time.Second, "checking v2", func() bool {
		out, _ := f.hosts[0].SSH(t, "exec /bin/sh -c 'test -e "+dir+"/checking-2 && echo yes'")
		return strings.TrimSpace(out) == "yes"
	})
	rid := rolloutID(t, run{stdout: s.stdout()})
	id2 := f.current(t, 0)
	h0 := f.hosts[0].Target()
	head := "hoist: " + h0 + ": keeps an unfinished rollout " + rid + " (" + f.id1 + " -> " + id2 + ", switched)"
	underWay := head + ", whose hold owns the store lock: under way, or its host command died and the lock was not released or taken since"
	shows := "; hoist rollout status " + rid + " shows it"
	resume := "hoist rollout resume " + rid + " finishes it"
	want := func(args []string, line string, under bool) {
		t.Helper()
		r := f.c.run(args...)
		if r.code != 0 || strings.Count(r.stderr, line) != 1 || strings.Contains(r.stderr, resume) != !under {
			t.Errorf("hoist %v: want exit 0 and, once, %q (a resume suggested: %v): %s", args, line, !under, r)
		}
		j := f.c.run(append([]string{"--json"}, args...)...)
		if rows := unfinishedRows(t, j); j.code != 0 || len(rows) != 1 || rows[0].ID != rid || rows[0].UnderWay != under {
			t.Errorf("hoist --json %v: want %s with under_way %v: %+v\n%s", args, rid, under, rows, j)
		}
	}
	want([]string{"list"}, underWay+" (hoist lock status says whether that lock is stale)"+shows+"\n", true)
	want([]string{"lock", "status"}, underWay+shows+"\n", true)

	// The lock's record, untouched for longer than its lease: lock status
	// finds it stale; list cannot tell.
	hostSh(t, f.hosts[0], "cd "+dir+" && touch -d '-2 hours' runtimes/.store-lock/*/rec")
	want([]string{"lock", "status"}, head+", whose hold owns the store lock, which a rule lets anyone take (stale): its host command died or stalled"+shows+"; "+resume+"\n", false)
	want([]string{"list"}, underWay, true)
	// Renewed again, as its guardian would, so that the host command
	// still owns the lock and its guardian releases it once it is killed.
	hostSh(t, f.hosts[0], "cd "+dir+" && touch -c runtimes/.store-lock/*/rec")

	killHolder(t, f.c, "the host")
	s.cmd.Process.Kill()
	s.wait(t, 30*time.Second)
	f.released(t, 0)
	interrupted := head + ", interrupted: hoist rollout status " + rid + " shows it; " + resume + "\n"
	want([]string{"list"}, interrupted, false)
	want([]string{"lock", "status"}, interrupted, false)
}
