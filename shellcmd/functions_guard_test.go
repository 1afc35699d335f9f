package shellcmd

import (
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
