package shellcmd

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// Numbers past 32 bits. mksh counts in 32 bits, in $(( )) and in test's
// -lt and -gt alike: 2 GiB of runtime, 2 TiB free, a run's output past
// 2 GiB, the lock's time in milliseconds, a --keep of ten digits. These
// tests give each function such a number under every shell; the programs
// that would have to read gigabytes to say it (df, wc) are doubles.

// fnDF is a df -Pk double that says FREE KiB are available.
func fnDF(free string) string {
	return `df() { printf 'Filesystem 1024-blocks Used Available Capacity Mounted on\nfs 9 0 %s 1%% /\n' ` + free + `; }`
}

// TestShRoomPast2GiB: a push of a runtime over 1 GiB, which needs twice its
// size free, is refused by h_op_pushcheck on a disk with less; a promotion
// (h_room . 1 4096) of 2 GiB on a disk with more than 2 TiB free goes on.
func TestShRoomPast2GiB(t *testing.T) {
	const id = "app-0123456789ab"
	fnShells(t, func(t *testing.T, sh []string, root string) {
		r := fnRun{fns: []string{"h_op_pushcheck"}, defs: fnDF("3000000"),
			vars: map[string]string{"hp_id": id, "hp_digest": strings.Repeat("a", 64), "hp_size": "2147483648", "hp_entries": "1", "hp_stok": fnThird},
			call: "h_op_pushcheck"}.do(t, sh, root)
		if want := "ERROR space 4195333 3000000"; !slices.Contains(r.said, want) {
			t.Errorf("%s: pushcheck of 2 GiB with 2.9 GiB free said %q, want %q", sh[0], r.said, want)
		}
		r = fnRun{fns: []string{"h_room"}, defs: fnDF("3000000000"),
			vars: map[string]string{"hp_size": "2147483648", "hp_entries": "1000"},
			call: "h_room . 1 4096"}.do(t, sh, root)
		if r.rc != 0 || len(r.said) != 0 {
			t.Errorf("%s: h_room of 2 GiB with 2.8 TiB free: %d, said %q; want room", sh[0], r.rc, r.said)
		}
	})
}

// TestShRoomWithoutAwk: a runtime of less than 100 MB is summed and
// compared by the shell, awk never started (its double complains), with
// the numbers awk gives: refused on a disk with less room (2 MB in 8
// entries, twice, needs 4967 KiB), let through with more, with free space
// of eleven digits, and when df says nothing.
func TestShRoomWithoutAwk(t *testing.T) {
	noAwk := `awk() { echo "awk was run" >&2; return 1; }`
	fnShells(t, func(t *testing.T, sh []string, root string) {
		for _, tc := range []struct {
			df   string
			want []string
		}{
			{fnDF("4966"), []string{"ERROR space 4967 4966"}},
			{fnDF("4967"), nil},
			{fnDF("12345678901"), nil},
			{`df() { return 1; }`, nil},
		} {
			r := fnRun{fns: []string{"h_room"}, defs: tc.df + "\n" + noAwk,
				vars: map[string]string{"hp_size": "2000000", "hp_entries": "8"},
				call: "h_room . 2 4608"}.do(t, sh, root)
			if wantRC := min(len(tc.want), 1); r.rc != wantRC || !slices.Equal(r.said, tc.want) {
				t.Errorf("%s: h_room with %s: %d, said %q; want %d, %q", sh[0], tc.df, r.rc, r.said, wantRC, tc.want)
			}
		}
	})
}

