package shellcmd

// Tests of single shell functions, run under every /bin/sh hoist meets. The
// harness (fnRun) builds one script the way a host command is built: the
// prelude, the parameters Render would assign (hp_*, from fnParams: those
// the functions, the test doubles and the call read), the variables h_setup
// sets, the function's definitions and everything it calls (lib.closure),
// then the call; it prints
// the call's status and the variables the functions set, length-prefixed,
// after a separator line. The function files of this kind are
// functions_*_test.go.

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

const fnMarker = "@fn"

// Tokens: hp_me is always fnMe; the others hold or held the lock.
const (
	fnMe    = "aaaaaaaa-1111-4111-8111-aaaaaaaaaaaa"
	fnOther = "bbbbbbbb-2222-4222-8222-bbbbbbbbbbbb"
	fnThird = "cccccccc-3333-4333-8333-cccccccccccc"
)

// The host the harness pretends to be, and other facts for records.
const (
	fnMach, fnMach2 = "m1:host", "m2:other"
	fnBoot, fnBoot2 = "0a0b0c0d-0000-4000-8000-000000000001", "0a0b0c0d-0000-4000-8000-000000000002"
	fnNS, fnNS2     = "4026531836", "4026532999"
	fnInit, fnInit2 = "17", "4242"
)

// fnDump lists the variables every run prints.
var fnDump = []string{"h_kind", "h_tok", "h_line", "h_rp", "h_odd", "h_oddwhy", "h_r_tok", "h_r_mach",
	"h_r_boot", "h_r_ns", "h_r_init", "h_why", "h_a", "h_lasterr", "h_par", "hp_me", "hp_rid", "h_scr"}

// fnRun is one run of shell functions.
type fnRun struct {
	fns  []string          // the functions to define, with everything they call
	vars map[string]string // assignments after the defaults (facts too)
	defs string            // shell code after the definitions: setup, test doubles
	call string            // the code under test, in a function: its status is the result
	wrap []string          // a command the shell runs under (unshare ...), if any
}

type fnResult struct {
	rc     int
	said   []string // verdict lines, without the marker
	v      map[string]string
	stderr string
}

// fnPaths are the store paths for a root, as h_setup computes them.
func fnPaths(root string) (store, lock, runs string) {
	store = root + "/" + StoreDir
	return store, store + "/" + LockName, root + "/" + RunsDir
}

// fnParams are the parameters every run starts from, as Render gives them.
func fnParams(root string) Params {
	return Params{Root: Root{Path: root}, Token: fnMe, Record: "pid=42 who=u%40h ver=test cmd=test msg=m%20x",
		Stale: 1200 * time.Second, Lease: 1200 * time.Second, Grace: 10 * time.Second}
}

func (r fnRun) script(root string) string {
	var b strings.Builder
	b.WriteString(prelude(fnMarker, &Facts{Machine: fnMach, BootID: fnBoot, PIDNS: fnNS, Init: fnInit,
		Stat: "gnu", Nap: "0.1", UID: strconv.Itoa(os.Getuid()), Home: "/nonexistent"}))
	// The parameters the functions, the test doubles and the call read,
	// as Render assigns them for an operation; then what h_setup sets.
	fns := lib.closure(r.fns...)
	reads := lib.reads(fns)
	for _, m := range hpRE.FindAllStringSubmatch(r.defs+"\n"+r.call, -1) {
		reads[m[1]] = true
	}
	for _, v := range fnParams(root).values() {
		if reads[v.name] {
			assign(&b, "hp_"+v.name, v.value)
		}
	}
	store, lock, runs := fnPaths(root)
	base := [][2]string{{"h_root", root}, {"h_store", store}, {"h_lock", lock}, {"h_runs", runs}, {"h_scr", ""},
		{"h_every", "10"}, {"h_mylease", "1200"}, {"h_manual", ""}, {"h_isrun", ""}, {"h_gpid", ""},
		{"h_gw", ""}, {"h_proc", "1"}}
	for _, kv := range base {
		assign(&b, kv[0], kv[1])
	}
	keys := make([]string, 0, len(r.vars))
	for k := range r.vars {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		assign(&b, k, r.vars[k])
	}
	for _, f := range fns {
		b.WriteString(lib.body[f])
	}
	b.WriteString(r.defs + "\n")
	b.WriteString("h_t_call() {\n" + r.call + "\n}\nh_t_call\nh_rc=$?\nprintf '\\n@@dump %s\\n' \"$h_rc\"\n")
	for _, v := range fnDump {
		fmt.Fprintf(&b, "printf '%%s %%s\\n%%s\\n' %s \"${#%s}\" \"$%s\"\n", v, v, v)
	}
	return b.String()
}

