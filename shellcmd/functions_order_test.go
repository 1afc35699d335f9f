package shellcmd

import (
	"path/filepath"
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