// TestShResumePast2GiB: a cut upload past 2 GiB resumes from its cut, in
// whole 64 KiB blocks (dd's double says what it was asked to copy).
func TestShResumePast2GiB(t *testing.T) {
	const id, stage = "app-0123456789ab", ".stage-" + fnOther
	digest := strings.Repeat("a", 64)
	fnShells(t, func(t *testing.T, sh []string, root string) {
		store, _, _ := fnPaths(root)
		fnMkdir(t, store)
		mkdirMode(t, filepath.Join(store, stage), 0o700)
		fnWrite(t, filepath.Join(store, stage, "artifact.tar"), "the bytes kept")
		fnWrite(t, filepath.Join(store, stage, "resume"), id+" "+digest+" 1048576\n")
		fnWrite(t, filepath.Join(store, stage, "cut"), "2600000000\n")
		r := fnRun{fns: []string{"h_resume"},
			vars: map[string]string{"hp_id": id, "hp_digest": digest, "hp_stok": fnThird, "hp_skey": "k",
				"h_stage": store + "/.stage-" + fnThird},
			defs: `wc() { echo 3000000000; }
				dd() { printf '%s\n' "$*" >"$h_root.dd"; : >artifact.new; }`,
			call: "h_resume"}.do(t, sh, root)
		if r.rc != 0 || len(r.said) != 1 || !strings.HasPrefix(r.said[0], "RESUME "+id+" 2599944192 ") {
			t.Errorf("%s: h_resume = %d, said %q; want RESUME %s 2599944192 (the cut, 2600000000, in whole 64 KiB blocks)", sh[0], r.rc, r.said, id)
		}
		if got, _ := os.ReadFile(root + ".dd"); !strings.Contains(string(got), "count=39672") {
			t.Errorf("%s: dd was asked %q, want count=39672 blocks of 64 KiB", sh[0], got)
		}
	})
}

// TestShLogsPast2GiB: a reader's offset into a run's output past 2 GiB, in
// a record trimmed to its tail or not, is where the output has it.
func TestShLogsPast2GiB(t *testing.T) {
	info := "hoist-run/1 id=" + fnMe + " start=1700000000 pid=99999999 token=" + fnMe + " lease=1200 who=u%40h cmd=make%20x\n"
	for _, c := range []struct {
		name, cut, oo string
		said          []string
		outAt         int
	}{
		// 3000000000 bytes, of which the last 100 are kept.
		{"from the start of a trimmed record", "3000000000 10\n", "0", []string{"CUT out 2999999900"}, 0},
		{"inside what a trimmed record kept", "3000000000 10\n", "2999999960", nil, 60},
		// A running run, not trimmed: a reader that has 3000000000 bytes
		// has all 100 there are here, and gets nothing more.
		{"past the end of an output", "", "3000000000", nil, 100},
	} {
		t.Run(c.name, func(t *testing.T) {
			fnShells(t, func(t *testing.T, sh []string, root string) {
				scr, out, _ := fnRunRecord(t, root, info, 100, 10)
				fnWrite(t, scr+"/status", "3 1700000100\n")
				if c.cut != "" {
					fnWrite(t, scr+"/cut", c.cut)
				}
				r := fnRun{fns: []string{"h_op_logs"}, vars: map[string]string{"h_scr": scr, "hp_oo": c.oo, "hp_eo": "0"},
					call: "h_op_logs >logs.out 2>logs.err"}.do(t, sh, root)
				said, gotOut, _ := fnLogs(t, filepath.Dir(root))
				if len(said) > 0 {
					said = said[:len(said)-1] // RUNSTATE
				}
				if r.rc != 0 || strings.Join(said, "\n") != strings.Join(c.said, "\n") || gotOut != out[c.outAt:] {
					t.Errorf("%s: offset %s: said %q and printed %d bytes; want %q and the %d bytes from %d", sh[0], c.oo, said, len(gotOut), c.said, len(out)-c.outAt, c.outAt)
				}
			})
		})
	}
}

// TestShTrimPast2GiB: a finished run's output past 2 GiB is cut to its
// tail, and "cut" records its whole size as wc gave it.
func TestShTrimPast2GiB(t *testing.T) {
	fnShells(t, func(t *testing.T, sh []string, root string) {
		scr, _, _ := fnRunRecord(t, root, "", 2000, 10)
		r := fnRun{fns: []string{"h_trim"}, vars: map[string]string{"h_scr": scr},
			// The out file "is" 3000000000 bytes.
			defs: `wc() { h_t_n=$(command wc -c); if [ "$h_t_n" -gt 1000 ]; then echo "  3000000000"; else echo "$h_t_n"; fi; }`,
			call: `h_trim "$h_scr"`}.do(t, sh, root)
		if got, _ := os.ReadFile(scr + "/cut"); r.rc != 0 || string(got) != "3000000000 10\n" {
			t.Errorf("%s: h_trim = %d, cut %q; want \"3000000000 10\"", sh[0], r.rc, got)
		}
	})
}

