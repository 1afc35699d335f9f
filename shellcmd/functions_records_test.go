package shellcmd

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestShGCSweepsFinishedRecords: h_gc_records removes a finished record
// (done) nothing wrote to for --keep-runs, the links of a record that is
// gone, and a record being prepared after the stale period; it keeps an
// unfinished record and its links, a fresh one, and anything hoist did not
// provably make as this login (another login's record, one others may
// write, one holding a planted link, a record that is a link), and follows
// no link.
func TestShGCSweepsFinishedRecords(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: a record of another login is made with chown")
	}
	fnShells(t, func(t *testing.T, sh []string, root string) {
		store, _, _ := fnPaths(root)
		rs := filepath.Join(store, ".rollouts")
		victim := filepath.Join(root, "victim")
		fnWrite(t, filepath.Join(victim, "plan"), "hoist-rollout/1 id=x\n")
		os.Symlink("to", filepath.Join(victim, "done"))
		rec := func(id string, parts ...string) string {
			d := filepath.Join(rs, id)
			if err := os.MkdirAll(d, 0o700); err != nil {
				t.Fatal(err)
			}
			fnWrite(t, filepath.Join(d, "plan"), "hoist-rollout/1 id="+id+" mode=batch from=a-1 to=a-2\n")
			for _, p := range parts {
				if name, val, ok := strings.Cut(p, "->"); ok {
					os.Symlink(val, filepath.Join(d, name))
				} else {
					fnWrite(t, filepath.Join(d, p), "")
				}
			}
			return d
		}
		old := "20261101T000000Z-"
		rec(old+"000001", "switched", "done->to")
		rec("20261201T000000Z-000002", "switched", "done->to")
		rec(old+"000003", "switched")
		os.Chown(rec(old+"000004", "done->from"), 65534, 65534)
		rec(old+"000005", "done->to", "extra->"+victim)
		os.Symlink(victim, filepath.Join(rs, old+"000006"))
		os.Chmod(rec(old+"00000a", "done->to"), 0o770)
		fnMkdir(t, filepath.Join(rs, ".new-"+old+"000007"))
		fnMkdir(t, filepath.Join(rs, ".new-20261201T000000Z-000008"))
		os.Symlink("runtimes/a-2", filepath.Join(root, ".rollout-"+old+"000001.next"))
		os.Symlink("runtimes/a-1", filepath.Join(root, ".rollout-"+old+"000003.back"))
		fnWrite(t, filepath.Join(root, ".rollout-"+old+"000009.next"), "")
		// Another login's link, and a .new- that is a link or theirs.
		os.Symlink("runtimes/a-2", filepath.Join(root, ".rollout-"+old+"00000b.next"))
		os.Lchown(filepath.Join(root, ".rollout-"+old+"00000b.next"), 65534, 65534)
		os.Symlink(victim, filepath.Join(rs, ".new-"+old+"00000c"))
		fnMkdir(t, filepath.Join(rs, ".new-"+old+"00000d"))
		os.Chown(filepath.Join(rs, ".new-"+old+"00000d"), 65534, 65534)
		// Everything but the fresh ones ten days old.
		for _, p := range []string{rs + "/" + old + "*", rs + "/" + old + "*/*", rs + "/.new-" + old + "*", root + "/.rollout-*", victim, victim + "/*"} {
			paths, _ := filepath.Glob(p)
			for _, q := range paths {
				if out, err := exec.Command("touch", "-h", "-d", "10 days ago", q).CombinedOutput(); err != nil {
					t.Fatalf("touch %s: %v %s", q, err, out)
				}
			}
		}
		r := fnRun{fns: []string{"h_gc_records"}, defs: "h_owned() { :; }", call: "h_gc_records"}.do(t, sh, root)
		if r.rc != 0 {
			t.Fatalf("%s: rc %d: %s", sh[0], r.rc, r.stderr)
		}
		var swept []string
		for _, l := range r.said {
			swept = append(swept, strings.TrimSuffix(strings.TrimPrefix(l, "SWEEP "), " done"))
		}
		want := []string{"runtimes/.rollouts/" + old + "000001", "runtimes/.rollouts/.new-" + old + "000007", ".rollout-" + old + "000001.next"}
		if strings.Join(swept, ",") != strings.Join(want, ",") {
			t.Errorf("%s: swept %q, want %q", sh[0], swept, want)
		}
		for _, p := range []string{rs + "/20261201T000000Z-000002/done", rs + "/" + old + "000003/plan", rs + "/" + old + "000004/plan",
			rs + "/" + old + "000005/extra", rs + "/" + old + "000006", rs + "/" + old + "00000a/done", rs + "/.new-20261201T000000Z-000008",
			root + "/.rollout-" + old + "000003.back", root + "/.rollout-" + old + "000009.next", root + "/.rollout-" + old + "00000b.next",
			rs + "/.new-" + old + "00000c", rs + "/.new-" + old + "00000d", victim + "/plan", victim + "/done"} {
			if _, err := os.Lstat(p); err != nil {
				t.Errorf("%s: %s was removed", sh[0], p)
			}
		}
	})
}

