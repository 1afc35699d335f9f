package shellcmd

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestShPromotionOrder: a promotion's place (h_order) is the lock's time in
// milliseconds or one past the highest place of any mark, whichever is
// larger; a mark of an earlier version counts as its promotion time in
// milliseconds; a place of more than 15 digits, or one that is no number,
// is not read; a FIFO among the marks is not opened. h_meta reads a mark's
// place the same way.
func TestShPromotionOrder(t *testing.T) {
	for _, c := range []struct {
		name  string
		marks map[string]string // id -> mark
		since string
		want  string
	}{
		{"no marks", nil, "1700000000", "1700000000000"},
		{"the clock ahead of every mark", map[string]string{"a-000000000001": "promoted=1600000000\norder=1600000000007\n"}, "1700000000", "1700000000000"},
		{"in the same second as the last", map[string]string{"a-000000000001": "promoted=1700000000\norder=1700000000000\n"}, "1700000000", "1700000000001"},
		{"the clock set back", map[string]string{
			"a-000000000001": "promoted=1700000000\norder=1700000000004\n",
			"a-000000000002": "promoted=1700000005\norder=1700000005000\n"}, "1600000000", "1700000005001"},
		{"an earlier version's mark, ahead", map[string]string{
			"a-000000000001": "promoted=1700000000\norder=1700000000004\n",
			"a-000000000002": "name=a\npromoted=1700000003\n"}, "1700000000", "1700000003001"},
		{"a place too long, or no number", map[string]string{
			"a-000000000001": "promoted=1700000000\norder=9999999999999999999999\n",
			"a-000000000002": "promoted=1600000000\norder=17x\n"}, "1500000000", "1700000000001"},
	} {
		t.Run(c.name, func(t *testing.T) {
			fnShells(t, func(t *testing.T, sh []string, root string) {
				store, _, _ := fnPaths(root)
				fnMkdir(t, store+"/.meta")
				for id, m := range c.marks {
					fnWrite(t, filepath.Join(store, ".meta", id), m)
				}
				if err := syscall.Mkfifo(filepath.Join(store, ".meta", "a-00000000000f"), 0o600); err != nil {
					t.Fatal(err)
				}
				r := fnRun{fns: []string{"h_order"}, vars: map[string]string{"h_since": c.since}, call: "h_order; h_lasterr=$h_ord"}.do(t, sh, root)
				fnWantVars(t, sh, r, map[string]string{"h_lasterr": c.want})
			})
		})
	}
	fnShells(t, func(t *testing.T, sh []string, root string) {
		store, _, _ := fnPaths(root)
		for id, m := range map[string]string{
			"a-000000000001": "promoted=1700000000\norder=0017\n",
			"a-000000000002": "promoted=1700000000\n",
			"a-000000000003": "promoted=1700000000\norder=1234567890123456\n",
			"a-000000000004": "promoted=x\n",
		} {
			fnWrite(t, filepath.Join(store, ".meta", id), m)
		}
		r := fnRun{fns: []string{"h_meta"}, call: `h_lasterr=
			for h_t_i in 1 2 3 4; do h_meta a-00000000000$h_t_i; h_lasterr="$h_lasterr $h_mord"; done`}.do(t, sh, root)
		fnWantVars(t, sh, r, map[string]string{"h_lasterr": " 0017 1700000000000 1700000000000 0"})
	})
}

// TestShOrderNeverOutgrowsItsWidth: h_order never gives a place h_meta
// would not read back (15 digits). A mark at the widest place (a forged
// or broken one: the clock's milliseconds are 13 digits until the year
// 2286) would otherwise freeze "newest" at it for good: the next place, 16
// digits, read as the promotion time. The place next to it is given, and
// read back as given; at the widest place itself h_order fails, naming the
// mark, and the promotion is refused.
func TestShOrderNeverOutgrowsItsWidth(t *testing.T) {
	fnShells(t, func(t *testing.T, sh []string, root string) {
		store, _, _ := fnPaths(root)
		fnWrite(t, filepath.Join(store, ".meta", "a-000000000001"), "promoted=1700000000\norder=999999999999998\n")
		r := fnRun{fns: []string{"h_order", "h_meta"}, vars: map[string]string{"h_since": "1700000100"},
			call: `h_order || return
				printf 'promoted=1700000100\norder=%s\n' "$h_ord" >"$h_store/.meta/a-000000000002"
				h_meta a-000000000002 && h_lasterr=$h_ord/$h_mord`}.do(t, sh, root)
		if r.rc != 0 || r.v["h_lasterr"] != "999999999999999/999999999999999" {
			t.Errorf("%s: next to the widest place: rc %d, given/read back %q, want 999999999999999 both", sh[0], r.rc, r.v["h_lasterr"])
		}
		r = fnRun{fns: []string{"h_order"}, vars: map[string]string{"h_since": "1700000200"}, call: "h_order"}.do(t, sh, root)
		if r.rc == 0 || !strings.Contains(r.v["h_lasterr"], StoreDir+"/.meta/a-000000000002") || !strings.Contains(r.v["h_lasterr"], "order=999999999999999") {
			t.Errorf("%s: at the widest place: rc %d, h_lasterr %q; want a failure naming the mark", sh[0], r.rc, r.v["h_lasterr"])
		}
	})
}
