package shellcmd

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// TestShFactsProbe: the facts probe says the machine as machine-id and
// uname -n, the login's uid as id -u, and the PID namespace as readlink of
// /proc/self/ns/pid names it, under every shell (it reads them from /proc
// where Linux has them, the namespace from one stat).
func TestShFactsProbe(t *testing.T) {
	host, err := exec.Command("uname", "-n").Output()
	if err != nil {
		t.Fatal(err)
	}
	id, _ := os.ReadFile("/etc/machine-id")
	wantMach := strings.TrimSpace(string(id)) + ":" + strings.TrimSpace(string(host))
	if len(id) == 0 {
		wantMach = "-"
	}
	ns, err := os.Readlink("/proc/self/ns/pid")
	if err != nil {
		t.Fatal(err)
	}
	wantNS := strings.TrimSuffix(strings.TrimPrefix(ns, "pid:["), "]")
	script := "h_marker=@M\n"
	for _, f := range lib.closure("h_say", "h_procown") {
		script += lib.body[f]
	}
	script += lib.probe
	for _, sh := range shells {
		needShell(t, sh)
		out, err := exec.Command(sh[0], append(sh[1:], "-c", script)...).Output()
		if err != nil {
			t.Fatalf("%s: %v", sh[0], err)
		}
		var facts []string
		for _, l := range strings.Split(string(out), "\n") {
			if f, ok := strings.CutPrefix(l, "@M FACTS "); ok {
				facts = strings.Fields(f)
			}
		}
		if len(facts) < 7 {
			t.Fatalf("%s: no FACTS in %q", sh[0], out)
		}
		if facts[0] != wantMach || facts[6] != strconv.Itoa(os.Geteuid()) {
			t.Errorf("%s: machine %q uid %q, want %q and %d", sh[0], facts[0], facts[6], wantMach, os.Geteuid())
		}
		// The namespace's number from its inode, as readlink names it,
		// and the stat flavour that stat proved.
		if facts[2] != wantNS || facts[4] != "gnu" {
			t.Errorf("%s: pidns %q stat %q, want %q and gnu", sh[0], facts[2], facts[4], wantNS)
		}
	}
}
