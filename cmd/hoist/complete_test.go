package main

import (
	"bytes"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestCompletionGivesUp: completing a runtime on a host that accepts the
// connection and never answers offers nothing, once completeTimeout has
// passed, and says nothing on stdout but the directive.
func TestCompletionGivesUp(t *testing.T) {
	l, _ := silentListener(t, true)
	t.Setenv("HOME", t.TempDir())
	var out, errb bytes.Buffer
	begin := time.Now()
	code := newApp(&out, &errb, nil).execute([]string{"-H", "tester@" + l.Addr().String(), "__complete", "activate", ""})
	took := time.Since(begin)
	if code != 0 || strings.TrimSpace(out.String()) != ":4" {
		t.Fatalf("exit %d, stdout %q, want only the directive :4", code, out.String())
	}
	if took < completeTimeout/2 || took > 3*completeTimeout {
		t.Errorf("gave up after %v; the bound is %v", took, completeTimeout)
	}
}

// TestValidID: completion offers only ids hoist makes.
func TestValidID(t *testing.T) {
	for id, want := range map[string]bool{
		"web-0123456789ab": true, "my-app.v2-abcdef012345": true,
		"web": false, "web-0123456789": false, "web-0123456789AB": false, "-0123456789ab": false,
		".web-0123456789ab": false, "x$(id)-0123456789ab": false, "a b-0123456789ab": false,
	} {
		if got := validID(id); got != want {
			t.Errorf("validID(%q) = %v, want %v", id, got, want)
		}
	}
}

// TestCompletionParsesTheLineOnce: the host a completion asks is the one
// the line names, as for any command: of -p and a target's :port the first
// given wins, here -p, the port of a listener that counts the connections
// (and never answers). cobra parses a completed line's flags twice, which
// must not move the target before -p.
func TestCompletionParsesTheLineOnce(t *testing.T) {
	l, dialled := silentListener(t, true)
	t.Setenv("HOME", t.TempDir())
	port := strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
	var out, errb bytes.Buffer
	// Port 1 answers nothing here: a dial there is refused at once.
	code := newApp(&out, &errb, nil).execute([]string{"__complete", "-F", "none", "-p", port, "-H", "tester@127.0.0.1:1", "activate", ""})
	if code != 0 || strings.TrimSpace(out.String()) != ":4" || dialled.Load() != 1 {
		t.Errorf("exit %d, stdout %q, %d connections to -p %s; want :4 and one connection there", code, out.String(), dialled.Load(), port)
	}
}
