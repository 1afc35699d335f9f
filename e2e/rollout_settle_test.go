package e2e

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/hoistdev/hoist/cmd/hoist/output"
)

// The local rule's checks (docs/rollout.md, "The local rule"): a record
// left unfinished mid-batch is settled by the next command that reaches
// its host (or rollout resume), which takes the host back and then runs
// the record's exec checks again on the runtime it went back to.

// settleCheck fails where the store's root has fail-<version>; else it
// passes where it has pass, and otherwise hangs (the host is "checking").
const settleCheck = `test ! -e "../../fail-$(cat VERSION)" && { test -e ../../pass || { touch "../../checking-$(cat VERSION)"; sleep 60; }; }`

// interruptedMidCheck rolls v2 out to every host in one batch and kills
// each host's command (its shell, the lock's holder) while v2's check
// hangs, then the client: every host is left on v2, unchecked, its record
// unfinished. extra are more check flags. It returns the rollout's id and
// v2's id.
func (f *rolloutFleet) interruptedMidCheck(t *testing.T, extra ...string) (rid, to string) {
	t.Helper()
	s := f.c.start(append([]string{"rollout", f.v2, "--name", "app", "--canary", "0", "--check", settleCheck,
		"--check-timeout", "90s", "--check-deadline", "3s", "--check-interval", "200ms", "--stable", "0s"}, extra...)...)
	for i, h := range f.hosts {
		waitFor(t, 60*time.Second, "host checking v2", func() bool {
			out, _ := h.SSH(t, "exec /bin/sh -c 'test -e "+strings.TrimPrefix(f.root, "~/")+"/checking-2 && echo yes'")
			return strings.TrimSpace(out) == "yes"
		})
		killHolder(t, f.on(i), fmt.Sprintf("host %d", i))
	}
	s.cmd.Process.Kill()
	s.wait(t, 30*time.Second)
	rid = rolloutID(t, run{stdout: s.stdout()})
	to = f.current(t, 0)
	for i := range f.hosts {
		if got := f.current(t, i); got == f.id1 || got != to {
			t.Fatalf("host %d is on %s: the test did not interrupt its sequence", i, got)
		}
	}
	return rid, to
}

// touch makes name at host i's store root.
func (f *rolloutFleet) touch(t *testing.T, i int, name string) {
	t.Helper()
	hostSh(t, f.hosts[i], "touch "+strings.TrimPrefix(f.root, "~/")+"/"+name)
}

// TestSettledRuntimeFailsItsChecks: a rollout in batches interrupted
// mid-check on three hosts, then v1's check made to fail on hosts 0 and
// 2. The next command on host 2 (an activate of v2) settles its record:
// back on v1, whose check fails after the settle: it says so, naming the
// rollout, v1 and the failed checks, exits 4 and switches nothing else
// (host 2 stays on v1, not on the v2 it was asked for). rollout resume
// then settles hosts 0 and 1: host 0 back on v1, which fails its checks
// after the settle: unhealthy, exit 4, and it stays on v1 (the resume
// does not go on to switch it again); host 1, whose v1 passes, says so.
// Every record is finished, and no lock is left; rollout status says
// hosts 0 and 2 unhealthy (their records keep what the checks said), host
// 1 reverted; the activate run again on host 2 goes on, settling nothing.
func TestSettledRuntimeFailsItsChecks(t *testing.T) {
	t.Parallel()
	f := newRolloutFleet(t, 3)
	rid, to := f.interruptedMidCheck(t)
	for i := range f.hosts {
		f.touch(t, i, "pass")
	}
	f.touch(t, 0, "fail-1")
	f.touch(t, 2, "fail-1")

	r := f.on(2).run("activate", to, "--check", "true", "--stable", "0s")
	if r.code != 4 || !strings.Contains(r.stderr, "rollout "+rid+" was settled here by the local rule, and "+f.id1+", which current names, failed its checks after the settle (") ||
		!strings.Contains(r.stderr, "nothing else was switched") {
		t.Fatalf("want the activate to stop after the settle, naming the rollout, v1 and its failed checks (exit 4): %s", r)
	}
	if got := f.current(t, 2); got != f.id1 {
		t.Fatalf("host 2 is on %s after a settle whose runtime failed its checks, want it left on v1", got)
	}

	r = f.c.run("rollout", "resume", rid)
	if r.code != 4 {
		t.Fatalf("want the resume to report host 0 unhealthy (exit 4): %s", r)
	}
	for i, want := range []string{"  unhealthy  " + f.id1 + " -> " + to, "  reverted  " + f.id1 + " -> " + to, "  reverted  " + f.id1 + " -> " + to} {
		if !strings.Contains(r.stdout, f.hosts[i].Target()+want) {
			t.Fatalf("host %d: want %q in the rows: %s", i, want, r)
		}
	}
	if !strings.Contains(r.stderr, "hoist: "+f.hosts[0].Target()+": rollout "+rid+" was settled here by the local rule, and "+f.id1+" failed its checks after the settle (") ||
		!strings.Contains(r.stderr, "it stays current and is not switched again") {
		t.Fatalf("want a line naming host 0, v1 and its failed checks after the settle: %s", r)
	}
	if !strings.Contains(r.stderr, "hoist: "+f.hosts[1].Target()+": rollout "+rid+" was settled here by the local rule: back on "+f.id1+", which passed its checks after the settle") {
		t.Fatalf("want host 1's settle said, its checks passed: %s", r)
	}
	if !strings.Contains(r.stderr, "not going on: "+f.hosts[0].Target()+" failed their checks after the settle") || strings.Contains(r.stdout, "  switched  ") {
		t.Fatalf("want the resume not to go on: %s", r)
	}
	f.settled(t, f.id1)
	// rollout status tells them apart from what each record keeps: hosts
	// 0 and 2 unhealthy (finished, their runtime failed its checks after
	// the settle), host 1 reverted.
	for i, st := range f.status(t, rid) {
		want, check := "unhealthy", "unhealthy"
		if i == 1 {
			want, check = "reverted", "healthy"
		}
		if st.State != want || len(st.Records) != 1 || st.Records[0].Parts["recheck"] != check || st.Records[0].Parts["done"] != "from" {
			t.Fatalf("host %d's record of %s: %+v, want it finished (%s, its checks after the settle %s)", i, rid, st, want, check)
		}
	}
	if r := f.c.run("rollout", "status", rid); r.code != 0 || !strings.Contains(r.stdout, f.hosts[0].Target()+"  unhealthy  rollout "+rid+"  current "+f.id1) ||
		!strings.Contains(r.stdout, f.hosts[1].Target()+"  reverted  rollout "+rid) || !strings.Contains(r.stdout, "recheck -> unhealthy, done -> from") {
		t.Fatalf("want rollout status to show hosts 0 and 2 unhealthy, host 1 reverted: %s", r)
	}
	// The activate again, with --json: the record is finished, so
	// nothing is settled (nor reported) any more, and it goes on.
	var act output.Activate
	r = f.on(2).run("--json", "activate", to, "--check", "true", "--stable", "0s")
	if err := json.Unmarshal([]byte(strings.TrimSpace(r.stdout)), &act); err != nil || r.code != 0 || act.Current != to || len(act.Settled) != 0 {
		t.Fatalf("want the activate run again to switch host 2, settling nothing: %v %s", err, r)
	}
}

