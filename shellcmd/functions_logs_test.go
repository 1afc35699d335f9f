package shellcmd

// Run records' output (runs.sh): h_trim keeps the end of a finished run's
// output, h_op_logs prints it from the offsets the client has (h_skip),
// h_runinfo reads a record's info and status.

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestShLogsTrim: h_trim keeps the last 64 KiB of each output of a finished
// run and writes their whole sizes to "cut", only when one of them is
// longer; the kept files are the login's own (0600).
func TestShLogsTrim(t *testing.T) {
	cases := []struct {
		name     string
		out, err int // sizes; -1: no file
		cut      string
	}{
		{"both short", 100, 10, ""},
		{"both exactly 64 KiB", 65536, 65536, ""},
		{"out one byte longer", 65537, 0, "65537 0\n"},
		{"out long", 100000, 10, "100000 10\n"},
		{"err long", 10, 70000, "10 70000\n"},
		{"both long", 1 << 20, 200000, "1048576 200000\n"},
		// Known bug: the 2>/dev/null in $(wc -c <"$h_scr/err" 2>/dev/null)
		// comes after the redirection that fails, so the shell complains.
		{"no err", 100000, -1, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fnShells(t, func(t *testing.T, sh []string, root string) {
				_, _, runs := fnPaths(root)
				scr := runs + "/" + fnMe
				fnMkdir(t, scr)
				whole := map[string]string{}
				for name, n := range map[string]int{"out": c.out, "err": c.err} {
					if n >= 0 {
						whole[name] = fnBytes(n, name)
						fnWrite(t, scr+"/"+name, whole[name])
					}
				}
				// Its complaints are read apart, so that a known one can be
				// told from the rest.
				r := fnRun{fns: []string{"h_trim"}, vars: map[string]string{"h_scr": scr}, call: "h_trim \"$h_scr\" 2>trim.err"}.do(t, sh, root)
				if r.rc != 0 {
					t.Errorf("%s: h_trim returned %d", sh[0], r.rc)
				}
				if e, _ := os.ReadFile(filepath.Join(filepath.Dir(root), "trim.err")); len(e) != 0 {
					t.Errorf("%s: h_trim wrote to stderr: %s", sh[0], e)
				}
				left := []string{"out"}
				if c.err >= 0 {
					left = append(left, "err")
				}
				if c.cut != "" {
					left = append(left, "cut")
				}
				fnWantTree(t, scr, left...)
				for name, w := range whole {
					if c.cut != "" && len(w) > 65536 {
						w = w[len(w)-65536:]
					}
					got, err := os.ReadFile(scr + "/" + name)
					if err != nil || string(got) != w {
						t.Errorf("%s: %s has %d bytes (%v), want the last %d of it", sh[0], name, len(got), err, len(w))
					}
					if fi, err := os.Stat(scr + "/" + name); c.cut != "" && (err != nil || fi.Mode().Perm() != 0o600) {
						t.Errorf("%s: %s is %v, want 0600 (%v)", sh[0], name, fi.Mode(), err)
					}
				}
				if got, _ := os.ReadFile(scr + "/cut"); string(got) != c.cut {
					t.Errorf("%s: cut = %q, want %q", sh[0], got, c.cut)
				}
			})
		})
	}
}

