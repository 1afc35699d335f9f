package store

import (
	"errors"
	"testing"

	"github.com/hoistdev/hoist/lock"
	"github.com/hoistdev/hoist/remote"
	"github.com/hoistdev/hoist/shellcmd"
)

// TestHostErrorOfAnUnknownCode: a code the protocol table does not know
// reads as the code and the host's text; it never panics.
func TestHostErrorOfAnUnknownCode(t *testing.T) {
	e := &HostError{Code: "bogus", Detail: "what \x1b[2J happened"}
	if got, want := e.Error(), `host error: bogus what \x1b[2J happened`; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	if got := (&HostError{}).Error(); got != "host error:" {
		t.Errorf("an empty HostError: %q", got)
	}
}

// TestStoreCodesStandForTheirErrors: an ERROR of a store command is one
// HostError, with its code's sentence and the error the code stands for.
func TestStoreCodesStandForTheirErrors(t *testing.T) {
	s := &Store{l: lock.New(nil, lock.DefaultRoot)}
	for line, want := range map[string]struct {
		err  error
		text string
	}{
		"ERROR space 2048 1024":       {ErrNoSpace, "not enough free space: the runtime needs 2.0 MiB in the store's filesystem, which has 1.0 MiB free; make room (hoist gc) and push again"},
		"ERROR foreign runtimes/x":    {ErrIDTaken, "runtimes/x exists and hoist did not promote it (it has no mark in .meta); it is left alone: move it away, or push under another --name"},
		"ERROR collision a-1 abcd":    {ErrIDTaken, "a-1 on the host is another tree whose digest (abcd) shares the id's 12 digits; it is left alone: push under another --name"},
		"ERROR lockpath symlink /l":   {lock.ErrLockPath, "/l is a symlink, not the lock directory; hoist never follows one and touched nothing: remove it by hand if it is not meant to be there"},
		"ERROR path owner /r":         {lock.ErrUnsafePath, "/r belongs to another user: it must be owned by the login or by root (chown it, or choose another --root)"},
		"ERROR stage the upload":      {nil, "the upload's stage: the upload"},
		"ERROR changed":               {nil, "the lock changed while it was being broken, and was left alone; run hoist lock status"},
		"ERROR newcode from the host": {nil, "host error: newcode from the host"},
	} {
		v, err := shellcmd.ParseVerdict(line)
		if err != nil {
			t.Fatal(err)
		}
		err = s.err(&remote.Reply{Verdicts: []shellcmd.Verdict{v}}, "push")
		var he *HostError
		if !errors.As(err, &he) || he.Err != want.err || (want.err != nil && !errors.Is(err, want.err)) {
			t.Errorf("%s: %#v, want a HostError that is %v", line, err, want.err)
			continue
		}
		if err.Error() != want.text {
			t.Errorf("%s:\n got %q\nwant %q", line, err.Error(), want.text)
		}
	}
}

// TestDefaultKeepRunsIsTheWires: the store's default for run records is the
// one the wire falls back on.
func TestDefaultKeepRunsIsTheWires(t *testing.T) {
	if DefaultKeepRuns != shellcmd.DefaultKeepRuns {
		t.Errorf("DefaultKeepRuns %s, the wire's %s", DefaultKeepRuns, shellcmd.DefaultKeepRuns)
	}
}
