package e2e

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hoistdev/hoist/cmd/hoist/output"
)

// The sandbox mode: a short scenario against the compose fleet of
// docker-compose.yml (make sandbox), three containers reached only through
// the ssh_config that make sandbox generated (-F). make sandbox-test starts
// the fleet, runs this with HOIST_SANDBOX=1 and stops it; make test does that
// as root (skipping it, with the reason, only in a container where podman
// cannot run containers).

// sandboxBoxes are the fleet's boxes, with what each one is.
var sandboxBoxes = []struct {
	name, shell string // deploy's login shell
	busybox     bool   // /bin/sh is busybox ash, its applets first on PATH
}{
	{"box1", "/bin/bash", false},
	{"box2", "/bin/sh", true},
	{"box3", "/usr/bin/fish", false},
}

// sandboxFleet returns the generated ssh_config, or skips with the reason:
// with HOIST_SANDBOX=1 a missing fleet fails the test; unset, the test runs
// only when the configuration exists and the boxes answer; HOIST_SANDBOX=0
// always skips.
func sandboxFleet(t *testing.T) string {
	t.Helper()
	cfg, err := filepath.Abs(filepath.Join("sandbox", "state", "ssh_config"))
	if err != nil {
		t.Fatal(err)
	}
	mode := os.Getenv("HOIST_SANDBOX")
	if mode == "0" {
		t.Skip("HOIST_SANDBOX=0: the sandbox fleet test is off")
	}
	if _, err := os.Stat(cfg); err != nil {
		if mode == "1" {
			t.Fatalf("HOIST_SANDBOX=1 but there is no fleet: %v; run make sandbox (or make sandbox-test)", err)
		}
		t.Skip("no sandbox fleet (e2e/sandbox/state/ssh_config is missing): make sandbox-test runs this test against one, or make sandbox then HOIST_SANDBOX=1 go test -run Sandbox ./e2e/")
	}
	if _, err := exec.LookPath("ssh"); err != nil {
		t.Fatalf("hoist -F resolves the configuration with OpenSSH's ssh: %v", err)
	}
	for _, b := range sandboxBoxes {
		addr := sshGAddr(t, cfg, b.name)
		c, err := net.DialTimeout("tcp", addr, 2*time.Second)
		if err != nil {
			if mode == "1" {
				t.Fatalf("HOIST_SANDBOX=1 but %s (%s) does not answer: %v; run make sandbox", b.name, addr, err)
			}
			t.Skipf("the sandbox fleet is down (%s, %s: %v): make sandbox starts it, HOIST_SANDBOX=1 makes this a failure", b.name, addr, err)
		}
		c.Close()
	}
	return cfg
}

// sshGAddr is host:port of alias as OpenSSH resolves it with cfg.
func sshGAddr(t *testing.T, cfg, alias string) string {
	t.Helper()
	out, err := exec.Command("ssh", "-G", "-F", cfg, alias).Output()
	if err != nil {
		t.Fatalf("ssh -G -F %s %s: %v", cfg, alias, err)
	}
	var host, port string
	for _, l := range strings.Split(string(out), "\n") {
		k, v, _ := strings.Cut(l, " ")
		switch k {
		case "hostname":
			host = v
		case "port":
			port = v
		}
	}
	return net.JoinHostPort(host, port)
}

// sandboxSSH runs a command on a box with OpenSSH and the same configuration,
// for what hoist must not do itself (cleaning up after the test).
func sandboxSSH(cfg, box, command string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "ssh", "-F", cfg, "-o", "BatchMode=yes", box, command)
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("ssh %s %q: %v: %s", box, command, err, strings.TrimSpace(errb.String()))
	}
	return nil
}

// byHost parses --json output, one object per host, into T (a type of
// cmd/hoist/output), and fails unless every box succeeded.
func byHost[T any](t *testing.T, what string, r run) map[string]T {
	t.Helper()
	if r.code != 0 {
		t.Fatalf("%s: %s", what, r)
	}
	objs := map[string]T{}
	for _, o := range decodeLines[T](t, what, r.stdout) {
		h := head(&o)
		if !h.OK {
			t.Fatalf("%s: %s failed: %s", what, h.Host, js(o))
		}
		objs[h.Host] = o
	}
	for _, b := range sandboxBoxes {
		if _, ok := objs[b.name]; !ok {
			t.Fatalf("%s: no answer from %s: %s", what, b.name, r)
		}
	}
	return objs
}

