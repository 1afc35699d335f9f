package main

import (
	"bytes"
	"net"
	"strings"
	"testing"
	"time"
)

// TestCompletionGivesUp: completing a runtime on a host that accepts the
// connection and never answers offers nothing, once completeTimeout has
// passed, and says nothing on stdout but the directive.
func TestCompletionGivesUp(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			defer c.Close() // accepts, never speaks
		}
	}()
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
