package lock_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hoistdev/hoist/lock"
	"github.com/hoistdev/hoist/transport"
)

// checkOf returns the named item of up, failing the test when it is missing.
func checkOf(t *testing.T, up lock.Checkup, name string) lock.Check {
	t.Helper()
	for _, c := range up.Checks {
		if c.Name == name {
			return c
		}
	}
	t.Fatalf("no %s check in %+v", name, up.Checks)
	return lock.Check{}
}

// TestDoctorReportsWhatStopsOtherCommands: on a store that fails the path
// checks (its store directory writable by others), every other command
// stops at once; the doctor reports the failure as its paths check, with
// the fix, says it did not read the lock, and changes nothing.
func TestDoctorReportsWhatStopsOtherCommands(t *testing.T) {
	root := t.TempDir()
	store := filepath.Join(root, "runtimes")
	if err := os.Mkdir(store, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(store, 0o777); err != nil {
		t.Fatal(err)
	}
	l := lock.New(&transport.Local{}, lock.Root{Path: root})
	if _, err := l.Status(context.Background()); err == nil {
		t.Fatal("status of a store writable by others did not fail")
	}
	up := l.Doctor(context.Background())
	paths := checkOf(t, up, "paths")
	if paths.Status != lock.CheckFail || paths.Value != "writable" || !strings.Contains(paths.Fix, "chmod o-w") {
		t.Errorf("paths: %+v, want a failure, writable, with a chmod o-w fix", paths)
	}
	if c := checkOf(t, up, "lock"); c.Status != lock.CheckWarn || c.Value != "" || !strings.Contains(c.Fix, "paths") {
		t.Errorf("lock: %+v, want a warning without a value that points at the paths", c)
	}
	if up.Lock != nil {
		t.Errorf("the doctor says it read the lock: %+v", up.Lock)
	}
	for _, c := range up.Checks {
		if c.Name == "host" {
			t.Errorf("the host command did not run its checks: %+v", c)
		}
	}
	if entries, _ := os.ReadDir(store); len(entries) != 0 {
		t.Errorf("the doctor left %v in the store", entries)
	}
}

// TestDoctorReadsTheLock: on a store whose lock is held, the doctor's
// checks end with the lock as Status reads it; on a missing store, it
// creates none.
func TestDoctorReadsTheLock(t *testing.T) {
	ctx := context.Background()
	root := filepath.Join(t.TempDir(), "root")
	l := lock.New(&transport.Local{}, lock.Root{Path: root})
	up := l.Doctor(ctx)
	if c := checkOf(t, up, "lock"); c.Value != "nostore" || up.Lock == nil || up.Lock.Store {
		t.Errorf("lock on a missing store: %+v %+v", c, up.Lock)
	}
	for _, name := range []string{"rtt", "clock", "sh", "tar", "root", "paths", "space"} {
		checkOf(t, up, name)
	}
	if _, err := os.Stat(root); !os.IsNotExist(err) {
		t.Fatalf("the doctor created the root: %v", err)
	}
	h, err := l.Acquire(ctx, 0, lock.Events{})
	if err != nil {
		t.Fatal(err)
	}
	up = l.Doctor(ctx)
	c := checkOf(t, up, "lock")
	if c.Status != lock.CheckOK || c.Value != "held" || !strings.Contains(c.Detail, "token "+h.Token) {
		t.Errorf("lock: %+v, want ok, held, with the token %s", c, h.Token)
	}
	if up.Lock == nil || !up.Lock.Locked || up.Lock.Record.Token != h.Token {
		t.Errorf("the doctor's lock: %+v, want held with %s", up.Lock, h.Token)
	}
}
