package shellcmd

import (
	"bytes"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// shells are the /bin/sh implementations hoist meets; every test that runs
// shell code runs it under each.
var shells = [][]string{{"dash"}, {"bash", "--posix"}, {"busybox", "sh"}, {"mksh"}}

func needShell(t *testing.T, sh []string) {
	t.Helper()
	if _, err := exec.LookPath(sh[0]); err != nil {
		t.Fatalf("%s is not installed: run make test, which installs the shells hoist is tested with", sh[0])
	}
}

// TestFragmentsParse checks every operation's command with each /bin/sh
// hoist meets (sh -n parses without running anything).
func TestFragmentsParse(t *testing.T) {
	p := Params{Root: Root{Home: true, Path: "x y"}, Token: "t", Wait: time.Minute, Argv: []string{"echo", "$(no)"}}
	for _, shell := range shells {
		needShell(t, shell)
		for _, probe := range []bool{true, false} {
			var facts *Facts
			if !probe {
				facts = &Facts{Machine: "m:h", BootID: "b", PIDNS: "1", Init: "2", Stat: "gnu", Nap: "0.1", UID: "0", Home: "/h"}
			}
			for _, op := range Ops {
				script := Render(op, p).Script("@hoist:test", facts)
				cmd := exec.Command(shell[0], append(shell[1:], "-n", "-c", script)...)
				if out, err := cmd.CombinedOutput(); err != nil {
					t.Errorf("%s: %s (probe %v) does not parse: %v\n%s", shell[0], op.Name, probe, err, out)
				}
			}
		}
	}
}

// TestOpsTableMatchesTheShellCode: what the table says each operation may
// say is exactly what its shipped functions can say, verdicts and error
// codes both ways, so the table cannot drift from the code.
func TestOpsTableMatchesTheShellCode(t *testing.T) {
	for _, op := range Ops {
		verbs, errCodes := said(op.Functions())
		declared := append(slices.Clone(op.Sends), op.Ends...)
		for _, v := range verbs {
			if v != VerbLoaded && !slices.Contains(declared, v) {
				t.Errorf("%s: the shell says %s, which the table does not list", op.Name, v)
			}
		}
		for _, v := range declared {
			if !slices.Contains(verbs, v) {
				t.Errorf("%s: the table lists %s, which no shipped function says", op.Name, v)
			}
		}
		for _, c := range errCodes {
			if !slices.Contains(op.Codes, c) {
				t.Errorf("%s: the shell says ERROR %s, which the table does not list", op.Name, c)
			}
		}
		for _, c := range op.Codes {
			if !slices.Contains(errCodes, c) {
				t.Errorf("%s: the table lists ERROR %s, which no shipped function says", op.Name, c)
			}
		}
	}
	// Every h_say VERB sends the fields the verb's row names: as many
	// words, or for ERROR a code and any text; every h_say_holder VERB is a
	// verb whose fields are a holder's, which h_say_holder sends.
	sayRE := regexp.MustCompile(`\bh_say(_holder)? ([A-Z]+)\b`)
	calls := 0
	for _, name := range append(slices.Clone(lib.order), "(facts probe)") {
		body := lib.body[name]
		if name == "(facts probe)" {
			body = lib.probe
		}
		for _, m := range sayRE.FindAllStringSubmatchIndex(body, -1) {
			verb, viaHolder := Verb(body[m[4]:m[5]]), m[2] >= 0
			words := shellWords(body[m[1]:])
			spec, ok := specs[verb]
			calls++
			switch {
			case !ok:
				t.Errorf("%s says %s, which the protocol table does not list", name, verb)
			case viaHolder && (len(words) != 0 || !slices.Equal(spec.fields, holder)):
				t.Errorf("%s says %s through h_say_holder (with %q), but its row's fields are %v, not a holder's %v",
					name, verb, words, spec.fields, holder)
			case !viaHolder && !spec.lastOptional && len(words) != len(spec.fields),
				!viaHolder && spec.lastOptional && len(words) < len(spec.fields)-1:
				t.Errorf("%s says %s with %d words %q; its row has %d fields %v", name, verb, len(words), words, len(spec.fields), spec.fields)
			}
		}
	}
	if calls < 100 {
		t.Fatalf("found only %d h_say calls in the shell code", calls)
	}
	holderSays := regexp.MustCompile(`h_say "\$1"`).FindAllStringIndex(lib.body["h_say_holder"], -1)
	if len(holderSays) == 0 {
		t.Fatalf("h_say_holder does not say its verb: %q", lib.body["h_say_holder"])
	}
	for _, m := range holderSays {
		if words := shellWords(lib.body["h_say_holder"][m[1]:]); len(words) != len(holder) {
			t.Errorf("h_say_holder sends %d words %q; a holder has %d fields %v", len(words), words, len(holder), holder)
		}
	}
}

// shellWords splits what follows on a shell command line into its words, up
// to the end of the command (a newline, ;, &, |, a closing parenthesis or a
// comment).
// Quotes, $(...), $((...)) and ${...} belong to the word they are in.
func shellWords(s string) []string {
	var words []string
	start := -1
	i := 0
	end := func() {
		if start >= 0 {
			words = append(words, s[start:i])
			start = -1
		}
	}
	for i < len(s) {
		c := s[i]
		switch {
		case c == ' ' || c == '\t':
			end()
			i++
			continue
		case strings.IndexByte("\n;&|)", c) >= 0, c == '#' && start < 0:
			end()
			return words
		}
		if start < 0 {
			start = i
		}
		i = skipShell(s, i)
	}
	end()
	return words
}

// skipShell is the index after the character, the quoted string or the
// expansion that starts at s[i].
func skipShell(s string, i int) int {
	switch c := s[i]; {
	case c == '\\':
		return min(i+2, len(s))
	case c == '\'':
		if j := strings.IndexByte(s[i+1:], '\''); j >= 0 {
			return i + 1 + j + 1
		}
		return len(s)
	case c == '"':
		for i++; i < len(s) && s[i] != '"'; {
			i = skipShell(s, i)
		}
		return min(i+1, len(s))
	case c == '$' && i+1 < len(s) && (s[i+1] == '(' || s[i+1] == '{'):
		open, closing := s[i+1], byte(')')
		if open == '{' {
			closing = '}'
		}
		depth := 0
		for i++; i < len(s); {
			switch s[i] {
			case open:
				depth++
			case closing:
				depth--
				if depth == 0 {
					return i + 1
				}
			case '"', '\'', '\\', '$':
				i = skipShell(s, i)
				continue
			}
			i++
		}
		return len(s)
	}
	return i + 1
}

// TestOpsShipOnlyWhatTheyCall: a command carries its operation's functions
// and what they call, nothing else; status is far smaller than gc.
func TestOpsShipOnlyWhatTheyCall(t *testing.T) {
	status := OpStatus.Functions()
	for _, f := range []string{"h_op_status", "h_setup", "h_paths", "h_sample", "h_stealable", "h_prevboot", "h_say"} {
		if !slices.Contains(status, f) {
			t.Errorf("status does not ship %s", f)
		}
	}
	for _, f := range []string{"h_create", "h_steal", "h_release", "h_op_gc", "h_inuse", "h_run"} {
		if slices.Contains(status, f) {
			t.Errorf("status ships %s, which it never calls", f)
		}
	}
	p := Params{Root: Root{Home: true, Path: ".hoist"}, Token: "t"}
	small, big := len(Render(OpStatus, p).Defs), len(Render(OpGC, p).Defs)
	t.Logf("status carries %d bytes of definitions, gc %d", small, big)
	if small*2 > big {
		t.Errorf("status carries %d bytes, gc %d: status should ship far less", small, big)
	}
	// Every function of the library is shipped by some operation: a
	// function nothing calls is dead code.
	shipped := map[string]bool{}
	for _, op := range Ops {
		for _, f := range op.Functions() {
			shipped[f] = true
		}
	}
	for _, f := range lib.order {
		if !shipped[f] {
			t.Errorf("%s is defined in sh/ but no operation calls it", f)
		}
	}
}

// TestFragmentsCarryWhatTheyRead: an operation's fragment assigns exactly
// the parameters (hp_*) its functions read: every one of them, so a
// parameter Render lacks fails here (shellcheck cannot tell, SC2154 is
// off), and no other, so a fragment shows its real inputs. Every parameter
// is read by some operation, and the facts probe and the lines that run an
// operation read none.
func TestFragmentsCarryWhatTheyRead(t *testing.T) {
	assigned := regexp.MustCompile(`(?m)^hp_([a-z0-9_]+)=`)
	p := Params{Root: Root{Home: true, Path: ".hoist"}, Token: "t", Argv: []string{"true"}}
	used := map[string]bool{}
	for _, op := range Ops {
		var reads []string
		for _, f := range op.Functions() {
			for _, m := range hpRE.FindAllStringSubmatch(lib.body[f], -1) {
				reads = append(reads, m[1])
				used[m[1]] = true
			}
		}
		reads = slices.Compact(slices.Sorted(slices.Values(reads)))
		fr := Render(op, p)
		var got []string
		for _, m := range assigned.FindAllStringSubmatch(fr.Defs, -1) {
			got = append(got, m[1])
		}
		slices.Sort(got)
		if len(reads) == 0 {
			t.Errorf("%s reads no parameter: the root, at least, is one", op.Name)
		}
		for _, r := range reads {
			if !slices.Contains(got, r) {
				t.Errorf("%s reads hp_%s, which Render does not assign", op.Name, r)
			}
		}
		for _, g := range got {
			if !slices.Contains(reads, g) {
				t.Errorf("%s's fragment assigns hp_%s, which none of its functions reads", op.Name, g)
			}
		}
		if hpRE.MatchString(fr.Main) {
			t.Errorf("%s's main lines read a parameter: %q", op.Name, fr.Main)
		}
	}
	if hpRE.MatchString(lib.probe) {
		t.Error("the facts probe reads a parameter")
	}
	for _, v := range p.values() {
		if !used[v.name] {
			t.Errorf("no operation reads hp_%s", v.name)
		}
	}
}

// TestNoVariableIsAFunction: no shell variable has a function's name, so
// every name callRE finds that is a function is a call (a closure ships
// nothing it does not run) and a reader never wonders which is meant. The
// variables are the names expanded ($h_x, ${h_x...}, ${#h_x}), assigned
// (h_x=...), read (read ... h_x), looped over (for h_x in) or used in
// $((...)).
func TestNoVariableIsAFunction(t *testing.T) {
	word := `(h_[a-z0-9_]+)`
	uses := []*regexp.Regexp{
		regexp.MustCompile(`\$\{?#?` + word + `\b`),
		regexp.MustCompile(`(?:^|[\s;&|(])` + word + `=`),
		regexp.MustCompile(`\bfor ` + word + ` in\b`),
		regexp.MustCompile(`\bread(?: -r)?((?: [a-z_0-9]+)+)`),
		regexp.MustCompile(`\$\(\(([^)]*)\)\)`),
	}
	hWord := regexp.MustCompile(`\b` + word + `\b`)
	bodies := map[string]string{"(facts probe)": lib.probe}
	for _, f := range lib.order {
		bodies[f] = lib.body[f]
	}
	vars, told := 0, map[string]bool{}
	for name, body := range bodies {
		for _, re := range uses {
			for _, m := range re.FindAllStringSubmatch(body, -1) {
				for _, v := range hWord.FindAllString(m[1], -1) {
					vars++
					if _, ok := lib.body[v]; ok && !told[name+" "+v] {
						told[name+" "+v] = true
						t.Errorf("%s uses %s as a variable; it is also a function", name, v)
					}
				}
			}
		}
	}
	if vars < 1000 {
		t.Fatalf("found only %d variable uses in the shell code", vars)
	}
}

// TestShellFilesAreSmall: every file in sh/ is loaded (its functions are
// in shFileOrder, or it is the facts probe) and stays short enough to read
// as one concept, at most 300 lines.
func TestShellFilesAreSmall(t *testing.T) {
	entries, err := shFiles.ReadDir("sh")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		name, ok := strings.CutSuffix(e.Name(), ".sh")
		if !ok {
			continue
		}
		if name != "facts" && !slices.Contains(shFileOrder, name) {
			t.Errorf("sh/%s is not in shFileOrder: its functions are never shipped", e.Name())
		}
		if n := strings.Count(read(name), "\n"); n > 300 {
			t.Errorf("sh/%s has %d lines, more than 300: split it by concept", e.Name(), n)
		}
	}
}

