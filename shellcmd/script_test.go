package shellcmd

import (
	"os/exec"
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
	p := Params{Root: DefaultRoot, Token: "t"}
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

// TestScriptOrder: the operation's functions come before LOADED and the
// probe, and the operation runs last.
func TestScriptOrder(t *testing.T) {
	s := Render(OpStatus, Params{Root: DefaultRoot}).Script("@m", nil)
	defs, loaded, probe, main := strings.Index(s, "h_op_status() {"), strings.Index(s, "h_say LOADED"),
		strings.Index(s, "h_say FACTS"), strings.LastIndex(s, "h_op_status\n")
	if !(defs >= 0 && defs < loaded && loaded < probe && probe < main) {
		t.Fatalf("order: defs %d, LOADED %d, probe %d, main %d", defs, loaded, probe, main)
	}
}
