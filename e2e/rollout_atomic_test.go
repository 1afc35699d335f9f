package e2e

import (
	"encoding/json"
	"os"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hoistdev/hoist/cmd/hoist/output"
)

// hoist rollout --atomic and hoist rollout resume (docs/rollout.md, "All
// or nothing"), end to end over three real sshd hosts, each its own
// login and store: all switch and stay, or all go back; a client killed
// at any of its steps, then a resume, never leaves a mixed fleet, a host
// on a runtime that failed its checks, or a lock held.

// atomicArgs are a lean --atomic rollout of v2: the check fails where the
// store's root has fail-2 (failOn).
func (f *rolloutFleet) atomicArgs(extra ...string) []string {
	return append([]string{"rollout", f.v2, "--atomic", "--name", "app", "--check", `test ! -e "../../fail-$(cat VERSION)"`,
		"--check-deadline", "3s", "--stable", "0s", "--check-interval", "100ms", "--hold-lease", "4s"}, extra...)
}

// rolloutID reads the id a rollout prints first (text mode).
// killedAt runs hoist with args, its client killed (SIGKILL, the test
// hook HOIST_TEST_STEP) at step, and fails unless it was.
func (f *rolloutFleet) killedAt(t *testing.T, step string, args ...string) run {
	t.Helper()
	f.c.env = []string{"HOIST_TEST_STEP=" + step}
	r := f.c.run(args...)
	f.c.env = nil
	if r.code != -1 && r.code != 137 {
		t.Fatalf("want the client killed at %s: %s", step, r)
	}
	return r
}

func rolloutID(t *testing.T, r run) string {
	t.Helper()
	first, _, _ := strings.Cut(r.stdout, "\n")
	id, ok := strings.CutPrefix(first, "rollout ")
	id, _, _ = strings.Cut(id, ":")
	if !ok || len(id) != len("20261201T180233Z-3f9a2c") {
		t.Fatalf("no rollout id first: %s", r)
	}
	return id
}

// jsonRows reads a row per host from a --json rollout or resume.
func (f *rolloutFleet) jsonRows(t *testing.T, r run) []output.Rollout {
	t.Helper()
	var rows []output.Rollout
	for _, l := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		var o output.Rollout
		if err := json.Unmarshal([]byte(l), &o); err != nil {
			t.Fatalf("--json: %v\n%s", err, r)
		}
		rows = append(rows, o)
	}
	if len(rows) != len(f.hosts) {
		t.Fatalf("want a row per host:\n%s", r)
	}
	return rows
}

// settled fails unless every host is on want and no lock is held.
func (f *rolloutFleet) settled(t *testing.T, want string) {
	t.Helper()
	for i := range f.hosts {
		if got := f.current(t, i); got != want {
			t.Fatalf("host %d is on %s, want %s (every host on one runtime)", i, got, want)
		}
	}
	r := f.c.run("--json", "lock", "status")
	for _, l := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		var st output.LockStatus
		if err := json.Unmarshal([]byte(l), &st); err != nil || st.Locked {
			t.Fatalf("want every lock free: %v\n%s", err, r)
		}
	}
}

// TestRolloutAtomicAllSwitch: every host healthy: all switched, exit 0,
// over one connection per host.
func TestRolloutAtomicAllSwitch(t *testing.T) {
	t.Parallel()
	f := newRolloutFleet(t, 3)
	var before []int
	for _, h := range f.hosts {
		before = append(before, accepted(t, h))
	}
	r := f.c.run(append([]string{"--json"}, f.atomicArgs()...)...)
	rows := f.jsonRows(t, r)
	if r.code != 0 || states(rows) != "switched,switched,switched" {
		t.Fatalf("want every host switched: %s", r)
	}
	for i, h := range f.hosts {
		if n := accepted(t, h) - before[i]; n != 1 {
			t.Fatalf("host %d: %d logins, want one connection for the whole rollout", i, n)
		}
	}
	f.settled(t, rows[0].To)
	// The records: --atomic ones, the first host the decider.
	for i, h := range f.hosts {
		rec := strings.TrimPrefix(f.root, "~/") + "/runtimes/.rollouts/" + rows[0].Rollout
		out, _ := h.SSH(t, "exec /bin/sh -c 'cat "+rec+"/plan; readlink "+rec+"/decision "+rec+"/vote "+rec+"/outcome "+rec+"/done'")
		want := "decider=0 token=.*\ncommit\nto\n"
		if i > 0 {
			want = "decider=0 token=.*\nready\ncommit\nto\n"
		}
		if !strings.Contains(out, " mode=atomic ") || !regexp.MustCompile(want).MatchString(out) {
			t.Fatalf("host %d's record: %q", i, out)
		}
	}
}

