package e2e

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/hoistdev/hoist/e2e/sshd"
)

// TestHostRunsNoRedundantTools: the host starts no program for what the
// shell, or a program it starts anyway, already does (BenchmarkHostProcs
// counts them all). Each command is a new hoist process, as a script runs
// them: the facts probe reads the PID namespace with the stat that proves
// the stat flavour (no readlink); a push sums a small runtime's room in the
// shell (no awk after df); a promotion drops its claimed mark with the
// archive and its scratch directory with the stage (no rm of either alone);
// a lock in a store only the login may write is prepared with one mkdir;
// a switch makes its link without an rm before it and reads current once;
// and push --activate fences once, for the promotion and the switch (one
// stat of its record). A run reads the clock once and writes its status
// with the shell (no date or mv for it), and lock status and run start at
// most the processes their steps need (a run's guardian's naps aside,
// which its timing decides): a process that was cut and comes back fails.
func TestHostRunsNoRedundantTools(t *testing.T) {
	h := sshd.Start(t, sshd.Options{TraceProcs: true})
	root := filepath.Join(h.Dir, "store")
	c := newCLI(t, h, root)
	hoist := func(args ...string) sshd.Procs {
		t.Helper()
		mark := h.TraceMark(t)
		if r := c.run(args...); r.code != 0 {
			t.Fatalf("hoist %v: %s", args, r)
		}
		return h.Started(t, mark)
	}
	hoist("push", sourceTree(t, "v1"), "--name", "a", "--activate")
	cmds := map[string]sshd.Procs{
		"push --activate": hoist("push", sourceTree(t, "v2"), "--name", "b", "--activate"),
		"lock status":     hoist("lock", "status"),
		"run -- true":     hoist("run", "--", "true"),
	}
	// Each is a program's start of its argument vector, as strace prints it.
	never := []struct{ args, why string }{
		{`["readlink", "/proc/self/ns/pid"`, "the facts probe's namespace, which its stat reads"},
		{`["awk", "-v", "s=`, "h_room's sum, which the shell makes for a small runtime"},
		{`["rm", "-f", "claimed-`, "the claimed mark alone, which goes with the archive"},
		{`["rm", "-f", "` + root + `/.current-`, "a link that is not there before the switch makes it"},
		{`["rm", "-f", "` + root + `/.previous-`, "a link that is not there before the switch makes it"},
		{`["rm", "-rf", "` + root + `/runs/`, "the scratch directory alone, which goes with the stage"},
	}
	// The most processes each may start, the guardian's naps aside: the
	// connection's sshd (re-executed, and its two children), the login
	// shell that execs /bin/sh, the
	// loader's head, the facts probe's stat and sleep, h_paths' ls; for a
	// run the scratch directory's mkdir, the stdin watcher, the lock's
	// mkdir, date and mv, the command (setsid, true), the guardian, and
	// the release's mv, rmdir and rm (the message of the group's kill -0
	// comes through a file: no process).
	most := map[string]int{"lock status": 8, "run -- true": 18}
	for name, procs := range cmds {
		recStats, currents, prepared, naps := 0, 0, 0, 0
		for _, p := range procs {
			if len(p.Args) == 1 && (p.Args[0] == `["sleep", "0.1"]` || p.Args[0] == `["sleep", "0.25"]`) {
				naps++
			}
			for _, a := range p.Args {
				for _, n := range never {
					if strings.HasPrefix(a, n.args) {
						t.Errorf("%s ran %s: %s", name, a, n.why)
					}
				}
				if strings.HasPrefix(a, `["stat", "-c", "%Y", "`+root+`/runtimes/.store-lock/`) {
					recStats++
				}
				if a == `["readlink", "`+root+`/current"]` {
					currents++
				}
				if strings.HasPrefix(a, `["mkdir", "`+root+`/runtimes/.store-lock.new-`) {
					prepared++
				}
			}
		}
		if n, ok := most[name]; ok && len(procs)-naps > n {
			t.Errorf("%s started %d processes (and %d naps), want at most %d: %s\n%s", name, len(procs)-naps, naps, n, procs.Top(), procs.Tree())
		}
		if progs := procs.Programs(); name == "run -- true" && progs["date"] != 1 {
			t.Errorf("%s ran date %d times, want once (the lock's since; the status's end is counted from it)", name, progs["date"])
		}
		if name != "lock status" && prepared != 1 {
			t.Errorf("%s ran mkdir %d times for the lock's prepared directories, want 1 (a store only the login may write)", name, prepared)
		}
		if name == "push --activate" && (recStats != 1 || currents != 1) {
			t.Errorf("%s read its record's age %d times and current %d times, want 1 and 1 (one fence for the promotion and the switch, whose current was read once):\n%s",
				name, recStats, currents, procs.Tree())
		}
	}
}
