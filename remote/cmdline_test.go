package remote

import (
	"os/exec"
	"strings"
	"testing"
)

// TestCommandLineUnderEveryLoginShell: whatever the login shell, the command
// line reaches /bin/sh with the script byte for byte.
func TestCommandLineUnderEveryLoginShell(t *testing.T) {
	script := "printf '%s|' \"$1x\" 'it'\"'\"'s' \"\\\\\" '$HOME' '`x`' '!bang' '%s' 'é' \"$(printf 'a\\nb')\"\n" +
		"echo done\n"
	want, err := exec.Command("/bin/sh", "-c", script).Output()
	if err != nil {
		t.Fatal(err)
	}
	line := CommandLine(script)
	for _, c := range line {
		if c == '\n' || c > 0x7e {
			t.Fatalf("command line carries %q", c)
		}
	}
	for _, login := range []string{"bash", "dash", "zsh", "fish", "tcsh", "mksh", "busybox"} {
		if _, err := exec.LookPath(login); err != nil {
			t.Fatalf("%s is not installed: run make test, which installs the shells hoist is tested with", login)
		}
		args := []string{"-c", line}
		if login == "busybox" {
			args = append([]string{"sh"}, args...)
		}
		got, err := exec.Command(login, args...).CombinedOutput()
		if err != nil || string(got) != string(want) {
			t.Errorf("login shell %s: got %q (%v), want %q", login, got, err, want)
		}
	}
	if !strings.HasPrefix(line, "exec /bin/sh -c '") {
		t.Fatalf("not an exec of /bin/sh: %.40s", line)
	}
}