// helloTree is a runtime whose bin/hello says its version and the box it
// runs on.
func helloTree(t *testing.T, version string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "hello")
	if err := os.MkdirAll(filepath.Join(dir, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	script := fmt.Sprintf("#!/bin/sh\necho \"hello %s from $(hostname)\"\n", version)
	if err := os.WriteFile(filepath.Join(dir, "bin", "hello"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestSandboxFleet: push --activate, run, list, lock status and gc on the
// three boxes at once, through -F and the aliases alone.
func TestSandboxFleet(t *testing.T) {
	cfg := sandboxFleet(t)
	t.Parallel()

	// A store of this run's own, so that a fleet someone uses by hand keeps
	// its ~/.hoist, and runs of this test never meet.
	var rnd [6]byte
	if _, err := rand.Read(rnd[:]); err != nil {
		t.Fatal(err)
	}
	root := "/tmp/hoist-sandbox-test-" + hex.EncodeToString(rnd[:])
	t.Cleanup(func() {
		for _, b := range sandboxBoxes {
			if err := sandboxSSH(cfg, b.name, "rm -rf "+root); err != nil {
				t.Errorf("cleaning up: %v", err)
			}
		}
	})
	c := &cli{t: t, home: t.TempDir(), flags: []string{"-F", cfg, "--root", root}}
	fleet := "box1,box2,box3"

	// Each box is what the README says: a non-root login with its own
	// login shell, and busybox's userland on box2.
	for _, b := range sandboxBoxes {
		r := c.run("-H", b.name, "run", "--", "sh", "-c",
			`id -un; getent passwd "$(id -un)" | cut -d: -f7; basename "$(readlink -f /bin/sh)"; command -v stat`)
		got := strings.Fields(r.stdout)
		if r.code != 0 || len(got) != 4 {
			t.Fatalf("%s: what the box is: %s", b.name, r)
		}
		if got[0] != "deploy" || got[1] != b.shell {
			t.Errorf("%s: login %s with shell %s, want deploy with %s", b.name, got[0], got[1], b.shell)
		}
		if isBusybox := got[2] == "busybox" && strings.HasPrefix(got[3], "/opt/busybox/"); isBusybox != b.busybox {
			t.Errorf("%s: /bin/sh is %s and stat is %s; busybox userland wanted: %v", b.name, got[2], got[3], b.busybox)
		}
		t.Logf("%s: deploy, login shell %s, /bin/sh is %s, stat is %s", b.name, got[1], got[2], got[3])
	}

	// push --activate to the fleet at once: one runtime, the same id
	// everywhere, active.
	v1 := byHost[output.Push](t, "push v1", c.run("-H", fleet, "--json", "push", helloTree(t, "v1"), "--name", "hello", "--activate"))
	id1 := v1["box1"].ID
	for h, o := range v1 {
		if o.ID != id1 || o.Pushed == nil || !o.Activated || !o.Promoted {
			t.Errorf("push v1 on %s: %s", h, js(o))
		}
	}
	hello := filepath.Join(root, "current", "bin", "hello")
	r := c.run("-H", fleet, "run", "--", hello)
	for _, b := range sandboxBoxes {
		if want := b.name + ": hello v1 from " + b.name + "\n"; r.code != 0 || !strings.Contains(r.stdout, want) {
			t.Fatalf("run v1: %q missing: %s", want, r)
		}
	}

	// A second version replaces it; the first becomes previous.
	v2 := byHost[output.Push](t, "push v2", c.run("-H", fleet, "--json", "push", helloTree(t, "v2"), "--name", "hello", "--activate"))
	id2 := v2["box1"].ID
	for h, o := range v2 {
		if o.ID != id2 || id2 == id1 || o.Pushed == nil || !o.Activated || o.Previous != id1 {
			t.Errorf("push v2 on %s: %s (v1 was %s)", h, js(o), id1)
		}
	}
	r = c.run("-H", fleet, "--json", "run", "--", hello)
	byHost[output.Run](t, "run v2", r)
	for _, b := range sandboxBoxes {
		if want := "hello v2 from " + b.name; !strings.Contains(r.stderr, want) {
			t.Fatalf("run v2: %q missing: %s", want, r)
		}
	}

	// A third, not activated, is what gc --keep 0 collects: current and
	// previous stay.
	v3 := byHost[output.Push](t, "push v3", c.run("-H", fleet, "--json", "push", helloTree(t, "v3"), "--name", "hello"))
	id3 := v3["box1"].ID
	gc := byHost[output.GC](t, "gc", c.run("-H", fleet, "--json", "gc", "--keep", "0"))
	for h, o := range gc {
		if o.Skipped || !slices.Equal(o.Deleted, []string{id3}) {
			t.Errorf("gc on %s deleted %v, want only %s: %s", h, o.Deleted, id3, js(o))
		}
	}

	list := byHost[output.List](t, "list", c.run("-H", fleet, "--json", "list"))
	for h, o := range list {
		rows := o.Runtimes
		if len(rows) != 2 {
			t.Fatalf("list on %s: %d runtimes, want v2 and v1: %s", h, len(rows), js(o))
		}
		// By id: two runtimes promoted within one second may list in
		// either order.
		state := map[string]string{}
		for _, row := range rows {
			state[row.ID] = fmt.Sprintf("active=%v previous=%v", row.Active, row.Previous)
		}
		if state[id2] != "active=true previous=false" || state[id1] != "active=false previous=true" {
			t.Errorf("list on %s: want %s active and %s previous: %v", h, id2, id1, rows)
		}
	}

	status := byHost[output.LockStatus](t, "lock status", c.run("-H", fleet, "--json", "lock", "status"))
	for h, o := range status {
		if !o.Store || o.Locked || o.Stale {
			t.Errorf("lock status on %s: want a free lock on an existing store: %s", h, js(o))
		}
	}
	if r := c.run("-H", fleet, "lock", "status"); r.code != 0 || strings.Count(r.stdout, ": free") != 3 {
		t.Errorf("lock status, as a person reads it: %s", r)
	}
}