// TestRolloutAtomicOneFails: one host's check fails: no host is left
// switched, that host's runtime is marked bad there, exit 3.
func TestRolloutAtomicOneFails(t *testing.T) {
	t.Parallel()
	f := newRolloutFleet(t, 6) // one host of each login shell
	f.failOn(t, 4)
	r := f.c.run(append([]string{"--json"}, f.atomicArgs()...)...)
	rows := f.jsonRows(t, r)
	if r.code != 3 || states(rows) != "reverted,reverted,reverted,reverted,failed,reverted" {
		t.Fatalf("want exit 3, the failing host failed and the others reverted: %s", r)
	}
	f.settled(t, f.id1)
	lr := f.c.run("--json", "list")
	for _, l := range strings.Split(strings.TrimSpace(lr.stdout), "\n") {
		var o output.List
		if err := json.Unmarshal([]byte(l), &o); err != nil {
			t.Fatalf("list --json: %v\n%s", err, lr)
		}
		bad := false
		for _, rt := range o.Runtimes {
			bad = bad || (rt.ID == rows[0].To && rt.Bad != nil)
		}
		if bad != (o.Host == f.hosts[4].Target()) {
			t.Fatalf("%s: marked bad %v; want the failing host alone: %s", o.Host, bad, lr)
		}
	}
	// Marked bad there, the runtime is refused on that host: nothing is
	// switched anywhere.
	if r := f.c.run(f.atomicArgs()...); r.code != 1 || !strings.Contains(r.stderr, "is marked bad here") ||
		!strings.Contains(r.stdout, f.hosts[0].Target()+"  unchanged") {
		t.Fatalf("want the bad runtime refused and no host switched: %s", r)
	}
	f.settled(t, f.id1)
	if r := f.c.run(f.atomicArgs("--canary", "1")...); r.code != 2 {
		t.Fatalf("--atomic with --canary: want a usage error: %s", r)
	}
}

// TestRolloutAtomicInDoubt: the client is killed after the first host
// but the decider voted: that host is in doubt, on the new runtime; an
// activate there refuses, naming the rollout and the resume, until a
// resume (without the id: the latest) reads the decider, which aborted,
// and sends it back.
func TestRolloutAtomicInDoubt(t *testing.T) {
	t.Parallel()
	f := newRolloutFleet(t, 3)
	rid := rolloutID(t, f.killedAt(t, "rollout.vote", f.atomicArgs()...))
	one := &cli{t: t, home: f.c.home, flags: append([]string{"-H", f.hosts[1].Target()}, f.c.flags[2:]...)}
	var a run
	for range 100 {
		if a = one.run("activate", f.id1); a.code != 75 {
			break
		}
	}
	if a.code != 1 || !strings.Contains(a.stderr, "rollout "+rid+" is in doubt here") ||
		!strings.Contains(a.stderr, "hoist rollout resume "+rid) || !strings.Contains(a.stderr, "the decider "+f.hosts[0].Target()) {
		t.Fatalf("want the in-doubt refusal: %s", a)
	}
	if got := f.current(t, 1); got == f.id1 {
		t.Fatalf("the host in doubt was switched back by the refused activate")
	}
	// Without the decider among the targets, the host stays in doubt.
	two := &cli{t: t, home: f.c.home, flags: append([]string{"-H", f.hosts[1].Target() + "," + f.hosts[2].Target()}, f.c.flags[2:]...)}
	if r := two.run("rollout", "resume", rid); r.code != 4 || !strings.Contains(r.stderr, "the decider "+f.hosts[0].Target()+" is not among the targets") ||
		!strings.Contains(r.stdout, f.hosts[1].Target()+"  in-doubt") {
		t.Fatalf("a resume without the decider: want host 1 still in doubt, exit 4: %s", r)
	}
	res := f.c.run("--json", "rollout", "resume")
	rows := f.jsonRows(t, res)
	if res.code != 3 || rows[0].Rollout != rid || rows[1].State != "reverted" {
		t.Fatalf("want the resume to abort and send the host in doubt back: %s", res)
	}
	f.settled(t, f.id1)
	if a := one.run("activate", f.id1); a.code != 0 {
		t.Fatalf("activate after the resume: %s", a)
	}
}

// TestRolloutAtomicKilled: the client is killed (SIGKILL) at each of its
// steps, then hoist rollout resume ID: the fleet ends on one runtime,
// never one that failed its checks, with no lock held. With fail, a
// host's check fails (the abort's steps).
func TestRolloutAtomicKilled(t *testing.T) {
	for _, tc := range []struct {
		step string
		fail bool
	}{
		{"rollout.stage", false}, {"rollout.prepare", false}, {"rollout.switch", false}, {"rollout.check", false},
		{"rollout.vote", false}, {"rollout.voted", false}, {"rollout.decide", false}, {"rollout.decided", false},
		{"rollout.commit", false}, {"rollout.abort", true}, {"rollout.revert", true},
		{"resumer.start", false}, {"resumer.decide", false}, {"resumer.outcome", false},
	} {
		t.Run(tc.step, func(t *testing.T) {
			t.Parallel()
			f := newRolloutFleet(t, 3)
			if tc.fail {
				f.failOn(t, 2)
			}
			step := tc.step
			if strings.HasPrefix(step, "resumer.") {
				// Killed in the vote, then the first resume killed at
				// step: a second resume finishes it.
				step = "rollout.vote"
			}
			rid := rolloutID(t, f.killedAt(t, step, f.atomicArgs()...))
			if step != tc.step {
				f.killedAt(t, tc.step, "rollout", "resume", rid)
			}
			res := f.c.run("--json", "rollout", "resume", rid)
			rows := f.jsonRows(t, res)
			to := f.id1
			if res.code == 0 && rows[0].State == "switched" {
				to = rows[0].To
			}
			if res.code != 0 && res.code != 3 {
				t.Fatalf("want the resume to finish the rollout: %s", res)
			}
			if tc.fail && to != f.id1 {
				t.Fatalf("a host failed its checks, and the fleet is on the new runtime: %s", res)
			}
			for _, row := range rows {
				if row.State == "in-doubt" || row.State == "failed" {
					t.Fatalf("after the resume: %s", res)
				}
			}
			f.settled(t, to)
		})
	}
}