// do runs r under sh with root as the store's root (which need not exist).
func (r fnRun) do(t *testing.T, sh []string, root string) fnResult {
	t.Helper()
	// A parameter is set by its hp_ name, and only a parameter Render has.
	isParam := func(name string) bool {
		return slices.ContainsFunc(Params{}.values(), func(v param) bool { return v.name == name })
	}
	for k := range r.vars {
		if name, ok := strings.CutPrefix(k, "hp_"); ok && !isParam(name) {
			t.Fatalf("%s is not a parameter Render assigns", k)
		} else if name, ok := strings.CutPrefix(k, "h_"); ok && isParam(name) {
			t.Fatalf("%s: the parameter is hp_%s", k, name)
		}
	}
	script := r.script(root)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	argv := append(append(append([]string{}, r.wrap...), sh...), "-c", script)
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = filepath.Dir(root) // relative paths resolve in the test's directory
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "LC_ALL=C", "HOME=/nonexistent"}
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	out := stdout.String()
	i := strings.LastIndex(out, "\n@@dump ")
	if err != nil || i < 0 {
		t.Fatalf("%s: %s: %v (no result)\nstdout:\n%s\nstderr:\n%s", sh[0], r.call, err, out, stderr.String())
	}
	res := fnResult{v: map[string]string{}, stderr: stderr.String()}
	for _, l := range strings.Split(out[:i], "\n") {
		if v, ok := strings.CutPrefix(l, fnMarker+" "); ok {
			res.said = append(res.said, v)
		}
	}
	rest := out[i+len("\n@@dump "):]
	head, rest, _ := strings.Cut(rest, "\n")
	res.rc, err = strconv.Atoi(head)
	for err == nil && rest != "" {
		var name, n string
		head, rest, _ = strings.Cut(rest, "\n")
		name, n, _ = strings.Cut(head, " ")
		var size int
		if size, err = strconv.Atoi(n); err == nil && size < len(rest) {
			res.v[name], rest = rest[:size], rest[size+1:]
		} else if err == nil {
			err = fmt.Errorf("short value of %s", name)
		}
	}
	if err != nil {
		t.Fatalf("%s: cannot parse the result: %v\n%s", sh[0], err, out)
	}
	// Nothing the functions run may complain: a shell's complaint about a
	// test or an expansion is a bug.
	if res.stderr != "" {
		t.Errorf("%s: %s wrote to stderr:\n%s", sh[0], r.call, res.stderr)
	}
	return res
}

// fnShells runs f once per shell, each in a subtest of its own, with a root
// path (not created) that has a space and glob characters in it, so that
// any unquoted use of a path shows.
func fnShells(t *testing.T, f func(t *testing.T, sh []string, root string)) {
	t.Helper()
	for _, sh := range shells {
		needShell(t, sh)
		t.Run(sh[0], func(t *testing.T) {
			t.Parallel()
			f(t, sh, filepath.Join(t.TempDir(), "a root*"))
		})
	}
}

// fnRec is a record line as h_create writes it.
func fnRec(tok, mach, boot, ns, init string) string {
	return fmt.Sprintf("hoist-lock/2 token=%s since=1700000000 mach=%s boot=%s pidns=%s init=%s pid=7 who=u%%40h ver=1 cmd=run msg=hi",
		tok, mach, boot, ns, init)
}

func fnWrite(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func fnMkdir(t *testing.T, path string) {
	t.Helper()
	if err := os.MkdirAll(path, 0o755); err != nil {
		t.Fatal(err)
	}
}

// fnTree lists everything under dir, relative to it, directories with a
// trailing slash and symlinks with "@": what a test expects to be left.
func fnTree(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		switch {
		case d.Type()&os.ModeSymlink != 0:
			rel += "@"
		case d.IsDir():
			rel += "/"
		}
		out = append(out, rel)
		return nil
	})
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return out
}

func fnWantTree(t *testing.T, dir string, want ...string) {
	t.Helper()
	want = slices.Sorted(slices.Values(want))
	got := fnTree(t, dir)
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("left under %s:\n  %q\nwant\n  %q", filepath.Base(dir), got, want)
	}
}

// fnWantVars checks the named variables of a result.
func fnWantVars(t *testing.T, sh []string, r fnResult, want map[string]string) {
	t.Helper()
	for k, w := range want {
		if r.v[k] != w {
			t.Errorf("%s: %s = %q, want %q", sh[0], k, r.v[k], w)
		}
	}
}

