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
// from, to, the state its parts tell (decided, voted, switched,
// prepared) and whether the token its plan names holds the lock (a token
// directory with its record in the lock: held; a token directory without
// one, a link, a token not shaped like one, such as "..", which would
// lead out of the lock: -), and nothing for a finished record, a
// tombstone, a record being prepared, a record that is a link, or a name
// not shaped like an id. It runs with no PATH at all: builtins only, so no
// process, on every shell; and it changes nothing.
func TestShSayUnfinishedNamesOpenRecords(t *testing.T) {
	fnShells(t, func(t *testing.T, sh []string, root string) {
		store, lk, _ := fnPaths(root)
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
		tline := func(n, rest, tok string) string {
			return "hoist-rollout/1 id=" + id(n) + " " + rest + " token=" + tok + " lease=30\n"
		}
		line := func(n, rest string) string { return tline(n, rest, "0f-1") }
		// The lock: 0f-2 holds it; 0f-3's directory has no record (dead);
		// 0f-4's is a link to a directory with a record.
		fnWrite(t, filepath.Join(lk, "0f-2", "rec"), fnRec("0f-2", fnMach, fnBoot, fnNS, fnInit))
		fnMkdir(t, filepath.Join(lk, "0f-3"))
		fnWrite(t, filepath.Join(root, "elsewhere-lock", "rec"), fnRec("0f-4", fnMach, fnBoot, fnNS, fnInit))
		os.Symlink(filepath.Join(root, "elsewhere-lock"), filepath.Join(lk, "0f-4"))
		fnWrite(t, filepath.Join(store, "rec"), "") // what token=.. would find
		rec(id("b"), tline("b", "mode=batch from=a-1 to=a-2", "0f-2"), "switched")
		rec(id("c"), tline("c", "mode=atomic from=a-1 to=a-2 index=0 decider=0", "0f-3"), "switched", "vote->ready")
		rec(id("d"), tline("d", "mode=single from=a-1 to=a-2", "0f-4"))
		rec(id("e"), tline("e", "mode=single from=a-1 to=a-2", ".."))
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
			"UNFINISHED " + id("1") + " batch a-1 a-2 switched -",
			"UNFINISHED " + id("2") + " single - a-2 prepared -",
			"UNFINISHED " + id("3") + " atomic a-1 a-2 voted -",
			"UNFINISHED " + id("4") + " atomic a-1 a-2 decided -",
			"UNFINISHED " + id("7") + " batch a%2D1 a-3 prepared -",
			"UNFINISHED " + id("b") + " batch a-1 a-2 switched held",
			"UNFINISHED " + id("c") + " atomic a-1 a-2 voted -",
			"UNFINISHED " + id("d") + " single a-1 a-2 prepared -",
			"UNFINISHED " + id("e") + " single a-1 a-2 prepared -",
		}
		if strings.Join(r.said, "\n") != strings.Join(want, "\n") {
			t.Errorf("%s said:\n%s\nwant:\n%s", sh[0], strings.Join(r.said, "\n"), strings.Join(want, "\n"))
		}
		if after := fnTree(t, root); strings.Join(after, "\n") != strings.Join(before, "\n") {
			t.Errorf("%s: h_sayunfin changed the store:\nbefore %v\nafter  %v", sh[0], before, after)
		}
	})
}
