package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/hoistdev/hoist/e2e/sshd"
)

// TestRunStartsInTheLoginsHome: what hoist run --help and the README say
// about where CMD starts holds on a real sshd: the login's home, so a
// relative ./migrate is not found (127) until the command changes
// directory itself.
func TestRunStartsInTheLoginsHome(t *testing.T) {
	t.Parallel()
	h := sshd.Start(t, sshd.Options{})
	c := newCLI(t, h, filepath.Join(h.Dir, "store"))
	if r := c.run("-q", "run", "--", "pwd"); r.code != 0 || strings.TrimSpace(r.stdout) != h.Home {
		t.Fatalf("run -- pwd: want %s\n%s", h.Home, r)
	}
	app := filepath.Join(h.Dir, "app")
	if err := os.MkdirAll(app, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(app, "migrate"), []byte("#!/bin/sh\necho migrated\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if r := c.run("-q", "run", "--", "./migrate"); r.code != 127 {
		t.Fatalf("run -- ./migrate from the home: want exit 127\n%s", r)
	}
	if r := c.run("-q", "run", "--", "sh", "-c", "cd "+shq(app)+" && ./migrate"); r.code != 0 || r.stdout != "migrated\n" {
		t.Fatalf("run -- sh -c 'cd app && ./migrate':\n%s", r)
	}
}

// TestRunKeepsTheLoginsUmask: the run's command gets the login's umask
// (with others' write bit masked, as everything of a host command), not
// the private one its host shell keeps the run's record under (077). A
// file the command makes is then as the login would make it.
func TestRunKeepsTheLoginsUmask(t *testing.T) {
	t.Parallel()
	h := sshd.Start(t, sshd.Options{})
	c := newCLI(t, h, filepath.Join(h.Dir, "store"))
	login, err := strconv.ParseUint(strings.TrimSpace(hostSh(t, h, "umask")), 8, 32)
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("%04o", login|0o002)
	r := c.run("-q", "run", "--", "sh", "-c", "umask")
	if r.code != 0 || strings.TrimSpace(r.stdout) != want {
		t.Fatalf("run -- sh -c umask: want %s (the login's, others' write masked)\n%s", want, r)
	}
}
