package shellcmd

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// TestShGuardWokenBetweenNaps: a USR1 that reaches the guardian while it
// works between two naps (here a copy of the run's output that takes a
// second) makes it skip the next nap, so that a run's end never waits out a
// poll. With naps of 5 s, the guardian ends about 2 s after it started (the
// slow copy, then its last one); one that took the nap would take 7.
func TestShGuardWokenBetweenNaps(t *testing.T) {
	cat, err := exec.LookPath("cat")
	if err != nil {
		t.Fatal(err)
	}
	fnShells(t, func(t *testing.T, sh []string, root string) {
		bin := filepath.Join(t.TempDir(), "bin")
		fnWrite(t, filepath.Join(bin, "cat"), "#!/bin/sh\nsleep 1\nexec "+cat+" \"$@\"\n")
		if err := os.Chmod(filepath.Join(bin, "cat"), 0o755); err != nil {
			t.Fatal(err)
		}
		scr := filepath.Join(t.TempDir(), "scr")
		fnWrite(t, filepath.Join(scr, "out"), "what the command wrote\n")
		fnWrite(t, filepath.Join(scr, "err"), "")
		start := time.Now()
		r := fnRun{fns: []string{"h_guard"}, vars: map[string]string{"h_scr": scr, "h_nap": "5", "h_since": "1"},
			defs: "PATH='" + bin + "':$PATH",
			call: `h_guard 1 >/dev/null 2>&1 &
h_gp=$!
sleep 0.5
: >"$h_scr/done"
kill -s USR1 "$h_gp"
wait "$h_gp"`}.do(t, sh, root)
		took := time.Since(start)
		if r.rc != 0 {
			t.Fatalf("%s: the guardian ended with %d: %s", sh[0], r.rc, r.stderr)
		}
		if took > 4500*time.Millisecond {
			t.Errorf("%s: the guardian took %v to end after it was woken between naps of 5 s: it took a nap", sh[0], took.Round(time.Millisecond))
		}
	})
}

// TestShRunStatus: h_status writes "<status> <end>" in one write, private
// under the run's umask 077, its end the run's start (h_since) plus the
// seconds /proc/uptime counted since h_stamp (here five), or the clock
// where there is no uptime reading; a status that cannot be written (a full
// disk: /dev/full) leaves no file, as if the end had not been seen.
func TestShRunStatus(t *testing.T) {
	for _, c := range []struct {
		name, setup string
		want        func(end int64) bool
	}{
		{"five seconds of uptime after the start", `h_since=1700000000; h_uptime; h_up0=$((h_upt - 5))`,
			func(end int64) bool { return end == 1700000005 || end == 1700000006 }},
		{"no uptime reading", `h_since=1700000000; h_up0=`,
			func(end int64) bool { return end >= time.Now().Unix()-5 && end <= time.Now().Unix()+1 }},
		{"a full disk", `ln -s /dev/full "$h_scr/status"`, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			fnShells(t, func(t *testing.T, sh []string, root string) {
				scr := filepath.Join(t.TempDir(), "scr")
				if err := os.MkdirAll(scr, 0o700); err != nil {
					t.Fatal(err)
				}
				r := fnRun{fns: []string{"h_status", "h_stamp"}, vars: map[string]string{"h_scr": scr},
					call: "umask 077\n" + c.setup + "\nh_status 3"}.do(t, sh, root)
				if c.want == nil {
					// Not read: what is left may be the link to /dev/full.
					if _, err := os.Lstat(filepath.Join(scr, "status")); err == nil || r.rc != 0 {
						t.Fatalf("%s: h_status = %d on a full disk (a status left: %v): want 0 and none", sh[0], r.rc, err == nil)
					}
					return
				}
				got, err := os.ReadFile(filepath.Join(scr, "status"))
				var end int64
				if n, _ := fmt.Sscanf(string(got), "3 %d\n", &end); err != nil || n != 1 || !c.want(end) || r.rc != 0 {
					t.Fatalf("%s: h_status = %d, wrote %q (%v)", sh[0], r.rc, got, err)
				}
				if fi, err := os.Stat(filepath.Join(scr, "status")); err != nil || fi.Mode().Perm() != 0o600 {
					t.Errorf("%s: status is %v (%v), want 0600", sh[0], fi.Mode(), err)
				}
			})
		})
	}
}