// TestRolloutAtomicFrozenClient: the client freezes (SIGSTOP) after every
// host switched and passed its checks, its connections open: each host
// hears nothing for a hold lease, takes the client for gone, goes back
// and releases its lock, with the client still frozen. Woken, the client
// finds every host gone back and says so: exit 3.
func TestRolloutAtomicFrozenClient(t *testing.T) {
	t.Parallel()
	f := newRolloutFleet(t, 3)
	f.c.env = []string{"HOIST_TEST_STEP=rollout.check:stop"}
	s := f.c.start(f.atomicArgs()...)
	f.c.env = nil
	waitFor(t, 30*time.Second, "the client stops at rollout.check", func() bool {
		b, _ := os.ReadFile("/proc/" + strconv.Itoa(s.cmd.Process.Pid) + "/stat")
		_, st, _ := strings.Cut(string(b), ") ")
		return strings.HasPrefix(st, "T")
	})
	defer func() {
		if t.Failed() {
			t.Logf("the client's output: %s\n%s", s.stdout(), s.stderr())
		}
	}()
	waitFor(t, 60*time.Second, "every host goes back by itself", func() bool {
		for i := range f.hosts {
			if f.current(t, i) != f.id1 {
				return false
			}
		}
		r := f.c.run("--json", "lock", "status")
		return r.code == 0 && !strings.Contains(r.stdout, `"locked":true`)
	})
	if err := s.cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	if code := s.wait(t, 60*time.Second); code != 3 {
		t.Fatalf("want exit 3 once woken, every host back: %d\n%s\n%s", code, s.stdout(), s.stderr())
	}
	if !strings.Contains(s.stdout(), f.hosts[1].Target()+"  reverted") {
		t.Fatalf("want the hosts reverted: %s", s.stdout())
	}
	f.settled(t, f.id1)
}

// TestRolloutAtomicDeciderGone: every host voted ready, then the
// decider's host command is killed (as a reboot would) before it is asked
// to commit: the client cannot learn a decision, says the others are in
// doubt and exits 4; a resume finds the decider undecided, aborts, and
// every host goes back.
func TestRolloutAtomicDeciderGone(t *testing.T) {
	t.Parallel()
	f := newRolloutFleet(t, 3)
	f.c.env = []string{"HOIST_TEST_STEP=rollout.decide:stop"}
	s := f.c.start(f.atomicArgs()...)
	f.c.env = nil
	waitFor(t, 30*time.Second, "the client stops at rollout.decide", func() bool {
		b, _ := os.ReadFile("/proc/" + strconv.Itoa(s.cmd.Process.Pid) + "/stat")
		_, st, _ := strings.Cut(string(b), ") ")
		return strings.HasPrefix(st, "T")
	})
	decider := &cli{t: t, home: f.c.home, flags: append([]string{"-H", f.hosts[0].Target()}, f.c.flags[2:]...)}
	killHolder(t, decider, "the decider")
	waitFor(t, 30*time.Second, "the decider's lock is released", func() bool {
		r := decider.run("--json", "lock", "status")
		return r.code == 0 && strings.Contains(r.stdout, `"locked":false`)
	})
	if err := s.cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	if code := s.wait(t, 60*time.Second); code != 4 || !strings.Contains(s.stderr(), "the other hosts are in doubt; run hoist rollout resume") ||
		!strings.Contains(s.stdout(), f.hosts[1].Target()+"  in-doubt") || !strings.Contains(s.stdout(), f.hosts[2].Target()+"  in-doubt") {
		t.Fatalf("want exit 4, the others in doubt: %d\n%s\n%s", code, s.stdout(), s.stderr())
	}
	for i := range f.hosts {
		if f.current(t, i) == f.id1 {
			t.Fatalf("host %d went back before the decision was read", i)
		}
	}
	res := f.c.run("rollout", "resume", rolloutID(t, run{stdout: s.stdout()}))
	if res.code != 3 || !strings.Contains(res.stderr, "says abort") {
		t.Fatalf("want the resume to abort the undecided rollout: %s", res)
	}
	f.settled(t, f.id1)
}
