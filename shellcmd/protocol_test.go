package shellcmd

import (
	"os"
	"slices"
	"strings"
	"testing"
)

// TestEveryErrorCodeIsRead: each ERROR code an operation can end with is a
// row of the table of codes, with the package whose errors it is and its
// sentence, so no host error reaches a user as a bare code; and each row is
// a code some operation ends with (TestOpsTableMatchesTheShellCode holds the
// operations' codes to the shell).
func TestEveryErrorCodeIsRead(t *testing.T) {
	ended := map[Code]bool{}
	for _, op := range Ops {
		for _, c := range op.Codes {
			ended[c] = true
			if _, ok := codeSpecs[c]; !ok {
				t.Errorf("%s can end with ERROR %s, which the table of codes does not list", op.Name, c)
			}
		}
	}
	for _, c := range codes {
		if !ended[c.code] {
			t.Errorf("the table lists ERROR %s, which no operation ends with", c.code)
		}
		if s := c.code.Explain("some text"); s == "" || strings.HasPrefix(s, "host error:") {
			t.Errorf("ERROR %s reads as %q, not as a sentence", c.code, s)
		}
	}
	if got := Code("bogus").Explain("x"); got != "host error: bogus x" {
		t.Errorf("an unknown code reads as %q", got)
	}
}

// docVerbs reads the verb table of a doc's section: each verb the table
// lists, with its fields.
func docVerbs(t *testing.T, file, section string) map[Verb][]string {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	_, text, ok := strings.Cut(string(data), "\n## "+section+"\n")
	if !ok {
		t.Fatalf("%s has no section %q", file, section)
	}
	text, _, _ = strings.Cut(text, "\n## ")
	verbs := map[Verb][]string{}
	for _, line := range strings.Split(text, "\n") {
		if !strings.HasPrefix(line, "| `") {
			continue
		}
		cols := strings.SplitN(line, "|", 4) // "", verbs, fields, meaning
		if len(cols) < 4 {
			t.Errorf("%s: a row without fields and meaning: %q", file, line)
			continue
		}
		for _, name := range strings.Split(cols[1], ",") {
			v := Verb(strings.Trim(strings.TrimSpace(name), "`"))
			if _, dup := verbs[v]; dup {
				t.Errorf("%s lists %s twice", file, v)
			}
			verbs[v] = strings.Fields(cols[2])
		}
	}
	if len(verbs) < 8 {
		t.Fatalf("%s, %q: found only %d verbs", file, section, len(verbs))
	}
	return verbs
}

// TestDocsListEveryVerb: the verb tables of docs/protocol.md (the lock's
// verbs) and docs/store.md (the store's) list every verb of the protocol
// table with its fields by name and in order, and nothing else; and each
// doc names its error codes.
func TestDocsListEveryVerb(t *testing.T) {
	docs := map[owner]map[Verb][]string{
		ofLock:    docVerbs(t, "../docs/protocol.md", "Verdicts and what the client makes of them"),
		ofStore:   docVerbs(t, "../docs/store.md", "Replies"),
		ofRollout: docVerbs(t, "../docs/rollout.md", "Verdicts"),
	}
	names := map[owner]string{ofLock: "docs/protocol.md", ofStore: "docs/store.md", ofRollout: "docs/rollout.md"}
	for _, spec := range protocol {
		fields, ok := docs[spec.owner][spec.verb]
		switch {
		case !ok:
			t.Errorf("%s does not list %s", names[spec.owner], spec.verb)
		case !slices.Equal(fields, spec.fields):
			t.Errorf("%s lists %s with fields %v; the table has %v", names[spec.owner], spec.verb, fields, spec.fields)
		}
	}
	// A doc may list another's verb too (store.md: NOSTORE), as it is.
	for o, verbs := range docs {
		for v, fields := range verbs {
			spec, ok := specs[v]
			switch {
			case !ok:
				t.Errorf("%s lists %s, which the protocol table does not", names[o], v)
			case spec.owner != o && !slices.Equal(fields, spec.fields):
				t.Errorf("%s lists %s with fields %v; the table has %v", names[o], v, fields, spec.fields)
			}
		}
	}
	for _, c := range codes {
		data, err := os.ReadFile("../" + names[c.owner])
		if err != nil {
			t.Fatal(err)
		}
		_, para, _ := strings.Cut(string(data), "\nError codes of the ")
		para, _, _ = strings.Cut(para, "\n\n")
		if !strings.Contains(para, "`"+string(c.code)+"`") {
			t.Errorf("%s does not name ERROR %s where it lists its error codes", names[c.owner], c.code)
		}
	}
}

// TestEveryVerbIsSent: every row of the protocol table is a verb some
// operation may send ([Op.Allows]: LOADED and FACTS belong to every
// command), so the table holds no verb that nothing says.
func TestEveryVerbIsSent(t *testing.T) {
	for _, spec := range protocol {
		var by []string
		for _, op := range Ops {
			if op.Allows(spec.verb) {
				by = append(by, op.Name)
			}
		}
		if len(by) == 0 {
			t.Errorf("%s is in the protocol table, but no operation sends it", spec.verb)
		}
	}
}
