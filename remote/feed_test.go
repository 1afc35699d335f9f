package remote

import (
	"os/exec"
	"strings"
	"testing"
)

// TestLoaderUnderEveryLoginShell: whatever the login shell, the fixed
// command line reaches /bin/sh, which runs the script that follows on
// standard input byte for byte, and the line holds none of the characters
// login shells disagree about.
func TestLoaderUnderEveryLoginShell(t *testing.T) {
	script := "printf '%s|' \"$1x\" 'it'\"'\"'s' \"\\\\\" '$HOME' '`x`' '!bang' '%s' 'é' \"$(printf 'a\\nb')\"\n" +
		"echo done\n"
	want, err := exec.Command("/bin/sh", "-c", script).Output()
	if err != nil {
		t.Fatal(err)
	}
	if strings.ContainsAny(Loader, "\\\n!") || strings.Count(Loader, "'") != 2 || !strings.HasPrefix(Loader, "exec /bin/sh -c '") {
		t.Fatalf("the loader is not one single-quoted word for /bin/sh free of \\ ! and newlines: %s", Loader)
	}
	for _, login := range []string{"bash", "dash", "zsh", "fish", "tcsh", "mksh", "busybox"} {
		if _, err := exec.LookPath(login); err != nil {
			t.Fatalf("%s is not installed: run make test, which installs the shells hoist is tested with", login)
		}
		args := []string{"-c", Loader}
		if login == "busybox" {
			args = append([]string{"sh"}, args...)
		}
		cmd := exec.Command(login, args...)
		cmd.Stdin = LoaderInput(script)
		got, err := cmd.CombinedOutput()
		if err != nil || string(got) != string(want) {
			t.Errorf("login shell %s: got %q (%v), want %q", login, got, err, want)
		}
	}
}
