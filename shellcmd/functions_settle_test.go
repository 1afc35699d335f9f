package shellcmd

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestShSettleChecksWhatItWentBackTo: h_settle runs each unfinished
// record's exec checks (its checks file) with the record's timing on the
// runtime it went back to, after the restart, and says SETTLED with how
// they went: healthy; unhealthy (the record is finished all the same,
// current stays where it is, and once every record is settled the
// command stops with ERROR unhealthy); a restart that failed counts as
// failed; a record with no checks file is unchecked; a record of an older
// hoist (no interval= in its plan) is settled as before, its checks not
// run (old); the dialled probes are counted, never run.
func TestShSettleChecksWhatItWentBackTo(t *testing.T) {
	fnShells(t, func(t *testing.T, sh []string, root string) {
		store, _, _ := fnPaths(root)
		fnMkdir(t, filepath.Join(store, "a-2"))
		fnWrite(t, filepath.Join(store, "a-1", "ok"), "")
		fnMkdir(t, filepath.Join(root, "scr"))
		// The dead commands had reverted already: current is the from.
		os.Symlink(StoreDir+"/a-1", filepath.Join(root, "current"))
		timing := " interval=100 timeout=2000 stable=0 dialled=2"
		rec := func(id, timing, checks, restart string) string {
			d := filepath.Join(store, ".rollouts", id)
			if err := os.MkdirAll(d, 0o700); err != nil {
				t.Fatal(err)
			}
			fnWrite(t, filepath.Join(d, "plan"), "hoist-rollout/1 id="+id+" mode=batch from=a-1 to=a-2 since=1 deadline=600"+timing+"\n")
			fnWrite(t, filepath.Join(d, "switched"), "")
			if checks != "" {
				fnWrite(t, filepath.Join(d, "checks"), checks+"\n")
			}
			if restart != "" {
				fnWrite(t, filepath.Join(d, "restart"), restart+"\n")
			}
			return d
		}
		recs := []string{rec("r1-pass", timing, "true\ntest -e ok", ""), rec("r2-fail", timing, "test -e ok\ntest -e missing", ""),
			rec("r3-restart", timing, "true", "exit 3"), rec("r4-none", timing, "", ""), rec("r5-old", "", "test -e missing", "")}
		r := fnRun{fns: []string{"h_settle"}, vars: map[string]string{"h_scr": filepath.Join(root, "scr")}, defs: "h_fence() { :; }", call: "h_settle"}.do(t, sh, root)
		want := []string{
			"SETTLED r1-pass from a-1 healthy 2 -",
			"SETTLED r2-fail from a-1 unhealthy 2 deadline: check2: exit 1",
			"SETTLED r3-restart from a-1 unhealthy 2 restart: exit 3",
			"SETTLED r4-none from a-1 unchecked 2 -",
			"SETTLED r5-old from a-1 old 0 -",
			"ERROR unhealthy r2-fail a-1 deadline: check2: exit 1",
		}
		if r.rc != 1 || !slices.Equal(r.said, want) {
			t.Fatalf("%s: rc %d, said:\n%s\nwant:\n%s\n%s", sh[0], r.rc, strings.Join(r.said, "\n"), strings.Join(want, "\n"), r.stderr)
		}
		for i, d := range recs {
			if v, err := os.Readlink(filepath.Join(d, "done")); err != nil || v != "from" {
				t.Errorf("%s: %s: done %q %v, want from (finished, whatever its checks said)", sh[0], filepath.Base(d), v, err)
			}
			// What its checks said is kept, for rollout status.
			if v, err := os.Readlink(filepath.Join(d, "recheck")); err != nil || v != strings.Fields(want[i])[4] {
				t.Errorf("%s: %s: recheck %q %v, want %s", sh[0], filepath.Base(d), v, err, strings.Fields(want[i])[4])
			}
		}
		if v, _ := os.Readlink(filepath.Join(root, "current")); v != StoreDir+"/a-1" {
			t.Errorf("%s: current is %q after the settle, want it left on a-1", sh[0], v)
		}
	})
}

