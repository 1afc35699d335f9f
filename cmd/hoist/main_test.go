package main

import (
	"errors"
	"net"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){"hoist": main})
}

// TestScripts runs the CLI transcripts in testdata/ on the local target: the
// command line contract (flags, output, exit codes) as a user sees it.
func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir: "testdata",
		Setup: func(env *testscript.Env) error {
			env.Setenv("HOIST_ROOT", env.WorkDir+"/root")
			// Under -race every hoist the scripts run would sleep a second
			// as it exits (the race runtime's default atexit_sleep_ms).
			env.Setenv("GORACE", strings.TrimSpace("atexit_sleep_ms=0 "+os.Getenv("GORACE")))
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			// exits N CMD ARG...: CMD exits with status N.
			"exits": func(ts *testscript.TestScript, neg bool, args []string) {
				if neg || len(args) < 2 {
					ts.Fatalf("usage: exits N command [args...]")
				}
				want, err := strconv.Atoi(args[0])
				if err != nil {
					ts.Fatalf("exits: %v", err)
				}
				got := 0
				if err := ts.Exec(args[1], args[2:]...); err != nil {
					var ee *exec.ExitError
					if !errors.As(err, &ee) {
						ts.Fatalf("%s: %v", args[1], err)
					}
					got = ee.ExitCode()
				}
				if got != want {
					ts.Fatalf("%s exited %d, want %d", args[1], got, want)
				}
			},
			// json TYPE: every line of the last command's stdout decodes
			// into output.TYPE, strictly: no field the type lacks.
			"json": func(ts *testscript.TestScript, neg bool, args []string) {
				if neg || len(args) != 1 {
					ts.Fatalf("usage: json TYPE")
				}
				ts.Check(decodeLines(ts.ReadFile("stdout"), args[0]))
			},
			// capture VAR REGEXP: VAR is the first group of REGEXP's first
			// match in the last command's stdout.
			"capture": func(ts *testscript.TestScript, neg bool, args []string) {
				if neg || len(args) != 2 {
					ts.Fatalf("usage: capture VAR REGEXP")
				}
				m := regexp.MustCompile("(?m)" + args[1]).FindStringSubmatch(ts.ReadFile("stdout"))
				if len(m) < 2 {
					ts.Fatalf("capture: no match for %s in stdout", args[1])
				}
				ts.Setenv(args[0], m[1])
			},
		},
	})
}

// silentListener is a TCP listener on loopback that counts the connections
// made to it and never speaks: it closes each at once, or, with hold,
// keeps it open until the test ends, as a host that never answers.
func silentListener(t *testing.T, hold bool) (net.Listener, *atomic.Int32) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	var dialled atomic.Int32
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			dialled.Add(1)
			if hold {
				defer c.Close()
			} else {
				c.Close()
			}
		}
	}()
	return l, &dialled
}
