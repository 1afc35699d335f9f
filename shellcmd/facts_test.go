package shellcmd

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// TestShFactsProbe: the facts probe says the machine as machine-id and
// uname -n, and the login's uid as id -u, under every shell (it reads them
// from /proc where Linux has them).
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
	script := "h_marker=@M\n" + lib.body["h_say"] + lib.probe
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
	}
}
