package shellcmd

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestParseVerdict(t *testing.T) {
	for _, tc := range []struct {
		in     string
		verb   string
		fields []string
		bad    bool
	}{
		{in: "FREE", verb: "FREE"},
		{in: "FREE extra", bad: true},
		{in: "EXIT 3", verb: "EXIT", fields: []string{"3"}},
		{in: "EXIT three", bad: true},
		{in: "EXIT", bad: true},
		{in: "HELD 12 - alive hoist-lock/1 token=a boot=b since=1", verb: "HELD", fields: []string{"12", "-", "alive", "hoist-lock/1 token=a boot=b since=1"}},
		{in: "HELD - - - -", verb: "HELD", fields: []string{"-", "-", "-", "-"}},
		{in: "HELD 12 - -", bad: true},
		{in: "LOCK 5 stale alive garbage with  spaces", verb: "LOCK", fields: []string{"5", "stale", "alive", "garbage with  spaces"}},
		{in: "FACTS m:h b 4026531836 1 gnu 0.1 1000 /home/a b", verb: "FACTS", fields: []string{"m:h", "b", "4026531836", "1", "gnu", "0.1", "1000", "/home/a b"}},
		{in: "ERROR mkdir no space", verb: "ERROR", fields: []string{"mkdir", "no space"}},
		{in: "ERROR changed", verb: "ERROR", fields: []string{"changed"}},
		{in: "ERROR release ", verb: "ERROR", fields: []string{"release"}},
		{in: "ERROR  text", bad: true},
		{in: "ERROR", bad: true},
		{in: "ACQUIRED", bad: true},
		{in: "RELEASED", verb: "RELEASED"},
		{in: "OK", bad: true},
		{in: "", bad: true},
		{in: "acquired x", bad: true},
	} {
		v, err := ParseVerdict(tc.in)
		if tc.bad {
			if !errors.Is(err, ErrVerdict) {
				t.Errorf("%q: want ErrVerdict, got %+v", tc.in, v)
			}
			continue
		}
		if err != nil || string(v.Verb) != tc.verb || len(v.fields) != len(tc.fields) {
			t.Errorf("%q: got %+v, %v", tc.in, v, err)
			continue
		}
		for i := range tc.fields {
			if v.fields[i] != tc.fields[i] {
				t.Errorf("%q: field %d = %q, want %q", tc.in, i, v.fields[i], tc.fields[i])
			}
		}
	}
}

func TestRecordRoundTrip(t *testing.T) {
	r := Record{PID: 42, Who: "al ice@laptop", Version: "1.2.3", Command: "hoist run -- sh -c 'a; b' %s\n$(x)", Message: "ünïcode & spaces"}
	line := "hoist-lock/2 token=0f0e-aa since=1700000000 mach=m:h boot=b00t pidns=4026531836 init=17 " + r.Encode()
	got, ok := ParseRecord(line)
	if !ok {
		t.Fatalf("did not parse: %q", line)
	}
	r.Format, r.Token, r.Since = 2, "0f0e-aa", time.Unix(1700000000, 0)
	r.Machine, r.BootID, r.PIDNS, r.Init = "m:h", "b00t", "4026531836", "17"
	if got != r {
		t.Fatalf("round trip:\n got %+v\nwant %+v", got, r)
	}
	enc := r.Encode()
	if n := len(strings.Split(enc, " ")); n != 5 {
		t.Fatalf("a value carried a space into the record: %d fields in %q", n, enc)
	}
	for _, c := range []byte(enc) {
		if c < 0x20 || c > 0x7e || strings.IndexByte("'\"$`;\\", c) >= 0 {
			t.Fatalf("encoded record has byte %q: %q", c, enc)
		}
	}
}

func TestParseRecordIsStrict(t *testing.T) {
	for _, line := range []string{
		"",
		"garbage",
		"hoist-lock/3 token=a boot=b since=1",
		"hoist-lock/2 token=a boot=b since=1",
		"hoist-lock/1 token= boot=b since=1",
		"hoist-lock/1 token=- boot=b since=1",
		"hoist-lock/1 token=a since=1",
		"hoist-lock/1 token=a boot=b since=soon",
		"hoist-lock/1 token=a token=b boot=b since=1",
		"hoist-lock/1 token=a boot=b since=1 who=%zz",
		"hoist-lock/1 token=a boot=b since=1 junk",
	} {
		if r, ok := ParseRecord(line); ok {
			t.Errorf("%q parsed as %+v", line, r)
		}
	}
}

// TestEarlierRecordsStillRead: a record of an earlier version reads with
// its token and its own boot identity, which the boot rule does not use.
func TestEarlierRecordsStillRead(t *testing.T) {
	r, ok := ParseRecord("hoist-lock/1 token=0f0e-aa boot=m:b00t/17 since=1700000000 pid=3 who=a%40b ver=1 cmd=x msg=")
	if !ok || r.Format != 1 || r.Token != "0f0e-aa" || r.Boot != "m:b00t/17" || r.BootID != "" || r.Who != "a@b" {
		t.Fatalf("got %+v, %v", r, ok)
	}
}

func TestPrintable(t *testing.T) {
	for in, want := range map[string]string{
		"plain text, ünïcode": "plain text, ünïcode",
		"\x1b[2J clear":       "\\x1b[2J clear",
		"\x1b]0;title\x07":    "\\x1b]0;title\\x07",
		"tab\tnew\nline\x7f":  "tab\\x09new\\x0aline\\x7f",
		"c1 \u009b csi":       "c1 \\u009b csi",
		"bad \xff utf8":       "bad \\xff utf8",
		"real \ufffd is kept": "real \ufffd is kept",
	} {
		if got := Printable(in); got != want {
			t.Errorf("Printable(%q) = %q, want %q", in, got, want)
		}
	}
}