// TestTestFilesAreSmall: no test file in the repository is over 800
// lines; one that grows past it is split by subject, its helpers shared in
// the package's helpers file.
func TestTestFilesAreSmall(t *testing.T) {
	files := 0
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != ".." && strings.HasPrefix(d.Name(), ".") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(d.Name(), "_test.go") {
			return nil
		}
		files++
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if n := bytes.Count(data, []byte("\n")); n > 800 {
			t.Errorf("%s has %d lines, more than 800: split it by subject", filepath.ToSlash(path[len("../"):]), n)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 100 {
		t.Fatalf("found only %d test files from the repository's root", files)
	}
}

// TestScriptOrder: the operation's functions come before LOADED and the
// probe, and the operation runs last.
func TestScriptOrder(t *testing.T) {
	s := Render(OpStatus, Params{Root: Root{Home: true, Path: ".hoist"}}).Script("@m", nil)
	defs, loaded, probe, main := strings.Index(s, "h_op_status() {"), strings.Index(s, "h_say LOADED"),
		strings.Index(s, "h_say FACTS"), strings.LastIndex(s, "h_op_status\n")
	if !(defs >= 0 && defs < loaded && loaded < probe && probe < main) {
		t.Fatalf("order: defs %d, LOADED %d, probe %d, main %d", defs, loaded, probe, main)
	}
}

func TestShellWords(t *testing.T) {
	for in, want := range map[string][]string{
		` "$h_i" plan; done`: {`"$h_i"`, "plan"},
		` lockpath "$h_oddwhy" "$(h_oneline "$h_odd")" ;;`: {"lockpath", `"$h_oddwhy"`, `"$(h_oneline "$h_odd")"`},
		` "$2" $((-h_off))` + "\nnext":                     {`"$2"`, "$((-h_off))"},
		` "$h_n" 'done'`:                                   {`"$h_n"`, "'done'"},
		` "$1" "$(h_oneline "${4:--}")" # x`:               {`"$1"`, `"$(h_oneline "${4:--}")"`},
		`; fi`:                                             nil,
		` "a b"c\ d e`:                                     {`"a b"c\ d`, "e"},
	} {
		if got := shellWords(in); !slices.Equal(got, want) {
			t.Errorf("shellWords(%q) = %q, want %q", in, got, want)
		}
	}
}
