package shellcmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestShSayUnfinishedNamesOpenRecords: h_sayunfin, which list, lock
// status and run call, says UNFINISHED for every record with a plan and
// no done (a done that is a dangling link counts as done), with its mode,
// from, to and the state its parts tell (decided, voted, switched,
// prepared), and nothing for a finished record, a tombstone, a record
// being prepared, a record that is a link, or a name not shaped like an
// id. It runs with no PATH at all: builtins only, so no process, on every
// shell; and it changes nothing.
func TestShSayUnfinishedNamesOpenRecords(t *testing.T) {
	fnShells(t, func(t *testing.T, sh []string, root string) {
		store, _, _ := fnPaths(root)
		rs := filepath.Join(store, ".rollouts")
		rec := func(id, plan string, parts ...string) string {
			d := filepath.Join(rs, id)
			fnMkdir(t, d)
			if plan != "" {
				fnWrite(t, filepath.Join(d, "plan"), plan)
			}
			for _, p := range parts {
				if name, val, ok := strings.Cut(p, "->"); ok {
					os.Symlink(val, filepath.Join(d, name))
				} else {
					fnWrite(t, filepath.Join(d, p), "")
				}
			}
			return d
		}
		id := func(n string) string { return "20261201T000000Z-00000" + n }
		line := func(n, rest string) string { return "hoist-rollout/1 id=" + id(n) + " " + rest + " token=t lease=30\n" }
		rec(id("1"), line("1", "mode=batch from=a-1 to=a-2"), "switched", "restart")
		rec(id("2"), line("2", "mode=single from=- to=a-2"))
		rec(id("3"), line("3", "mode=atomic from=a-1 to=a-2 index=1 decider=0"), "switched", "vote->ready")
		rec(id("4"), line("4", "mode=atomic from=a-1 to=a-2 index=0 decider=0"), "switched", "decision->commit")
		rec(id("5"), line("5", "mode=batch from=a-1 to=a-2"), "switched", "done->to")
		rec(id("6"), "", "decision->abort") // a tombstone
		rec(id("7"), strings.TrimSuffix(line("7", "mode=batch from=a%2D1 to=a-3"), "\n"))
		rec(".new-"+id("8"), line("8", "mode=batch from=a-1 to=a-2"))
		rec("not-an-id", line("9", "mode=batch from=a-1 to=a-2"))
		os.Symlink(rec(filepath.Join("..", "elsewhere"), line("a", "mode=batch from=a-1 to=a-2")), filepath.Join(rs, id("a")))
		before := fnTree(t, root)
		r := fnRun{fns: []string{"h_sayunfin"},
			defs: "h_t_said=\nh_say() { h_t_said=\"$h_t_said$*\n\"; }",
			call: "h_t_path=$PATH\nPATH=/nonexistent\nh_sayunfin\nh_t_rc=$?\nPATH=$h_t_path\n" +
				"printf '%s' \"$h_t_said\" | while IFS= read -r h_t_l; do printf '%s %s\\n' \"$h_marker\" \"$h_t_l\"; done\nreturn $h_t_rc"}.do(t, sh, root)
		if r.rc != 0 {
			t.Fatalf("%s: rc %d: %s", sh[0], r.rc, r.stderr)
		}
		want := []string{
			"UNFINISHED " + id("1") + " batch a-1 a-2 switched",
			"UNFINISHED " + id("2") + " single - a-2 prepared",
			"UNFINISHED " + id("3") + " atomic a-1 a-2 voted",
			"UNFINISHED " + id("4") + " atomic a-1 a-2 decided",
			"UNFINISHED " + id("7") + " batch a%2D1 a-3 prepared",
		}
		if strings.Join(r.said, "\n") != strings.Join(want, "\n") {
			t.Errorf("%s said:\n%s\nwant:\n%s", sh[0], strings.Join(r.said, "\n"), strings.Join(want, "\n"))
		}
		if after := fnTree(t, root); strings.Join(after, "\n") != strings.Join(before, "\n") {
			t.Errorf("%s: h_sayunfin changed the store:\nbefore %v\nafter  %v", sh[0], before, after)
		}
	})
}
