package output

import (
	"go/ast"
	"go/parser"
	"go/token"
	"maps"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestREADMENamesEveryField reads the README's JSON section: each of its
// paragraphs (the opening one and every item of the list) names the types
// it describes, as `output.Name`, and their fields, as `field`. A type's
// fields are its own and those of the types it embeds, unless a paragraph
// names the embedded type itself. The test fails on a field a paragraph
// leaves out, on a name it gives that its types lack, and on a type that
// no paragraph names. Values are written quoted (`"stale"`) and commands
// with hoist in front (`hoist lock status`), so that they are not taken
// for fields. Any paragraph may name the fields every object has.
func TestREADMENamesEveryField(t *testing.T) {
	types := structTypes(t)
	paras := jsonSection(t)

	where := map[string]int{} // type name: the paragraph that names it
	for i, p := range paras {
		for _, name := range p.types {
			if _, ok := types[name]; !ok {
				t.Errorf("README's JSON section names output.%s, which is not a type of package output", name)
				continue
			}
			if j, dup := where[name]; dup && j != i {
				t.Errorf("README's JSON section names output.%s twice (%q and %q)", name, paras[j].lead, p.lead)
			}
			where[name] = i
		}
	}
	for _, name := range slices.Sorted(maps.Keys(types)) {
		if _, ok := where[name]; !ok && !embeddedOnly(name, types, where) {
			t.Errorf("README's JSON section does not name output.%s (as `output.%s`) nor describe its fields", name, name)
		}
	}
	common := map[string]bool{} // every object has them: any paragraph may name them
	for _, f := range fieldsOf("Result", types, nil) {
		common[f.json] = true
	}
	for _, p := range paras {
		want := map[string]string{} // field: its type
		for _, name := range p.types {
			for _, f := range fieldsOf(name, types, where) {
				want[f.json] = f.in
			}
		}
		for _, f := range slices.Sorted(maps.Keys(want)) {
			if !slices.Contains(p.fields, f) {
				t.Errorf("README's JSON section, at %q: field %s of output.%s is not named", p.lead, f, want[f])
			}
		}
		for _, f := range p.fields {
			if _, ok := want[f]; !ok && !common[f] {
				t.Errorf("README's JSON section, at %q: names `%s`, which none of %v has", p.lead, f, p.types)
			}
		}
	}
}

// embeddedOnly reports whether the type is embedded in a type that a
// paragraph names, which then describes its fields.
func embeddedOnly(name string, types map[string][]field, where map[string]int) bool {
	for outer, fs := range types {
		for _, f := range fs {
			if f.embedded == name && (hasKey(where, outer) || embeddedOnly(outer, types, where)) {
				return true
			}
		}
	}
	return false
}

func hasKey[V any](m map[string]V, k string) bool { _, ok := m[k]; return ok }

type field struct {
	json     string // the field's JSON name, or "" for an embedded struct
	embedded string // the embedded type's name
	in       string // the type that declares it
}

// fieldsOf lists the JSON fields of the type name, with those of the
// types it embeds that no paragraph names.
func fieldsOf(name string, types map[string][]field, where map[string]int) []field {
	var out []field
	for _, f := range types[name] {
		switch {
		case f.embedded == "":
			out = append(out, f)
		case !hasKey(where, f.embedded):
			out = append(out, fieldsOf(f.embedded, types, where)...)
		}
	}
	return out
}

// structTypes reads the package's source: every struct type, with its
// fields.
func structTypes(t *testing.T) map[string][]field {
	t.Helper()
	fset := token.NewFileSet()
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	types := map[string][]field{}
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, e.Name(), nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			ts, ok := n.(*ast.TypeSpec)
			if !ok {
				return true
			}
			st, ok := ts.Type.(*ast.StructType)
			if !ok {
				return false
			}
			fs := []field{}
			for _, fl := range st.Fields.List {
				if len(fl.Names) == 0 {
					typ := fl.Type
					if star, ok := typ.(*ast.StarExpr); ok {
						typ = star.X
					}
					fs = append(fs, field{embedded: typ.(*ast.Ident).Name, in: ts.Name.Name})
					continue
				}
				var tag string
				if fl.Tag != nil {
					tag, _ = strconv.Unquote(fl.Tag.Value)
				}
				js, _, _ := strings.Cut(reflect.StructTag(tag).Get("json"), ",")
				if js == "" {
					t.Errorf("output.%s.%s has no json name", ts.Name.Name, fl.Names[0].Name)
				}
				fs = append(fs, field{json: js, in: ts.Name.Name})
			}
			types[ts.Name.Name] = fs
			return false
		})
	}
	return types
}

// paragraph is the opening paragraph or an item of the JSON section's list.
type paragraph struct {
	lead   string   // its first words, to say where
	types  []string // the types it names
	fields []string // the fields it names
}

var (
	codeRE  = regexp.MustCompile("`([^`]*)`")
	typeRE  = regexp.MustCompile(`^output\.([A-Z][A-Za-z]*)$`)
	fieldRE = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)
)

func jsonSection(t *testing.T) []paragraph {
	t.Helper()
	b, err := os.ReadFile("../../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, sec, ok := strings.Cut(string(b), "\n### JSON\n")
	if !ok {
		t.Fatal("README.md has no ### JSON section")
	}
	if i := strings.Index(sec, "\n#"); i >= 0 {
		sec = sec[:i]
	}
	var texts []string
	for _, line := range strings.Split(strings.TrimSpace(sec), "\n") {
		switch {
		case strings.HasPrefix(line, "- "), len(texts) == 0, strings.TrimSpace(line) == "":
			texts = append(texts, line)
		default:
			texts[len(texts)-1] += "\n" + line
		}
	}
	var paras []paragraph
	for _, text := range texts {
		if strings.TrimSpace(text) == "" {
			continue
		}
		p := paragraph{lead: strings.Join(strings.Fields(text)[:min(6, len(strings.Fields(text)))], " ")}
		for _, m := range codeRE.FindAllStringSubmatch(text, -1) {
			switch code := m[1]; {
			case typeRE.MatchString(code):
				p.types = append(p.types, typeRE.FindStringSubmatch(code)[1])
			case fieldRE.MatchString(code):
				p.fields = append(p.fields, code)
			}
		}
		if len(p.types) == 0 && len(p.fields) > 0 {
			t.Errorf("README's JSON section, at %q: names fields but no type (`output.Name`)", p.lead)
		}
		paras = append(paras, p)
	}
	return paras
}
