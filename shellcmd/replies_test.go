package shellcmd

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

func mustVerdict(t *testing.T, line string) Verdict {
	t.Helper()
	v, err := ParseVerdict(line)
	if err != nil {
		t.Fatalf("%q: %v", line, err)
	}
	return v
}

// TestReadersTurnDashIntoZero: each reader gives the fields by name, "-"
// read as nothing (with AgeKnown false for an age), and a reader of another
// verb's verdict reads nothing.
func TestReadersTurnDashIntoZero(t *testing.T) {
	rec := "hoist-lock/2 token=0f0e-aa since=1700000000 mach=m:h boot=b pidns=1 init=2 pid=3 who=a%40b ver=1 cmd=x msg="
	h := mustVerdict(t, "LOCK 5 stale alive "+rec).Holder()
	if !h.AgeKnown || h.Age != 5*time.Second || h.Why != "stale" || h.Proc != "alive" || h.Raw != rec || !h.RecordOK || h.Record.Token != "0f0e-aa" {
		t.Errorf("LOCK: %+v", h)
	}
	for _, line := range []string{"LOCK - - - -"} {
		if h := mustVerdict(t, line).Holder(); h != (Holder{}) {
			t.Errorf("%s: %+v, want nothing known", line, h)
		}
	}
	if h := mustVerdict(t, "LOCK 0 - - garbage").Holder(); !h.AgeKnown || h.Age != 0 || h.Raw != "garbage" || h.RecordOK {
		t.Errorf("an age of 0 and a record that does not parse: %+v", h)
	}
	if h := mustVerdict(t, "FREE").Holder(); h != (Holder{}) {
		t.Errorf("FREE read as a holder: %+v", h)
	}

	f := mustVerdict(t, "FACTS - - - - gnu 0.1 - -").Facts()
	if f != (Facts{Stat: "gnu", Nap: "0.1"}) {
		t.Errorf("FACTS with nothing known: %+v", f)
	}
	if f := mustVerdict(t, "FACTS m:h b 4026531836 1 gnu 0.1 1000 /home/a b").Facts(); f.Home != "/home/a b" || f.UID != "1000" || f.PIDNS != "4026531836" {
		t.Errorf("FACTS: %+v", f)
	}

	r := mustVerdict(t, "RUN 0f0e 1700000000 - - u%40h sh%20-c%20x").Run()
	if r.ID != "0f0e" || r.Start != time.Unix(1700000000, 0) || !r.End.IsZero() || r.Exited || r.Who != "u@h" || r.Command != "sh -c x" {
		t.Errorf("RUN of a running command: %+v", r)
	}
	if r := mustVerdict(t, "RUNSTATE 1 2 0 - -").Run(); r.ID != "" || !r.Exited || r.Status != 0 || r.End != time.Unix(2, 0) || r.Who != "" {
		t.Errorf("RUNSTATE: %+v", r)
	}

	rt := mustVerdict(t, "RT app-0123456789ab 1700000000 42 cP 7 -").Runtime()
	if rt != (RuntimeLine{ID: "app-0123456789ab", Promoted: time.Unix(1700000000, 0), Size: 42, Current: true, Pinned: true, Order: 7}) {
		t.Errorf("RT: %+v", rt)
	}
	hist := mustVerdict(t, "HIST 5 activate - b-1 -").History()
	if hist.From != "" || hist.To != "b-1" || hist.Action != "activate" || hist.Who != (Record{}) {
		t.Errorf("HIST: %+v", hist)
	}

	if id, prev := mustVerdict(t, "ACTIVATED a-1 -").Activated(); id != "a-1" || prev != "" {
		t.Errorf("ACTIVATED: %q %q", id, prev)
	}
	if id, off, sum := mustVerdict(t, "RESUME a-1 65536 -").Resume(); id != "a-1" || off != 65536 || sum != "" {
		t.Errorf("RESUME: %q %d %q", id, off, sum)
	}
	if name, note := mustVerdict(t, "KEEP unmarked odd%25name with space").GCItem(); name != "odd%name with space" || note != "unmarked" {
		t.Errorf("KEEP: %q %q", name, note)
	}
	if c := mustVerdict(t, "CHECK mv warn - -").Check(); c != (CheckLine{Name: "mv", Status: "warn"}) {
		t.Errorf("CHECK: %+v", c)
	}
	if code, text := mustVerdict(t, "ERROR changed").Failure(); code != "changed" || text != "" {
		t.Errorf("ERROR: %q %q", code, text)
	}
	// A reader of another verb's verdict reads nothing.
	if p := mustVerdict(t, "REUSED x y").Path(); p != "" {
		t.Errorf("Path of REUSED: %q", p)
	}
	if d := mustVerdict(t, "RESUME a 1 abc").Digest(); d != "" {
		t.Errorf("Digest of RESUME: %q", d)
	}
	if id, _ := mustVerdict(t, "PRESENT a-1").Activated(); id != "" {
		t.Errorf("Activated of PRESENT: %q", id)
	}
}

// TestNoFieldIsReadOutsideTheReaders: outside verdict.go and replies.go no
// Go code indexes a verdict's fields, and no code outside this package
// compares with "-", the host's "nothing here": the readers decode it.
func TestNoFieldIsReadOutsideTheReaders(t *testing.T) {
	fieldRE := regexp.MustCompile(`\.Field\(\d|\.field\(|\.fields\b|\.Fields\[`)
	dashRE := regexp.MustCompile(`(==|!=) *"-"|"-" *(==|!=)|case "-"`)
	var files int
	err := filepath.WalkDir("..", func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) && path != ".." {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		files++
		rel := filepath.ToSlash(strings.TrimPrefix(path, "../"))
		for i, line := range strings.Split(string(data), "\n") {
			if rel != "shellcmd/verdict.go" && rel != "shellcmd/replies.go" && fieldRE.MatchString(line) {
				t.Errorf("%s:%d reads a verdict's fields by position: %s", rel, i+1, strings.TrimSpace(line))
			}
			if !strings.HasPrefix(rel, "shellcmd/") && dashRE.MatchString(line) {
				t.Errorf("%s:%d compares with \"-\" past the seam: %s", rel, i+1, strings.TrimSpace(line))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 50 {
		t.Fatalf("read only %d Go files", files)
	}
}