// TestShDoctorSpacePast2TiB: more than 2 TiB free is plenty, in MiB.
func TestShDoctorSpacePast2TiB(t *testing.T) {
	fnShells(t, func(t *testing.T, sh []string, root string) {
		r := fnRun{fns: []string{"h_dr_store"}, defs: fnDF("3000000000"), call: "h_dr_store"}.do(t, sh, root)
		var space string
		for _, l := range r.said {
			if strings.HasPrefix(l, "CHECK space ") {
				space = l
			}
		}
		if !strings.HasPrefix(space, "CHECK space ok 3000000000 2929687 MiB free at ") {
			t.Errorf("%s: with 3000000000 KiB free, doctor says %q, want the space ok, 2929687 MiB", sh[0], space)
		}
	})
}

// TestShOrderWithoutAwk: the lock's time in milliseconds, when awk gives no
// place, is written whole: times a thousand it passes 32 bits.
func TestShOrderWithoutAwk(t *testing.T) {
	fnShells(t, func(t *testing.T, sh []string, root string) {
		r := fnRun{fns: []string{"h_order"}, vars: map[string]string{"h_since": "1700000000"},
			defs: "awk() { return 1; }", call: "h_order; h_lasterr=$h_ord"}.do(t, sh, root)
		fnWantVars(t, sh, r, map[string]string{"h_lasterr": "1700000000000"})
	})
}

// TestShGCKeepsTenDigits: gc --keep 4294967297 keeps every runtime.
func TestShGCKeepsTenDigits(t *testing.T) {
	fnShells(t, func(t *testing.T, sh []string, root string) {
		store, _, _ := fnPaths(root)
		for _, id := range []string{"a-000000000001", "a-000000000002"} {
			fnMkdir(t, filepath.Join(store, id))
			fnWrite(t, filepath.Join(store, ".meta", id), "name=a\npromoted=1700000000\n")
		}
		r := fnRun{fns: []string{"h_op_gc"}, vars: map[string]string{"hp_keep": "4294967297", "hp_dry": "1"},
			// Taken and released, and nothing in use, as far as this test goes.
			defs: `h_take() { :; }
				h_release_end() { :; }
				h_inuse() { :; }`,
			call: "h_op_gc"}.do(t, sh, root)
		want := []string{"KEEP newest a-000000000001", "KEEP newest a-000000000002"}
		if got := slices.DeleteFunc(slices.Clone(r.said), func(s string) bool { return !strings.HasPrefix(s, "KEEP newest") && !strings.HasPrefix(s, "DELETE") }); !slices.Equal(got, want) {
			t.Errorf("%s: gc --keep 4294967297 said %q, want %q", sh[0], r.said, want)
		}
	})
}

// TestShAgeFarAhead: a file dated more than 2^31 seconds ahead of the
// clock has no age (it could read as ages old in 32 bits), and one a few
// seconds old has its own.
func TestShAgeFarAhead(t *testing.T) {
	fnShells(t, func(t *testing.T, sh []string, root string) {
		dir := filepath.Dir(root)
		far, near := filepath.Join(dir, "far"), filepath.Join(dir, "near")
		fnWrite(t, far, "")
		fnWrite(t, near, "")
		// 2^32 + 10^9 seconds: 2137, which 32 bits read as 2001.
		if err := os.Chtimes(far, time.Unix(5294967296, 0), time.Unix(5294967296, 0)); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(near, time.Now().Add(-time.Minute), time.Now().Add(-time.Minute)); err != nil {
			t.Fatal(err)
		}
		r := fnRun{fns: []string{"h_age"}, vars: map[string]string{"h_t_far": far, "h_t_near": near},
			call: `if h_age "$h_t_far"; then h_lasterr="far: $h_a"; else h_lasterr="far: none$h_t"; fi
				h_age "$h_t_near" && h_why=$h_a`}.do(t, sh, root)
		if r.v["h_lasterr"] != "far: none" || r.v["h_why"] < "59" || len(r.v["h_why"]) > 3 {
			t.Errorf("%s: %s; near: %q; want no age far ahead, about 60 s near", sh[0], r.v["h_lasterr"], r.v["h_why"])
		}
	})
}
