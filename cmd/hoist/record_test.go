package main

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// TestRecordNamesTheProgramOnly: the lock's record, which anyone who can
// read the store can read, names a command run under the lock by its
// program, never by arguments that may carry secrets.
func TestRecordNamesTheProgramOnly(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "--", "psql", "--password=hunter2"}, "hoist run -- psql …"},
		{[]string{"-H", "web1", "run", "--wait", "0", "--", "true"}, "hoist -H web1 run --wait 0 -- true"},
		{[]string{"lock", "acquire", "--message", "db migration"}, "hoist lock acquire --message db migration"},
		{[]string{"push", "app.tgz", "--activate"}, "hoist push app.tgz --activate"},
	} {
		if got := commandLine(tc.args); got != tc.want {
			t.Errorf("commandLine(%q) = %q, want %q", tc.args, got, tc.want)
		}
	}
}

// TestRecordCutsLongCommandsAtACharacter: a command line too long for the
// record is cut before a character, never inside one.
func TestRecordCutsLongCommandsAtACharacter(t *testing.T) {
	got := commandLine([]string{"push", strings.Repeat("ü", 200)})
	if !utf8.ValidString(got) || !strings.HasSuffix(got, "ü…") {
		t.Fatalf("commandLine cut to %q", got[len(got)-8:])
	}
}