// TestShSettleLeavesOthersRecords: h_settle settles (runs the restart of,
// and finishes) only a record that is this login's and that no one else
// may write: another login's record in a team store, and one others may
// write, are left unfinished, their restart never run.
func TestShSettleLeavesOthersRecords(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: a record of another login is made with chown")
	}
	fnShells(t, func(t *testing.T, sh []string, root string) {
		store, _, _ := fnPaths(root)
		fnMkdir(t, filepath.Join(store, "a-1"))
		fnMkdir(t, filepath.Join(store, "a-2"))
		fnMkdir(t, filepath.Join(root, "scr"))
		// The dead command had reverted already: current is the from.
		os.Symlink(StoreDir+"/a-1", filepath.Join(root, "current"))
		rec := func(id string) string {
			d := filepath.Join(store, ".rollouts", id)
			if err := os.MkdirAll(d, 0o700); err != nil {
				t.Fatal(err)
			}
			fnWrite(t, filepath.Join(d, "plan"), "hoist-rollout/1 id="+id+" mode=single from=a-1 to=a-2 since=1 deadline=5000\n")
			fnWrite(t, filepath.Join(d, "switched"), "")
			fnWrite(t, filepath.Join(d, "restart"), "touch '"+root+"/ran-"+id+"'\n")
			return d
		}
		theirs, open, mine := rec("r-theirs"), rec("r-open"), rec("r-mine")
		for _, p := range []string{theirs, theirs + "/plan", theirs + "/switched", theirs + "/restart"} {
			os.Chown(p, 65534, 65534)
		}
		os.Chmod(open, 0o770)
		r := fnRun{fns: []string{"h_settle"}, vars: map[string]string{"h_scr": filepath.Join(root, "scr")}, defs: "h_fence() { :; }", call: "h_settle"}.do(t, sh, root)
		if r.rc != 0 {
			t.Fatalf("%s: rc %d: %s", sh[0], r.rc, r.stderr)
		}
		if v, err := os.Readlink(filepath.Join(mine, "done")); err != nil || v != "from" {
			t.Errorf("%s: this login's record: done %q %v, want from", sh[0], v, err)
		}
		if _, err := os.Stat(filepath.Join(root, "ran-r-mine")); err != nil {
			t.Errorf("%s: this login's record's restart did not run", sh[0])
		}
		for _, id := range []string{"r-theirs", "r-open"} {
			if _, err := os.Stat(filepath.Join(root, "ran-"+id)); err == nil {
				t.Errorf("%s: %s's restart ran as this login", sh[0], id)
			}
			if _, err := os.Lstat(filepath.Join(store, ".rollouts", id, "done")); err == nil {
				t.Errorf("%s: %s was settled", sh[0], id)
			}
		}
	})
}

// TestShStatusSaysEachPart: h_rrecord says a record's parts, the known
// ones in their order and any other after them, and stops at the first
// part that is not what hoist makes (a link out of the record, a known
// link with a value it never has, a directory), following nothing.
func TestShStatusSaysEachPart(t *testing.T) {
	fnShells(t, func(t *testing.T, sh []string, root string) {
		store, _, _ := fnPaths(root)
		mk := func(id string, parts ...string) {
			d := filepath.Join(store, ".rollouts", id)
			fnWrite(t, filepath.Join(d, "plan"), "hoist-rollout/1 id="+id+" mode=atomic\n")
			for _, p := range parts {
				if name, val, ok := strings.Cut(p, "->"); ok {
					os.Symlink(val, filepath.Join(d, name))
				} else if name, ok := strings.CutSuffix(p, "/"); ok {
					fnMkdir(t, filepath.Join(d, name))
				} else {
					fnWrite(t, filepath.Join(d, p), "")
				}
			}
		}
		mk("good", "zeta", "done->to", "hold->beat", "vote->ready", "switched")
		mk("out", "vote->ready", "hold->/etc")
		mk("value", "decision->maybe")
		mk("dir", "switched", "closed/")
		want := map[string][]string{
			"good":  {"RECORD good hoist-rollout/1 id=good mode=atomic", "RPART good switched file", "RPART good vote ready", "RPART good done to", "RPART good hold beat", "RPART good zeta file"},
			"out":   {"RECORD out hoist-rollout/1 id=out mode=atomic", "RPART out vote ready", "JOURNAL out runtimes/.rollouts/out/hold"},
			"value": {"RECORD value hoist-rollout/1 id=value mode=atomic", "JOURNAL value runtimes/.rollouts/value/decision"},
			"dir":   {"RECORD dir hoist-rollout/1 id=dir mode=atomic", "RPART dir switched file", "JOURNAL dir runtimes/.rollouts/dir/closed"},
		}
		for id, w := range want {
			r := fnRun{fns: []string{"h_rrecord"}, call: "h_rrecord \"$h_store/.rollouts/" + id + "\""}.do(t, sh, root)
			if strings.Join(r.said, "\n") != strings.Join(w, "\n") {
				t.Errorf("%s: %s: said\n%s\nwant\n%s", sh[0], id, strings.Join(r.said, "\n"), strings.Join(w, "\n"))
			}
		}
	})
}
