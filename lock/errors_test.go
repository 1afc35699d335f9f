package lock

import (
	"errors"
	"testing"

	"github.com/hoistdev/hoist/shellcmd"
)

// TestHostErrorOfAnUnknownCode: a code the protocol table does not know
// reads as the code and the host's text, made safe to print; it never
// panics, and stands for no other error.
func TestHostErrorOfAnUnknownCode(t *testing.T) {
	v, err := shellcmd.ParseVerdict("ERROR bogus what \x1b[2J happened")
	if err != nil {
		t.Fatal(err)
	}
	e := hostError(v)
	if got, want := e.Error(), `host error: bogus what \x1b[2J happened`; got != want || errors.Unwrap(e) != nil {
		t.Errorf("Error() = %q, want %q; Unwrap %v", got, want, errors.Unwrap(e))
	}
	v, _ = shellcmd.ParseVerdict("ERROR path symlink /srv/x")
	if e := hostError(v); !errors.Is(e, ErrUnsafePath) || e.Error() != "/srv/x is a symlink; hoist never follows one out of the store: replace it with a real directory" {
		t.Errorf("ERROR path: %q, Is ErrUnsafePath %v", e.Error(), errors.Is(e, ErrUnsafePath))
	}
}
