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
// stat of its record).
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
	for name, procs := range cmds {
		recStats, currents, prepared := 0, 0, 0
		for _, p := range procs {
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
		if name != "lock status" && prepared != 1 {
			t.Errorf("%s ran mkdir %d times for the lock's prepared directories, want 1 (a store only the login may write)", name, prepared)
		}
		if name == "push --activate" && (recStats != 1 || currents != 1) {
			t.Errorf("%s read its record's age %d times and current %d times, want 1 and 1 (one fence for the promotion and the switch, whose current was read once):\n%s",
				name, recStats, currents, procs.Tree())
		}
	}
}
