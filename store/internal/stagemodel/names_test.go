package stagemodel

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// shell is the text of fragment file f (shellcmd/sh).
func shell(t *testing.T, f string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("../../../shellcmd/sh", f))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestStepsAreTheShells: every h_step hook of the fragments the model
// covers is a step of the model, named alike; each follows the operation
// the model puts before it (the line before the hook, comments aside);
// and docs/protocol.md names each. A hook renamed, moved or added breaks
// this test.
func TestStepsAreTheShells(t *testing.T) {
	doc, err := os.ReadFile("../../../docs/protocol.md")
	if err != nil {
		t.Fatal(err)
	}
	hooks := map[string]Hook{}
	for p, h := range Hooks {
		hooks[p.String()] = h
		if !strings.Contains(string(doc), "`"+p.String()+"`") {
			t.Errorf("docs/protocol.md does not name step %s", p)
		}
	}
	hook := regexp.MustCompile(`^\s*h_step ([a-z]+\.[a-z]+)\s*$`)
	seen := map[string]bool{}
	for _, f := range []string{"stage.sh", "stream.sh", "promote.sh"} {
		var before string
		for _, line := range strings.Split(shell(t, f), "\n") {
			l := strings.TrimSpace(line)
			m := hook.FindStringSubmatch(line)
			switch {
			case m != nil:
				seen[m[1]] = true
				h, ok := hooks[m[1]]
				switch {
				case !ok:
					t.Errorf("%s stops at %s, which is no step of the model", f, m[1])
				case h.File != f:
					t.Errorf("%s stops at %s, which the model has in %s", f, m[1], h.File)
				case before != h.After:
					t.Errorf("%s: %s follows %q, the model's step follows %q", f, m[1], before, h.After)
				}
			case l != "" && !strings.HasPrefix(l, "#"):
				before = l
			}
		}
	}
	for name := range hooks {
		if !seen[name] {
			t.Errorf("the model has step %s, which no fragment stops at", name)
		}
	}
}

// ops is, for steps of the model, the operation of the fragment it is,
// as the fragment writes it.
var ops = []struct {
	at   string
	file string
	op   string
}{
	{PResumeTake.String(), "stage.sh", `mv "$h_d/resume" "$h_d/taken-$hp_stok"`},
	{PResumeTaken.String(), "stage.sh", `mv "$h_d" "$h_stage"`},
	{PResumeEnter.String(), "stage.sh", `! h_enter || [ ! -f "taken-$hp_stok" ]`},
	{PResumeClean.String(), "stage.sh", `rm -f "taken-$hp_stok" cut`},
	{PResumeCopy.String(), "stage.sh", `dd if=artifact.tar of=artifact.new`},
	{PResumeSwap.String(), "stage.sh", `mv -f artifact.new artifact.tar`},
	{PPushMark.String(), "push.sh", `mv -f resume.t resume`},
	{PClaimMv.String(), "stage.sh", `mv resume "claimed-$hp_stok"`},
	{PClaimGlob.String(), "stage.sh", `for h_c in claimed-*; do`},
	{PClaimMine.String(), "stage.sh", `[ -f "$h_c" ] && mv "$h_c" "claimed-$hp_stok"`},
	{PClaimBack.String(), "stage.sh", `h_unclaim() { mv "claimed-$hp_stok" resume 2>/dev/null; }`},
	{PMarked.String(), "promote.sh", `if ! mkdir "$h_ud" 2>/dev/null`},
	{PStreamOpen.String(), "stream.sh", `6<artifact.tar 8<artifact.tar`},
	{PYieldUnud.String(), "stream.sh", `rm -rf "$h_ud" "$h_sd"`},
	{PYieldCut.String(), "stream.sh", `printf '%s\n' "${h_x:-0}" >./cut`},
	{PSum.String(), "promote.sh", `h_sha256 artifact.tar >"$h_ud/sum"`},
	{PTar.String(), "promote.sh", `tar -xof ../artifact.tar`},
	{PDrop.String(), "promote.sh", `rm -rf artifact.tar "$h_ud/pool" "$h_ud/sum" "claimed-$hp_stok"`},
	{PMove.String(), "promote.sh", `h_movein "$h_ud/tree" "$h_store/$hp_id"`},
	{PUnstageDir.String(), "stage.sh", `cd .. && rmdir "./${h_stage##*/}"`},
	{GIdle.String(), "gc.sh", `if h_idle "$h_d" "$h_min"; then`},
	{GRename.String(), "gc.sh", `mv "$h_d" "$h_sw" 2>/dev/null || continue`},
}

// TestOpsAreTheShells: the operations the model's steps are stand in the
// fragments as the model has them.
func TestOpsAreTheShells(t *testing.T) {
	for _, o := range ops {
		if !strings.Contains(shell(t, o.file), o.op) {
			t.Errorf("step %s is %s in %s, which has no such operation", o.at, o.op, o.file)
		}
	}
}
