package e2e

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/hoistdev/hoist/cmd/hoist/output"
	"github.com/hoistdev/hoist/e2e/sshd"
)

// TestHostTextCannotPrintRows: a member of a store's group can write what
// hoist reads back and prints: run records, the history, names in the
// store. Line breaks in them (percent-encoded in a record, raw in a file
// name) are escaped like any other control character, so no row or message
// of their making reaches the terminal: runs and history print one row per
// record, gc one line, and a name with spaces or a line break is kept and
// named whole, never split. Printed as they were, each of these would add a
// line starting with FAKE.
func TestHostTextCannotPrintRows(t *testing.T) {
	t.Parallel()
	h := sshd.Start(t, sshd.Options{})
	root := filepath.Join(h.Dir, "store")
	c := newCLI(t, h, root)
	id := pushJSON(t, c, sourceTree(t, "1"), "--name", "app", "--activate").ID
	if r := c.run("run", "--", "true"); r.code != 0 {
		t.Fatalf("run: %s", r)
	}
	// The run's record, rewritten: who and the command line.
	infos, _ := filepath.Glob(filepath.Join(root, "runs", "*", "info"))
	if len(infos) != 1 {
		t.Fatalf("run records: %q, want one", infos)
	}
	info := readFile(t, infos[0])
	info = regexp.MustCompile(`who=[^ \n]*`).ReplaceAllString(info, "who=mallory%0AFAKE-RUN-WHO")
	info = regexp.MustCompile(`cmd=[^ \n]*`).ReplaceAllString(info, "cmd=true%0D%0AFAKE-RUN-CMD")
	if err := os.WriteFile(infos[0], []byte(info), 0o600); err != nil {
		t.Fatal(err)
	}
	// A switch in the history, as a member's client recorded it.
	hist, err := os.OpenFile(filepath.Join(root, "history"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	hist.WriteString("1700000000 activate - " + id + " pid=1,who=mallory%0AFAKE-HIST-WHO,ver=1,cmd=hoist%0D%0AFAKE-HIST-CMD\n")
	hist.Close()
	// Names in the store that are not hoist's: gc reports them, whole.
	names := []string{"two words", "evil\nFAKE-GC (newest)", "cr\rFAKE-GC-CR", "50%0A"}
	for _, n := range names {
		if err := os.Mkdir(filepath.Join(root, "runtimes", n), 0o755); err != nil {
			t.Fatal(err)
		}
	}

	fake := regexp.MustCompile(`(?m)^FAKE`)
	lines := func(s string) int { return strings.Count(s, "\n") }
	for _, k := range []struct {
		args []string
		rows int // lines on stdout
	}{
		{[]string{"runs"}, 2},    // header, the run
		{[]string{"history"}, 3}, // header, the push, the planted switch
		{[]string{"gc", "--dry-run"}, 1},
		{[]string{"list"}, 2},
	} {
		r := c.run(k.args...)
		if r.code != 0 || lines(r.stdout) != k.rows || fake.MatchString(r.stdout) || fake.MatchString(r.stderr) || strings.ContainsAny(r.stdout, "\r") {
			t.Errorf("hoist %s: want exit 0 and %d lines, none of a record's making:\n%s", strings.Join(k.args, " "), k.rows, r)
		}
	}
	r := c.run("gc", "--dry-run")
	for _, want := range []string{"two words (unmarked)", `evil\x0aFAKE-GC (newest) (unmarked)`, `cr\x0dFAKE-GC-CR (unmarked)`, "50%0A (unmarked)"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("gc --dry-run: want %q in:\n%s", want, r.stdout)
		}
	}
	r = c.run("--json", "gc", "--dry-run")
	obj := decodeOne[output.GC](t, "gc --json", r.stdout)
	for _, n := range names {
		found := false
		for _, k := range obj.Kept {
			found = found || k.ID == n && k.Why == "unmarked"
		}
		if !found {
			t.Errorf("gc --json: want %q kept as unmarked, whole: %+v", n, obj.Kept)
		}
	}
	for _, n := range names {
		if !exists(filepath.Join(root, "runtimes", n)) {
			t.Errorf("%q was removed", n)
		}
	}
}
