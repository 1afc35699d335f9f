package e2e

import (
	"os"
	"path/filepath"
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