// fnCall is shell code that runs call, then says the named variables (one
// "V name=value" line each, which fnShown reads) and returns call's status.
func fnCall(call string, names ...string) string {
	var b strings.Builder
	b.WriteString(call + "\nh_t_rc=$?\n")
	for _, n := range names {
		fmt.Fprintf(&b, "printf '\\n%%s V %s=%%s\\n' \"$h_marker\" \"$%s\"\n", n, n)
	}
	b.WriteString("return $h_t_rc")
	return b.String()
}

// fnShown splits what a run said into the variables fnCall showed and the
// other verdict lines.
func fnShown(r fnResult) (map[string]string, []string) {
	vals := map[string]string{}
	var said []string
	for _, l := range r.said {
		if kv, ok := strings.CutPrefix(l, "V "); ok {
			k, v, _ := strings.Cut(kv, "=")
			vals[k] = v
			continue
		}
		said = append(said, l)
	}
	return vals, said
}

func fnWant(t *testing.T, sh []string, what string, got, want map[string]string) {
	t.Helper()
	for k, w := range want {
		if g, ok := got[k]; !ok || g != w {
			t.Errorf("%s: %s: %s = %q, want %q", sh[0], what, k, g, w)
		}
	}
}

// fnFields are a hoist-lock/2 record's facts; fnRecWith writes them as
// h_create does.
type fnFields struct{ mach, boot, ns, init, lease, hpid, hstart, huid string }

// fnHere is a record of this host (the harness's facts) and this login,
// naming no holder process yet.
func fnHere() fnFields {
	return fnFields{fnMach, fnBoot, fnNS, fnInit, "1200", "-", "-", strconv.Itoa(os.Getuid())}
}

func fnRecWith(tok string, f fnFields) string {
	return fmt.Sprintf("hoist-lock/2 token=%s since=1700000000 mach=%s boot=%s pidns=%s init=%s lease=%s hpid=%s hstart=%s huid=%s pid=7 who=u%%40h ver=1 cmd=run msg=hi",
		tok, f.mach, f.boot, f.ns, f.init, f.lease, f.hpid, f.hstart, f.huid)
}

func fnItoa(n int) string { return strconv.Itoa(n) }

// fnEpoch is the host's clock in the cases on a lease's boundary: fnClock
// stops the shell's date +%s there, and their records are aged from it
// (fnPinned, or a touch after fnClock), so that "exactly the lease" cannot
// become a second more between the test's touch and the shell's look.
const fnEpoch = 1800000000

// fnClock is shell code that makes date +%s say fnEpoch.
var fnClock = fmt.Sprintf(`date() { case $1 in +%%s) echo %d ;; *) command date "$@" ;; esac; }`, fnEpoch)

// fnBytes is n bytes of text that differ from line to line, so that any
// misplaced offset shows.
func fnBytes(n int, tag string) string {
	var b strings.Builder
	for i := 0; b.Len() < n; i++ {
		fmt.Fprintf(&b, "%s line %06d\n", tag, i)
	}
	return b.String()[:n]
}

// fnRunRecord writes the record of run fnMe under root: info, and outputs
// of outN and errN bytes, which it returns with the record's directory.
func fnRunRecord(t *testing.T, root, info string, outN, errN int) (scr, out, errs string) {
	t.Helper()
	_, _, runs := fnPaths(root)
	scr = runs + "/" + fnMe
	out, errs = fnBytes(outN, "out"), fnBytes(errN, "err")
	fnWrite(t, scr+"/info", info)
	fnWrite(t, scr+"/out", out)
	fnWrite(t, scr+"/err", errs)
	return scr, out, errs
}

// fnLogs reads what h_op_logs wrote to logs.out and logs.err in dir: the
// verdict lines (on lines of their own), and the output between them.
func fnLogs(t *testing.T, dir string) (said []string, out, errs string) {
	t.Helper()
	gotOut, err1 := os.ReadFile(dir + "/logs.out")
	gotErr, err2 := os.ReadFile(dir + "/logs.err")
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	var data strings.Builder
	rest := string(gotOut)
	for rest != "" {
		i := strings.Index(rest, "\n"+fnMarker+" ")
		if i < 0 {
			data.WriteString(rest)
			break
		}
		data.WriteString(rest[:i])
		line, after, _ := strings.Cut(rest[i+1:], "\n")
		said = append(said, strings.TrimPrefix(line, fnMarker+" "))
		rest = after
	}
	return said, data.String(), string(gotErr)
}
