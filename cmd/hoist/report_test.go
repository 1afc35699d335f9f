package main

import (
	"bytes"
	"testing"
)

// TestReportTableKeepsItsLines: a result that is a table and has lines of
// its own after it (a checklist, then what it found left over) prints
// both, the table under its host's name when there are several hosts.
func TestReportTableKeepsItsLines(t *testing.T) {
	for _, multi := range []bool{false, true} {
		var out, errb bytes.Buffer
		a := newApp(&out, &errb, nil)
		a.multi = multi
		a.report(result{host: "web1", data: "OK    auth  key\nFAIL  lock  held", table: true,
			more: []string{"web1: a line\nbroken in two"}})
		want := "OK    auth  key\nFAIL  lock  held\nweb1: a line\\x0abroken in two\n"
		if multi {
			want = "web1:\n" + want
		}
		if out.String() != want {
			t.Errorf("multi %v: printed %q, want %q", multi, out.String(), want)
		}
	}
}
