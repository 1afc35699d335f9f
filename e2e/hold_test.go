package e2e

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hoistdev/hoist/cmd/hoist/output"
	"github.com/hoistdev/hoist/e2e/sshd"
)

var tokenRE = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

// acquireHold takes a manual hold through c and returns its token.
func acquireHold(t *testing.T, c *cli, args ...string) string {
	t.Helper()
	r := c.run(append([]string{"lock", "acquire"}, args...)...)
	tok := strings.TrimSpace(r.stdout)
	if r.code != 0 || !tokenRE.MatchString(tok) {
		t.Fatalf("lock acquire: %s", r)
	}
	return tok
}

// lockStatus is hoist lock status --json through c.
func lockStatus(t *testing.T, c *cli) output.LockStatus {
	t.Helper()
	r := c.run("--json", "lock", "status")
	if r.code != 0 {
		t.Fatalf("lock status: %s", r)
	}
	return decodeOne[output.LockStatus](t, "lock status", r.stdout)
}

// runtimesIn lists the runtimes and stages in the store under root.
func runtimesIn(t *testing.T, root string) (runtimes, stages []string) {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(root, "runtimes"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		switch {
		case strings.HasPrefix(e.Name(), ".stage-"):
			stages = append(stages, e.Name())
		case !strings.HasPrefix(e.Name(), "."):
			runtimes = append(runtimes, e.Name())
		}
	}
	return runtimes, stages
}

