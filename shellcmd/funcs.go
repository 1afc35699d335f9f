package shellcmd

import (
	"embed"
	"fmt"
	"regexp"
	"slices"
	"strings"
)

//go:embed sh/*.sh
var shFiles embed.FS

// library is every shell function in sh/*.sh: its name, its body with
// comments and indentation dropped (it travels on every command), and the
// functions it calls.
type library struct {
	order []string          // definition order, file by file
	body  map[string]string // name → definition
	calls map[string][]string
	// params are the parameters (hp_<name>, by name) each function reads.
	params map[string][]string
	probe  string // facts.sh: top-level code, not a function
}

var (
	defRE  = regexp.MustCompile(`^(h_[a-z0-9_]+)\(\) \{`)
	callRE = regexp.MustCompile(`\bh_[a-z0-9_]+\b`)
	hpRE   = regexp.MustCompile(`\bhp_([a-z0-9_]+)\b`)
	lib    = loadLibrary()
)

// shFileOrder lists the files in the order their functions are defined in a
// command; the order does not matter to sh, it only keeps fragments stable.
var shFileOrder = []string{"lib", "setup", "proc", "sample", "rules", "lease", "create", "steal",
	"release", "wait", "wrap", "ops", "runs", "sha", "store", "stage", "reuse", "push", "fetch", "fetchget", "reach", "promote", "stream",
	"manage", "bad", "health", "journal", "recheck", "rollout", "records", "gc", "doctor", "doctor-tools"}

func loadLibrary() *library {
	l := &library{body: map[string]string{}, calls: map[string][]string{}, params: map[string][]string{}}
	for _, name := range shFileOrder {
		l.parse(name, read(name))
	}
	l.probe = strip(read("facts"))
	for name, body := range l.body {
		seen := map[string]bool{name: true}
		for _, c := range callRE.FindAllString(body, -1) {
			if _, ok := l.body[c]; ok && !seen[c] {
				seen[c] = true
				l.calls[name] = append(l.calls[name], c)
			}
		}
		for _, m := range hpRE.FindAllStringSubmatch(body, -1) {
			if !slices.Contains(l.params[name], m[1]) {
				l.params[name] = append(l.params[name], m[1])
			}
		}
	}
	return l
}

// reads is the set of parameters that fns read.
func (l *library) reads(fns []string) map[string]bool {
	r := map[string]bool{}
	for _, f := range fns {
		for _, p := range l.params[f] {
			r[p] = true
		}
	}
	return r
}

func read(name string) string {
	data, err := shFiles.ReadFile("sh/" + name + ".sh")
	if err != nil {
		panic(err)
	}
	return string(data)
}

// parse splits a file into its functions. A function starts with
// "h_name() {" at the start of a line and ends with "}" at the start of a
// line (one-line functions end on the same line); outside functions only
// comments and blank lines are allowed.
func (l *library) parse(file, text string) {
	var cur string
	var b strings.Builder
	end := func() {
		l.body[cur] = strip(b.String())
		l.order = append(l.order, cur)
		cur = ""
	}
	for _, line := range strings.Split(text, "\n") {
		if cur == "" {
			t := strings.TrimSpace(line)
			if t == "" || strings.HasPrefix(t, "#") {
				continue
			}
			m := defRE.FindStringSubmatch(line)
			if m == nil {
				panic(fmt.Sprintf("sh/%s.sh: %q outside a function", file, line))
			}
			cur = m[1]
			if _, dup := l.body[cur]; dup {
				panic("sh/" + file + ".sh: " + cur + " defined twice")
			}
			b.Reset()
			b.WriteString(line + "\n")
			if strings.HasSuffix(line, "}") {
				end()
			}
			continue
		}
		b.WriteString(line + "\n")
		if strings.HasPrefix(line, "}") {
			end()
		}
	}
	if cur != "" {
		panic("sh/" + file + ".sh: " + cur + " does not end")
	}
}

// strip drops comments, indentation and blank lines.
func strip(text string) string {
	var b strings.Builder
	for line := range strings.SplitSeq(text, "\n") {
		line = strings.TrimLeft(line, " \t")
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		b.WriteString(line + "\n")
	}
	return b.String()
}

// closure is every function reachable from roots, in definition order.
func (l *library) closure(roots ...string) []string {
	need := map[string]bool{}
	var visit func(string)
	visit = func(f string) {
		if need[f] {
			return
		}
		if _, ok := l.body[f]; !ok {
			panic("shellcmd: no shell function " + f)
		}
		need[f] = true
		for _, c := range l.calls[f] {
			visit(c)
		}
	}
	for _, r := range roots {
		visit(r)
	}
	var out []string
	for _, f := range l.order {
		if need[f] {
			out = append(out, f)
		}
	}
	return out
}

// Functions lists the shell functions op's command carries: h_op_<name>,
// h_setup, h_say (which the facts probe uses) and everything they call.
func (op *Op) Functions() []string {
	return lib.closure("h_op_"+op.Name, "h_setup", "h_say")
}

// said lists the verbs and ERROR codes that fns can say, as written in the
// shell files ("h_say VERB", "h_say_holder VERB" and "h_say ERROR code"):
// what a test compares with the table.
func said(fns []string) (verbs []Verb, errCodes []Code) {
	sayRE := regexp.MustCompile(`h_say(?:_holder)? ([A-Z]+)(?: ([a-z0-9]+))?`)
	for _, f := range fns {
		for _, m := range sayRE.FindAllStringSubmatch(lib.body[f], -1) {
			if !slices.Contains(verbs, Verb(m[1])) {
				verbs = append(verbs, Verb(m[1]))
			}
			if m[1] == string(VerbError) && !slices.Contains(errCodes, Code(m[2])) {
				errCodes = append(errCodes, Code(m[2]))
			}
		}
	}
	return verbs, errCodes
}