// TestSettledRuntimePassesItsChecks: the same interruption, with a TCP
// check too, and v1's check passing: rollout resume settles each host
// back on v1, says its exec checks passed after the settle and its TCP
// check was not run by the local rule, then goes on as before (exit 0).
// Host 1's record is made one of an older hoist (its plan without the
// checks' timing, no checks file), and v1's check made to fail there: it
// is settled as before, its checks not re-run, and the resume says so.
func TestSettledRuntimePassesItsChecks(t *testing.T) {
	t.Parallel()
	f := newRolloutFleet(t, 2)
	rid, to := f.interruptedMidCheck(t, "--check-tcp", f.hosts[0].Addr)
	for i := range f.hosts {
		f.touch(t, i, "pass")
	}
	f.touch(t, 1, "fail-1")
	dir := strings.TrimPrefix(f.root, "~/") + "/runtimes/.rollouts/" + rid
	hostSh(t, f.hosts[1], "sed 's/ interval=[0-9]* timeout=[0-9]* stable=[0-9]* dialled=[0-9]*//' "+dir+"/plan >"+dir+"/p && mv "+dir+"/p "+dir+"/plan && rm -f "+dir+"/checks")
	if p := hostSh(t, f.hosts[0], "cat "+dir+"/plan "+dir+"/checks"); !strings.Contains(p, " interval=200 timeout=90000 stable=0 dialled=1") || !strings.Contains(p, settleCheck+"\n") {
		t.Fatalf("host 0's record does not keep its checks:\n%s", p)
	}

	r := f.c.run("rollout", "resume", rid, "--trust-plan")
	if r.code != 0 || strings.Count(r.stdout, "  switched  "+f.id1+" -> "+to) != 2 {
		t.Fatalf("want the resume to settle both hosts and go on (exit 0): %s", r)
	}
	if !strings.Contains(r.stderr, "hoist: "+f.hosts[0].Target()+": rollout "+rid+" was settled here by the local rule: back on "+f.id1+", which passed its checks after the settle; its 1 http/tcp checks not run by the local rule") {
		t.Fatalf("want host 0's settle said: its exec checks passed, its TCP check not run: %s", r)
	}
	if !strings.Contains(r.stderr, "hoist: "+f.hosts[1].Target()+": rollout "+rid+" was settled here by the local rule: back on "+f.id1+"; its checks were not re-run (the record, of an older hoist, does not keep them)") {
		t.Fatalf("want host 1's older record settled as before, its checks not re-run: %s", r)
	}
	f.settled(t, to)
}