// TestShLogsSkip: h_op_logs prints a run's output from the offsets the
// client has, counted in the whole output: after h_trim kept the last
// 64 KiB, an offset before what was kept says CUT with the bytes lost and
// starts at the first kept byte, and one after it starts where the whole
// output had it (h_skip's arithmetic with "cut"). Then RUNSTATE.
func TestShLogsSkip(t *testing.T) {
	const outN, errN = 100000, 70000
	outCut, errCut := outN-65536, errN-65536
	info := "hoist-run/1 id=" + fnMe + " start=1700000000 pid=99999999 token=" + fnMe + " lease=1200 who=u%40h cmd=make%20x\n"
	state := "RUNSTATE 1700000000 1700000100 3 u%40h make%20x"
	cases := []struct {
		name     string
		out, err int    // whole sizes
		cut      string // a cut file to write instead of h_trim's
		oo, eo   int
		said     []string
		outAt    int // the first byte of the whole output printed
		errAt    int
	}{
		{name: "from the start of a cut run", out: outN, err: errN, oo: 0, eo: 0,
			said: []string{"CUT out " + fnItoa(outCut), "CUT err " + fnItoa(errCut), state}, outAt: outCut, errAt: errCut},
		{name: "one byte before what was kept", out: outN, err: errN, oo: outCut - 1, eo: errCut - 1,
			said: []string{"CUT out 1", "CUT err 1", state}, outAt: outCut, errAt: errCut},
		{name: "at the first byte kept", out: outN, err: errN, oo: outCut, eo: errCut, said: []string{state}, outAt: outCut, errAt: errCut},
		{name: "inside what was kept", out: outN, err: errN, oo: 90000, eo: errCut + 1, said: []string{state}, outAt: 90000, errAt: errCut + 1},
		{name: "at the end", out: outN, err: errN, oo: outN, eo: errN, said: []string{state}, outAt: outN, errAt: errN},
		{name: "err short, not cut", out: outN, err: 50, oo: 0, eo: 7,
			said: []string{"CUT out " + fnItoa(outCut), state}, outAt: outCut, errAt: 7},
		{name: "nothing cut", out: 100, err: 50, oo: 40, eo: 0, said: []string{state}, outAt: 40, errAt: 0},
		{name: "a cut file of odd content counts nothing cut", out: 100, err: 50, cut: "x y\n", oo: 40, eo: 3,
			said: []string{state}, outAt: 40, errAt: 3},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fnShells(t, func(t *testing.T, sh []string, root string) {
				scr, out, errs := fnRunRecord(t, root, info, c.out, c.err)
				fnWrite(t, scr+"/status", "3 1700000100\n")
				call := "h_trim \"$h_scr\"\n"
				if c.cut != "" {
					fnWrite(t, scr+"/cut", c.cut)
					call = ""
				}
				dir := filepath.Dir(root)
				r := fnRun{fns: []string{"h_trim", "h_op_logs"},
					vars: map[string]string{"h_scr": scr, "hp_oo": fnItoa(c.oo), "hp_eo": fnItoa(c.eo)},
					call: call + "h_op_logs >logs.out 2>logs.err"}.do(t, sh, root)
				if r.rc != 0 {
					t.Errorf("%s: h_op_logs returned %d", sh[0], r.rc)
				}
				said, gotOut, gotErr := fnLogs(t, dir)
				if strings.Join(said, "\n") != strings.Join(c.said, "\n") {
					t.Errorf("%s: said %q, want %q", sh[0], said, c.said)
				}
				if got, want := gotOut, out[c.outAt:]; got != want {
					t.Errorf("%s: stdout has %d bytes starting %.20q, want %d from byte %d (%.20q)", sh[0], len(got), got, len(want), c.outAt, want)
				}
				if got, want := gotErr, errs[c.errAt:]; got != want {
					t.Errorf("%s: stderr has %d bytes starting %.20q, want %d from byte %d (%.20q)", sh[0], len(got), got, len(want), c.errAt, want)
				}
			})
		})
	}
	// A reader that starts while h_trim works: here, after "cut" was
	// written and before the outputs were replaced by their tails. Whatever it prints must be the whole output's bytes from
	// its offset: the offset is no offset into the kept tail.
	fnShells(t, func(t *testing.T, sh []string, root string) {
		scr, out, _ := fnRunRecord(t, root, info, outN, 10)
		r := fnRun{fns: []string{"h_trim", "h_op_logs"},
			vars: map[string]string{"h_scr": scr, "hp_oo": "40000", "hp_eo": "0"},
			defs: `mv() { command mv "$@" && case $2 in */cut) h_op_logs >logs.out 2>logs.err ;; esac; }`,
			call: `h_trim "$h_scr"`}.do(t, sh, root)
		if r.rc != 0 {
			t.Errorf("%s: h_trim returned %d", sh[0], r.rc)
		}
		said, gotOut, _ := fnLogs(t, filepath.Dir(root))
		// Right: all of it from 40000, or what is left after a CUT that
		// says how much is missing.
		want := out[40000:]
		lost := len(want) - len(gotOut)
		right := strings.HasSuffix(want, gotOut) && (lost == 0 || slices.Contains(said, "CUT out "+fnItoa(lost)))
		if !right {
			t.Errorf("%s: a reader that starts between h_trim's write of \"cut\" and its cut of the outputs "+
				"must read from its offset in the whole output: from offset 40000 it printed %d bytes (said %q), want the last %d of the whole output",
				sh[0], len(gotOut), said, len(want))
		}
	})
	// A reader that opened the whole outputs just before h_trim replaced
	// them by their tails, and sizes them after ("cut" was already there;
	// wc's double does the replacing): it reads the whole file it holds,
	// from its offset, and nothing is cut for it.
	fnShells(t, func(t *testing.T, sh []string, root string) {
		scr, out, _ := fnRunRecord(t, root, info, outN, 10)
		fnWrite(t, scr+"/cut", fnItoa(outN)+" 10\n")
		r := fnRun{fns: []string{"h_op_logs"},
			vars: map[string]string{"h_scr": scr, "hp_oo": "40000", "hp_eo": "0"},
			// The first wc is h_skip's of out: the outputs are replaced
			// just before it opens the path.
			defs: `wc() {
				if [ -z "$h_t_done" ]; then
					h_t_done=1
					tail -c 65536 "$h_scr/out" >"$h_scr/out.t" && command mv "$h_scr/out.t" "$h_scr/out"
					command wc "$@" <"$h_scr/out"
					return
				fi
				command wc "$@"
			}`,
			call: `h_op_logs >logs.out 2>logs.err`}.do(t, sh, root)
		if r.rc != 0 {
			t.Errorf("%s: h_op_logs returned %d", sh[0], r.rc)
		}
		said, gotOut, _ := fnLogs(t, filepath.Dir(root))
		if want := out[40000:]; gotOut != want || slices.ContainsFunc(said, func(v string) bool { return strings.HasPrefix(v, "CUT") }) {
			t.Errorf("%s: a reader holding the whole output while it was trimmed printed %d bytes from offset 40000 (said %q), want the %d after it, nothing cut",
				sh[0], len(gotOut), said, len(want))
		}
	})
	// A run that is not one: NORUN.
	fnShells(t, func(t *testing.T, sh []string, root string) {
		_, _, runs := fnPaths(root)
		fnMkdir(t, runs+"/"+fnOther)
		for _, rid := range []string{"x", fnOther, "../" + fnMe} {
			r := fnRun{fns: []string{"h_op_logs"}, vars: map[string]string{"hp_rid": rid}, call: "h_op_logs"}.do(t, sh, root)
			if strings.Join(r.said, "\n") != "NORUN "+rid {
				t.Errorf("%s: h_op_logs of %q said %q, want NORUN", sh[0], rid, r.said)
			}
		}
	})
}

