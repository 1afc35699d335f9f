package shellcmd

import (
	"strings"
	"testing"
)

// TestShHistoryKeepsEveryCharacter: a switch's history line, appended by
// h_history from the lock record's client part (spaces made commas) and read
// back by h_op_history, gives back the command, the login and the version
// exactly as they were, whatever characters they hold: the comma that
// separates the line's fields, spaces, "=" and "%", quotes, non-ASCII.
func TestShHistoryKeepsEveryCharacter(t *testing.T) {
	cmd := "hoist -H web1,web2 rollback --root '/a b,c' x=y %41 ,cmd=z ü\u00a0\t;$(id)"
	var all strings.Builder
	for c := 1; c < 0x80; c++ {
		all.WriteByte(byte(c))
	}
	for _, want := range []Record{
		{PID: 7, Who: "al,ice@lap top", Version: "1,2 3", Command: cmd},
		{PID: 8, Who: "u@h", Version: "v", Command: all.String()},
	} {
		fnShells(t, func(t *testing.T, sh []string, root string) {
			store, _, _ := fnPaths(root)
			fnMkdir(t, store)
			r := fnRun{fns: []string{"h_history", "h_op_history"},
				vars: map[string]string{"hp_rec": want.Encode(), "h_since": "1700000000"},
				call: "h_history activate a-1 b-2 && h_op_history"}.do(t, sh, root)
			if len(r.said) != 2 || r.said[1] != string(VerbListed) {
				t.Fatalf("%s: said %q", sh[0], r.said)
			}
			v, err := ParseVerdict(r.said[0])
			if err != nil || v.Verb != VerbHistory {
				t.Fatalf("%s: %q: %v", sh[0], r.said[0], err)
			}
			got := v.History().Who
			if got.Who != want.Who || got.Version != want.Version || got.Command != want.Command {
				t.Errorf("%s: history gave back\n who %q ver %q cmd %q\nwant who %q ver %q cmd %q",
					sh[0], got.Who, got.Version, got.Command, want.Who, want.Version, want.Command)
			}
		})
	}
}

// TestParseClientReadsEarlierHistory: an earlier version left commas in the
// values of a history line; a piece that starts no field belongs to the one
// before it, so such a line reads as it was meant.
func TestParseClientReadsEarlierHistory(t *testing.T) {
	got := parseClient("pid=9,who=u%40h,ver=1,cmd=hoist%20-H%20web1,web2,web3%20rollback,msg=", ",")
	if got.Command != "hoist -H web1,web2,web3 rollback" || got.Who != "u@h" || got.Version != "1" || got.PID != 9 {
		t.Fatalf("got %+v", got)
	}
}

// TestRecordCutsAtACharacter: a value longer than MaxField is cut before a
// character, never inside one.
func TestRecordCutsAtACharacter(t *testing.T) {
	long := strings.Repeat("a", MaxField-1) + "üü"
	r, ok := ParseRecord("hoist-lock/2 token=t since=1 mach=m boot=b pidns=1 init=1 " + Record{Command: long}.Encode())
	if !ok || r.Command != long[:MaxField-1] {
		t.Fatalf("cut to %q (%v)", r.Command[max(0, len(r.Command)-4):], ok)
	}
}
