package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// TestHelpNeverActs: every command and subcommand, asked for its help with
// --help, -h or "hoist help CMD" (and lock and completion without a
// subcommand), prints its usage with an example on stdout and exits 0,
// without dialling the host named by -H (a listener that counts
// connections) or touching the local store (HOIST_ROOT, not created). A
// help flag that ran the command would dial, or create the store: lock
// acquire creates it, push and run create it too.
func TestHelpNeverActs(t *testing.T) {
	l, dialled := silentListener(t, false)
	home := t.TempDir()
	root := filepath.Join(t.TempDir(), "root")
	t.Setenv("HOME", home)
	t.Setenv("HOIST_ROOT", root)
	targets := []string{"-H", "tester@" + l.Addr().String() + ",local", "-o", "ConnectTimeout=2"}

	var paths [][]string
	var walk func(c *cobra.Command, path []string)
	walk = func(c *cobra.Command, path []string) {
		paths = append(paths, path)
		for _, sub := range c.Commands() {
			if sub.IsAvailableCommand() || sub.Name() == "help" {
				walk(sub, append(append([]string{}, path...), sub.Name()))
			}
		}
	}
	walk(newApp(nil, nil, nil).rootCommand(), nil)
	if len(paths) < 20 {
		t.Fatalf("walked %d commands: %q", len(paths), paths)
	}
	forms := func(path []string) [][]string {
		with := func(parts ...[]string) []string {
			var args []string
			for _, p := range parts {
				args = append(args, p...)
			}
			return args
		}
		f := [][]string{
			with(targets, path, []string{"--help"}),
			with(targets, path, []string{"-h"}),
			with(targets, []string{"help"}, path),
			with(path, []string{"--help"}, targets), // global flags after
		}
		if len(path) == 1 && (path[0] == "lock" || path[0] == "completion") {
			f = append(f, with(targets, path)) // no subcommand: its help, not an error
		}
		return f
	}
	for _, path := range paths {
		for _, args := range forms(path) {
			var out, errb bytes.Buffer
			code := newApp(&out, &errb, nil).execute(args)
			usage := "usage: " + strings.Join(append([]string{"hoist"}, path...), " ")
			if code != 0 || errb.Len() > 0 || !strings.Contains(out.String(), usage) || !strings.Contains(out.String(), "examples:\n  ") {
				t.Errorf("hoist %s: exit %d, want 0 with %q and examples on stdout\nstdout: %s\nstderr: %s",
					strings.Join(args, " "), code, usage, out.String(), errb.String())
			}
		}
	}
	if n := dialled.Load(); n != 0 {
		t.Errorf("help dialled the host %d times", n)
	}
	if _, err := os.Stat(root); err == nil {
		t.Errorf("help created the store %s", root)
	}
	if left, _ := os.ReadDir(home); len(left) > 0 {
		t.Errorf("help wrote into HOME: %v", left)
	}

	// The listener counts: a command that acts dials it.
	var out, errb bytes.Buffer
	if code := newApp(&out, &errb, nil).execute(append(targets, "lock", "status")); code != 1 || dialled.Load() == 0 {
		t.Errorf("lock status: exit %d and %d connections, want 1 and a connection\n%s", code, dialled.Load(), errb.String())
	}
}