// fnEmpty stands for an empty file.
const fnEmpty = "(empty)"

// TestShLogsRunInfo: h_runinfo reads a run record's info and status: start
// (required, digits), pid (digits or nothing), who and cmd as encoded
// ("-" both when either has a character no encoding makes), and the end
// and status ("-" while it runs; "?" for a status nobody saw).
func TestShLogsRunInfo(t *testing.T) {
	info := func(fields string) string { return "hoist-run/1 id=" + fnMe + " " + fields + "\n" }
	good := info("start=1700000000 pid=4242 token=" + fnMe + " lease=1200 who=u%40h cmd=make%20x")
	type want struct{ st, pid, who, cmd, end, sta string }
	cases := []struct {
		name         string
		info, status string // "" for no file
		rc           int
		want         want
	}{
		{"running", good, "", 0, want{"1700000000", "4242", "u%40h", "make%20x", "-", "-"}},
		{"ended", good, "3 1700000100\n", 0, want{"1700000000", "4242", "u%40h", "make%20x", "1700000100", "3"}},
		{"ended 0", good, "0 1700000100\n", 0, want{"1700000000", "4242", "u%40h", "make%20x", "1700000100", "0"}},
		{"status nobody saw", good, "- 1700000100\n", 0, want{"1700000000", "4242", "u%40h", "make%20x", "1700000100", "?"}},
		{"odd status", good, "x$ y\n", 0, want{"1700000000", "4242", "u%40h", "make%20x", "-", "?"}},
		{"status without an end", good, "3\n", 0, want{"1700000000", "4242", "u%40h", "make%20x", "-", "3"}},
		{"status without a newline", good, "3 1700000100", 0, want{"1700000000", "4242", "u%40h", "make%20x", "1700000100", "3"}},
		// A status file being written (h_status writes it in one write,
		// and removes one it could not write): the run still runs.
		{"empty status", good, fnEmpty, 0, want{"1700000000", "4242", "u%40h", "make%20x", "-", "-"}},
		// One that read cannot finish (no newline): what read set is
		// checked all the same.
		{"odd status without a newline", good, "x$ y", 0, want{"1700000000", "4242", "u%40h", "make%20x", "-", "?"}},
		{"fields in another order", info("cmd=c who=w pid=1 start=5"), "", 0, want{"5", "1", "w", "c", "-", "-"}},
		{"no pid", info("start=5 who=w cmd=c"), "", 0, want{"5", "", "w", "c", "-", "-"}},
		{"odd pid", info("start=5 pid=1x who=w cmd=c"), "", 0, want{"5", "", "w", "c", "-", "-"}},
		{"no who, no cmd", info("start=5 pid=1"), "", 0, want{"5", "1", "-", "-", "-", "-"}},
		{"odd character in who", info("start=5 pid=1 who=u$x cmd=c"), "", 0, want{"5", "1", "-", "-", "-", "-"}},
		{"odd character in cmd", info("start=5 pid=1 who=w cmd=a*b"), "", 0, want{"5", "1", "-", "-", "-", "-"}},
		{"no start", info("pid=1 who=w cmd=c"), "", 1, want{}},
		{"odd start", info("start=5x pid=1"), "", 1, want{}},
		{"another format", "hoist-run/2 start=5 pid=1\n", "", 1, want{}},
		{"empty info", "\n", "", 1, want{}},
		{"no info", "", "", 1, want{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fnShells(t, func(t *testing.T, sh []string, root string) {
				_, _, runs := fnPaths(root)
				scr := runs + "/" + fnMe
				fnMkdir(t, scr)
				if c.info != "" {
					fnWrite(t, scr+"/info", c.info)
				}
				if c.status == fnEmpty {
					fnWrite(t, scr+"/status", "")
				} else if c.status != "" {
					fnWrite(t, scr+"/status", c.status)
				}
				r := fnRun{fns: []string{"h_runinfo"},
					call: fnCall(`h_runinfo "$h_runs/$hp_rid"`, "h_ist", "h_ipid", "h_iwho", "h_icmd", "h_iend", "h_ista")}.do(t, sh, root)
				if r.rc != c.rc {
					t.Errorf("%s: h_runinfo returned %d, want %d", sh[0], r.rc, c.rc)
				}
				if c.rc != 0 {
					return
				}
				v, _ := fnShown(r)
				want := map[string]string{"h_ist": c.want.st, "h_ipid": c.want.pid, "h_iwho": c.want.who,
					"h_icmd": c.want.cmd, "h_iend": c.want.end, "h_ista": c.want.sta}
				fnWant(t, sh, "h_runinfo", v, want)
			})
		})
	}
}