// TestShSettleChecksACommit: an --atomic host that voted ready, told
// commit by a resume (h_settle1 DIR commit), finishes on the new runtime
// and runs the record's checks there: one that fails is said unhealthy,
// the record is finished on to (no revert: no ping-pong), and h_settle1
// returns 3.
func TestShSettleChecksACommit(t *testing.T) {
	fnShells(t, func(t *testing.T, sh []string, root string) {
		store, _, _ := fnPaths(root)
		fnMkdir(t, filepath.Join(store, "a-1"))
		fnMkdir(t, filepath.Join(store, "a-2"))
		fnMkdir(t, filepath.Join(root, "scr"))
		os.Symlink(StoreDir+"/a-2", filepath.Join(root, "current"))
		d := filepath.Join(store, ".rollouts", "r1")
		fnWrite(t, filepath.Join(d, "plan"), "hoist-rollout/1 id=r1 mode=atomic from=a-1 to=a-2 index=1 hosts=h0,h1 decider=0 since=1 deadline=500 interval=100 timeout=2000 stable=0 dialled=0\n")
		fnWrite(t, filepath.Join(d, "switched"), "")
		fnWrite(t, filepath.Join(d, "checks"), "test -e ok\n")
		os.Symlink("ready", filepath.Join(d, "vote"))
		r := fnRun{fns: []string{"h_settle1"}, vars: map[string]string{"h_scr": filepath.Join(root, "scr")}, defs: "h_fence() { :; }", call: `h_settle1 "$h_store/.rollouts/r1" commit`}.do(t, sh, root)
		want := []string{"SETTLED r1 to a-2 unhealthy 0 deadline: check1: exit 1"}
		if r.rc != 3 || !slices.Equal(r.said, want) {
			t.Fatalf("%s: rc %d, said %q, want 3 and %q: %s", sh[0], r.rc, r.said, want, r.stderr)
		}
		if v, err := os.Readlink(filepath.Join(d, "done")); err != nil || v != "to" {
			t.Errorf("%s: done %q %v, want to", sh[0], v, err)
		}
		if v, err := os.Readlink(filepath.Join(d, "recheck")); err != nil || v != "unhealthy" {
			t.Errorf("%s: recheck %q %v, want unhealthy", sh[0], v, err)
		}
		if v, _ := os.Readlink(filepath.Join(root, "current")); v != StoreDir+"/a-2" {
			t.Errorf("%s: current is %q, want it left on a-2", sh[0], v)
		}
	})
}

// TestShResumeSettlesOnlyItsOwnRecord: the resume (h_rresume) reads and
// settles a record only when it is this login's and only it may write it,
// as h_settle: a link at the record's name (to a directory with a plan and
// a restart), a file there, a record others may write, or another login's
// (root only: chown) stops it with ERROR journal … notown before any word
// is read, and no restart runs. Its own record is settled: the restart runs.
func TestShResumeSettlesOnlyItsOwnRecord(t *testing.T) {
	fnShells(t, func(t *testing.T, sh []string, root string) {
		store, _, _ := fnPaths(root)
		rs := filepath.Join(store, ".rollouts")
		rec := filepath.Join(rs, fnRid)
		ran := filepath.Join(root, "ran")
		fill := func(d string) {
			fnWrite(t, filepath.Join(d, "plan"), "hoist-rollout/1 id="+fnRid+" mode=batch from=a-1 to=a-2 since=1 deadline=30000\n")
			fnWrite(t, filepath.Join(d, "switched"), "")
			fnWrite(t, filepath.Join(d, "restart"), "touch '"+ran+"'\n")
			os.Chmod(d, 0o700)
		}
		for _, c := range []struct {
			name  string
			plant func()
			root  bool
		}{
			{"a link", func() { fill(filepath.Join(root, "elsewhere")); os.Symlink(filepath.Join(root, "elsewhere"), rec) }, false},
			{"a file", func() { fnWrite(t, rec, "x\n") }, false},
			{"others may write it", func() { fill(rec); os.Chmod(rec, 0o770) }, false},
			{"another login's", func() { fill(rec); os.Chown(rec, 65534, 65534) }, true},
			{"its own", func() { fill(rec) }, false},
		} {
			if c.root && os.Geteuid() != 0 {
				t.Logf("%s: %s: not root, no other login's record to plant", sh[0], c.name)
				continue
			}
			for _, p := range []string{rs, ran, filepath.Join(root, "elsewhere"), filepath.Join(root, "current")} {
				os.RemoveAll(p)
			}
			for _, id := range []string{"a-1", "a-2"} {
				fnMkdir(t, filepath.Join(store, id))
				fnWrite(t, filepath.Join(store, ".meta", id), "name=a\nsize=1\npromoted=1\ndigest=-\norder=1\n")
			}
			fnMkdir(t, filepath.Join(root, "scr"))
			fnMkdir(t, rs)
			os.Symlink(StoreDir+"/a-2", filepath.Join(root, "current"))
			c.plant()
			r := fnRun{fns: []string{"h_rresume"}, vars: map[string]string{"hp_hid": fnRid, "h_scr": filepath.Join(root, "scr")},
				defs: "h_fence() { :; }\nh_rwait() { h_got=settle; }", call: "h_rresume"}.do(t, sh, root)
			_, err := os.Stat(ran)
			restarted := err == nil
			if c.name == "its own" {
				if r.rc != 0 || !restarted || len(r.said) == 0 || !strings.HasPrefix(r.said[0], "PLAN "+fnRid) {
					t.Errorf("%s: %s: rc %d, restarted %v, said %q\n%s", sh[0], c.name, r.rc, restarted, r.said, r.stderr)
				}
				continue
			}
			if want := "ERROR journal " + StoreDir + "/.rollouts/" + fnRid + " notown"; r.rc != 1 || restarted || strings.Join(r.said, ",") != want {
				t.Errorf("%s: %s: rc %d, restarted %v, said %q, want %q and no restart", sh[0], c.name, r.rc, restarted, r.said, want)
			}
		}
	})
}