// TestHoldDeployScript: a deploy script takes a manual hold, pushes the new
// runtime, runs a migration and activates, each with --token under that
// hold. Another client finds the store busy before, during and after each
// step, and gets in once the script releases the hold.
func TestHoldDeployScript(t *testing.T) {
	t.Parallel()
	h := sshd.Start(t, sshd.Options{})
	root := filepath.Join(h.Dir, "store")
	deploy, other := newCLI(t, h, root), newCLI(t, h, root)
	ran := filepath.Join(h.Dir, "other-ran")
	id1 := pushJSON(t, deploy, sourceTree(t, "1"), "--name", "app", "--activate").ID

	tok := acquireHold(t, deploy, "--lease", "10m", "-m", "deploy v2")
	// busy: the other client's plain run is refused at once, names the
	// hold, and its command does not run; the hold is still tok's.
	busy := func(when string) {
		t.Helper()
		r := other.run("run", "--wait", "0", "--", "touch", ran)
		if r.code != 75 || !strings.Contains(r.stderr, "store lock is busy") || !strings.Contains(r.stderr, `"deploy v2"`) {
			t.Fatalf("%s: the other client's run: want busy (75) naming the hold: %s", when, r)
		}
		if exists(ran) {
			t.Fatalf("%s: the other client's command ran", when)
		}
		if st := lockStatus(t, other); heldOf(st.Lock).Token != tok {
			t.Fatalf("%s: the lock is not the hold's any more: %s", when, js(st))
		}
	}
	busy("after acquire")
	if st := heldOf(lockStatus(t, other).Lock); st.HolderProcess != "none" || st.LeaseSeconds != 600 {
		t.Fatalf("status of the hold: want a manual hold with a 10m lease: %s", js(st))
	}

	// The push uploads and promotes under the hold, without waiting for it.
	p := pushJSON(t, deploy, sourceTree(t, "2"), "--name", "app", "--wait", "0", "--token", tok)
	id2 := p.ID
	if !p.Promoted || !exists(filepath.Join(root, "runtimes", id2)) {
		t.Fatalf("push under the hold: %s", js(p))
	}
	if got, _ := os.Readlink(filepath.Join(root, "current")); got != "runtimes/"+id1 {
		t.Fatalf("a push without --activate moved current to %s", got)
	}
	busy("after the push")

	// The migration runs under the hold; the other client is busy while it
	// runs too.
	started, gate, journal := filepath.Join(h.Dir, "mig-started"), filepath.Join(h.Dir, "mig-gate"), filepath.Join(h.Dir, "journal")
	mig := deploy.start("run", "--wait", "0", "--token", tok, "--", "sh", "-c",
		"touch "+started+"; until [ -e "+gate+" ]; do sleep 0.05; done; echo migrated >>"+journal+"; echo done")
	waitFor(t, 30*time.Second, "migration starts", func() bool {
		select {
		case <-mig.done:
			t.Fatalf("the migration exited (%d) before it started: %s", mig.code, mig.stderr())
		default:
		}
		return exists(started)
	})
	busy("during the migration")
	if err := os.WriteFile(gate, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if code := mig.wait(t, 30*time.Second); code != 0 || strings.TrimSpace(mig.stdout()) != "done" {
		t.Fatalf("migration: exit %d\nstdout: %s\nstderr: %s", code, mig.stdout(), mig.stderr())
	}
	if data, _ := os.ReadFile(journal); string(data) != "migrated\n" {
		t.Fatalf("the migration ran %q, want once", data)
	}
	busy("after the migration")

	if r := deploy.run("activate", id2, "--wait", "0", "--token", tok); r.code != 0 || !strings.Contains(r.stdout, "current is "+id2) {
		t.Fatalf("activate under the hold: %s", r)
	}
	if got, _ := os.Readlink(filepath.Join(root, "current")); got != "runtimes/"+id2 {
		t.Fatalf("current -> %s after activate, want runtimes/%s", got, id2)
	}
	busy("after activate")
	if rec := lockRecord(root); filepath.Base(filepath.Dir(rec)) != tok {
		t.Fatalf("the lock record is %q, want the hold's %s", rec, tok)
	}

	if r := deploy.run("lock", "release", "--token", tok); r.code != 0 {
		t.Fatalf("release: %s", r)
	}
	if r := other.run("run", "--wait", "0", "--", "touch", ran); r.code != 0 || !exists(ran) {
		t.Fatalf("the other client after the release: %s", r)
	}
	if exists(lockPath(root)) {
		t.Fatal("the lock is held after the other client's run")
	}
}

// TestHoldStaleTokenDoesNotPromote: a push with --token that does not hold
// the lock, a released one or another's, is refused in its first host
// command, before anything is made or uploaded: it says that this is not
// the token of this store's lock (naming the holder), never promotes or
// activates, leaves no stage, and leaves the actual holder alone.
func TestHoldStaleTokenDoesNotPromote(t *testing.T) {
	t.Parallel()
	h := sshd.Start(t, sshd.Options{})
	root := filepath.Join(h.Dir, "store")
	c, other := newCLI(t, h, root), newCLI(t, h, root)
	id1 := pushJSON(t, c, sourceTree(t, "1"), "--name", "app", "--activate").ID
	v2 := sourceTree(t, "2")

	stale := acquireHold(t, c, "-m", "earlier deploy")
	if r := c.run("lock", "release", "--token", stale); r.code != 0 {
		t.Fatalf("release: %s", r)
	}
	refused := func(what, token, holder string) {
		t.Helper()
		r := c.run("push", v2, "--name", "app", "--activate", "--wait", "0", "--token", token)
		if r.code != 1 || !strings.Contains(r.stderr, token+" is not the token of this store's lock") ||
			!strings.Contains(r.stderr, "nothing was done") || strings.Contains(r.stdout, "promoted") {
			t.Fatalf("%s: want exit 1, not the token of this store's lock, nothing done: %s", what, r)
		}
		if holder != "" && !strings.Contains(r.stderr, "held by") {
			t.Fatalf("%s: the error does not name the holder: %s", what, r)
		}
		j := c.run("--json", "push", v2, "--name", "app", "--wait", "0", "--token", token)
		if j.code != 1 {
			t.Fatalf("%s: --json: %s", what, j)
		}
		if obj := decodeOne[output.Push](t, what, j.stdout); obj.Pushed == nil || obj.UploadedBytes != 0 || obj.Execs != 1 {
			t.Fatalf("%s: --json: %s; want nothing uploaded in one host command", what, j.stdout)
		}
		runtimes, stages := runtimesIn(t, root)
		if strings.Join(runtimes, " ") != id1 || len(stages) != 0 {
			t.Fatalf("%s: the store holds runtimes %v and stages %v, want only %s", what, runtimes, stages, id1)
		}
		if got, _ := os.Readlink(filepath.Join(root, "current")); got != "runtimes/"+id1 {
			t.Fatalf("%s: current -> %s", what, got)
		}
		if holder == "" {
			if exists(lockPath(root)) {
				t.Fatalf("%s: the push left a lock", what)
			}
		} else if st := lockStatus(t, other); heldOf(st.Lock).Token != holder {
			t.Fatalf("%s: the holder's lock was disturbed: %s", what, js(st))
		}
	}
	refused("released token, free store", stale, "")

	held := acquireHold(t, other, "-m", "someone else")
	refused("released token, store held by another", stale, held)
	refused("a token never issued", "0f0e0d0c-0b0a-4908-8706-050403020100", held)
	// So do the other commands that take --token.
	for _, args := range [][]string{{"run", "--wait", "0", "--token", stale, "--", "true"}, {"activate", id1, "--wait", "0", "--token", stale}} {
		if r := c.run(args...); r.code != 1 || !strings.Contains(r.stderr, stale+" is not the token of this store's lock, which is held by") {
			t.Fatalf("%s under a stale token: %s", args[0], r)
		}
	}

	// An invalid token is a usage error and sends nothing.
	if r := c.run("push", v2, "--name", "app", "--token", "not-a-token"); r.code != 2 || !strings.Contains(r.stderr, "is not a lock token") {
		t.Fatalf("an invalid token: %s", r)
	}
	if _, stages := runtimesIn(t, root); len(stages) != 0 {
		t.Fatalf("an invalid token left stages %v", stages)
	}

	// The artifact itself was fine: under the holder's own token it lands.
	p := pushJSON(t, c, v2, "--name", "app", "--activate", "--token", held)
	if !p.Promoted {
		t.Fatalf("push under the holder's token: %s", js(p))
	}
	if got, _ := os.Readlink(filepath.Join(root, "current")); got != "runtimes/"+p.ID {
		t.Fatalf("current -> %s after the push under the hold", got)
	}
	if st := lockStatus(t, other); heldOf(st.Lock).Token != held {
		t.Fatalf("the hold is gone after a push under it: %s", js(st))
	}
}

// TestUnreadTokenIsNotKept: a manual hold whose token could not be handed
// on (stdout a pipe nobody reads: hoist lock acquire | true) is released by
// the host, not kept under a token nobody knows. The token is printed
// before the host is told the hold is taken.
func TestUnreadTokenIsNotKept(t *testing.T) {
	t.Parallel()
	h := sshd.Start(t, sshd.Options{})
	root := filepath.Join(h.Dir, "store")
	c := newCLI(t, h, root)
	cmd := c.command("lock", "acquire")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	out.Close() // the reader is gone before anything is written
	// Killed by SIGPIPE as it printed the token: the host had taken the
	// lock, so the test below sees a release, not an acquire that never
	// happened.
	err = cmd.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGPIPE {
		t.Fatalf("lock acquire with nowhere to print its token: want it ended by SIGPIPE, got %v", err)
	}
	waitFor(t, 10*time.Second, "the host releases the unconfirmed hold", func() bool {
		r := c.run("--json", "lock", "status")
		return r.code == 0 && !decodeOne[output.LockStatus](t, "lock status", r.stdout).Locked
	})
}