// TestShLogsWaitsForAWaitingRun: followed, a run whose scratch directory is
// there without a record (still waiting for the lock: its client may only
// have lost contact) is waited for: once it starts, its output and
// RUNSTATE come; if it gives up (its directory goes), NORUN. Not followed,
// it is NORUN at once. A run whose status is being written (an empty file:
// h_status writes it in one write) is followed until it has its line.
func TestShLogsWaitsForAWaitingRun(t *testing.T) {
	info := "hoist-run/1 id=" + fnMe + " start=1700000000 pid=99999999 token=" + fnMe + " lease=1200 who=u%40h cmd=make%20x\n"
	for _, c := range []struct {
		name   string
		follow string
		sleep  string // sleep's double: what happens during a poll
		said   []string
		out    string
		files  map[string]string // in the run's directory before
	}{
		{"starts", "1", `printf hi >"$h_scr/out"; : >"$h_scr/err"; echo "3 1700000100" >"$h_scr/status"; printf '%s' '` + info + `' >"$h_scr/info"`,
			[]string{"RUNSTATE 1700000000 1700000100 3 u%40h make%20x"}, "hi", nil},
		{"gives up", "1", `rm -rf "$h_scr"`, []string{"NORUN " + fnMe}, "", nil},
		{"not followed", "", `exit 9`, []string{"NORUN " + fnMe}, "", nil},
		// Its client asks to stop the run (a "stop" line): the waiter
		// gives up (here, as soon as the stop file is there).
		{"stopped by its client", "1", `h_t_n=$((h_t_n + 1))
			if [ "$h_t_n" = 1 ]; then echo stop >&8; fi
			if [ -f "$h_scr/stop" ]; then rm -rf "$h_scr"; elif [ "$h_t_n" -gt 1000 ]; then kill "$h_lp"; fi
			command sleep 0.01`, []string{"NORUN " + fnMe}, "", nil},
		// The follower's own client left (its stdin reader ended): it
		// ends, saying nothing.
		{"its client leaves", "1", `kill "$h_lp"`, nil, "", nil},
		// Killed while it waited: nothing touched its directory for five
		// minutes.
		{"quiet for five minutes", "1", `exit 9`, []string{"NORUN " + fnMe}, "", nil},
		{"its status being written", "1", `echo "3 1700000100" >"$h_scr/status"`,
			[]string{"RUNSTATE 1700000000 1700000100 3 u%40h make%20x"}, "", map[string]string{"info": info, "out": "", "err": "", "status": ""}},
	} {
		t.Run(c.name, func(t *testing.T) {
			fnShells(t, func(t *testing.T, sh []string, root string) {
				_, _, runs := fnPaths(root)
				scr := runs + "/" + fnMe
				fnMkdir(t, scr)
				if err := os.Chmod(scr, 0o700); err != nil {
					t.Fatal(err)
				}
				for name, content := range c.files {
					fnWrite(t, scr+"/"+name, content)
				}
				if c.name == "quiet for five minutes" {
					past := time.Now().Add(-6 * time.Minute)
					if err := os.Chtimes(scr, past, past); err != nil {
						t.Fatal(err)
					}
				}
				r := fnRun{fns: []string{"h_op_logs"}, vars: map[string]string{"h_scr": scr, "hp_follow": c.follow},
					// Its client's input stays open (a FIFO this shell also
					// holds for writing) until it returns: a client that left
					// ends the wait quietly. Then its stdin reader goes.
					defs: "sleep() { " + c.sleep + "; }",
					call: `mkfifo "$h_root/in" && exec 8<>"$h_root/in" || return 9
						h_op_logs <"$h_root/in" >logs.out 2>logs.err
						h_t_rc=$?
						kill "$h_lp" 2>/dev/null
						exec 8>&-
						return "$h_t_rc"`}.do(t, sh, root)
				said, out, _ := fnLogs(t, filepath.Dir(root))
				if r.rc != 0 || strings.Join(said, "\n") != strings.Join(c.said, "\n") || out != c.out {
					t.Fatalf("%s: h_op_logs = %d, said %q, printed %q; want %q, %q", sh[0], r.rc, said, out, c.said, c.out)
				}
			})
		})
	}
}
