package shellcmd

import (
	"os/exec"
	"testing"
	"time"
)

// TestFragmentsParse checks every fragment with each /bin/sh hoist meets
// (sh -n parses without running anything).
func TestFragmentsParse(t *testing.T) {
	p := Params{Root: Root{Home: true, Path: "x y"}, Token: "t", GuardID: "g", Wait: time.Minute, Argv: []string{"echo", "$(no)"}}
	fragments := map[string]string{
		"status":    Status(p),
		"acquire":   Acquire(p),
		"run":       Run(p),
		"release":   Release(p),
		"break":     Break(p),
		"pushcheck": PushCheck(p),
		"promote":   Promote(p),
		"dropstage": DropStage(p),
		"list":      List(p),
		"activate":  ActivateRuntime(p),
		"rollback":  Rollback(p),
		"pin":       Pin(p),
		"gc":        GC(p),
	}
	for _, shell := range [][]string{{"dash"}, {"bash", "--posix"}, {"busybox", "sh"}, {"mksh"}} {
		if _, err := exec.LookPath(shell[0]); err != nil {
			t.Fatalf("%s is not installed: run make test, which installs the shells hoist is tested with", shell[0])
		}
		for _, probe := range []bool{true, false} {
			var facts *Facts
			if !probe {
				facts = &Facts{Boot: "b/1", Stat: "gnu", Nap: "0.1", Home: "/h"}
			}
			for name, body := range fragments {
				script := Prelude("@hoist:test", facts) + body
				cmd := exec.Command(shell[0], append(shell[1:], "-n", "-c", script)...)
				if out, err := cmd.CombinedOutput(); err != nil {
					t.Errorf("%s: %s (probe %v) does not parse: %v\n%s", shell[0], name, probe, err, out)
				}
			}
		}
	}
}
