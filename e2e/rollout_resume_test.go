package e2e

import (
	"fmt"
	"strings"
	"testing"
)

// hoist rollout resume of a rollout in batches (docs/rollout.md, "Resume
// of a rollout in batches"), over real sshd hosts: the records keep the
// rollout's plan, and the resume goes on with it.

// batchArgs roll v2 out to four hosts in two batches of two, no canary:
// [0 1] then [2 3].
func (f *rolloutFleet) batchArgs() []string {
	return []string{"rollout", f.v2, "--name", "app", "--canary", "0", "--batch", "2", "--check", `test ! -e "../../fail-$(cat VERSION)"`,
		"--check-deadline", "4s", "--stable", "0s", "--check-interval", "200ms"}
}

// killedBetweenBatches runs batchArgs with the client killed (SIGKILL)
// once the first batch is done: hosts 0 and 1 are on v2, 2 and 3 on v1.
// It returns the rollout's id.
func (f *rolloutFleet) killedBetweenBatches(t *testing.T) string {
	t.Helper()
	rid := rolloutID(t, f.killedAt(t, "rollout.batch", f.batchArgs()...))
	for i, want := range []bool{true, true, false, false} {
		if got := f.current(t, i); (got != f.id1) != want {
			t.Fatalf("host %d is on %s after the first batch", i, got)
		}
	}
	f.id2 = f.current(t, 0)
	return rid
}

// records is host i's records of the store, each file's name, mode, time
// and contents, each link's value, and what current names: what a host
// that takes no part keeps as it is.
func (f *rolloutFleet) records(t *testing.T, i int) string {
	t.Helper()
	dir := strings.TrimPrefix(f.root, "~/")
	return hostSh(t, f.hosts[i], "cd "+dir+" && readlink current; find runtimes/.rollouts -exec ls -ld --time-style=full-iso {} + 2>/dev/null | sort -k 9; cat runtimes/.rollouts/*/plan 2>/dev/null; true")
}

// witness is host i's witness of rollout rid's plan, "" when it has none.
func (f *rolloutFleet) witness(t *testing.T, i int, rid string) string {
	t.Helper()
	return hostSh(t, f.hosts[i], "cat "+f.witnessPath(rid)+" 2>/dev/null; true")
}

// witnessPath is where each host keeps the witness of rollout rid's plan,
// from the login's home.
func (f *rolloutFleet) witnessPath(rid string) string {
	return strings.TrimPrefix(f.root, "~/") + "/runtimes/.rollouts/.plan-" + rid
}

// alterWitness makes host i's witness of rollout rid's plan name another
// check (one that would touch ../../owned), and returns every host's
// records as they are then.
func (f *rolloutFleet) alterWitness(t *testing.T, i int, rid string) (before []string) {
	t.Helper()
	w := f.witnessPath(rid)
	hostSh(t, f.hosts[i], "sed 's|--check%3Dtest|--check%3Dtouch%20../../owned%3Btest|' "+w+" >"+w+".x && cat "+w+".x >"+w+" && rm "+w+".x")
	if !strings.Contains(f.witness(t, i, rid), "owned") {
		t.Fatalf("the witness was not altered: %s", f.witness(t, i, rid))
	}
	for h := range f.hosts {
		before = append(before, f.records(t, h))
	}
	return before
}

// TestRolloutResumeGoesOn: the client killed between two batches; every
// host wrote a witness of the plan as it staged, so rollout resume ID
// goes on by itself: it reads the plan every host that has a record
// keeps, says the options it goes on with, and rolls v2 out, under a new
// id (the first line), to the hosts not done (which keep no record, but
// a witness that agrees), with the plan's options: every host ends on
// v2, healthy; the hosts done take no part (their records and current as
// they were), and no lock is left.
func TestRolloutResumeGoesOn(t *testing.T) {
	t.Parallel()
	f := newRolloutFleet(t, 4)
	rid := f.killedBetweenBatches(t)
	before := []string{f.records(t, 0), f.records(t, 1)}
	if !strings.Contains(before[0], " opts=--canary%3D0,--batch%3D2,") || !strings.Contains(before[0], " hosts="+f.hosts[0].Target()+",") {
		t.Fatalf("host 0's record does not keep the plan:\n%s", before[0])
	}
	plan := before[0][strings.Index(before[0], " hosts="):]
	plan = plan[:strings.IndexByte(plan, '\n')+1]
	for i := range f.hosts {
		if w := f.witness(t, i, rid); w != "hoist-witness/1 id="+rid+" to="+f.id2+plan {
			t.Fatalf("host %d's witness of the plan: %q, want the plan its record keeps (%q)", i, w, plan)
		}
	}
	r := f.c.run("rollout", "resume", rid)
	if r.code != 0 {
		t.Fatalf("want the resume to switch the hosts not done, which vouched for the plan by their witnesses: %s", r)
	}
	opts := "with its options: --canary=0 --batch=2 --wait=0s --max-fail=0 --on-fail=stop '--check=test ! -e \"../../fail-$(cat VERSION)\"' --check-interval=200ms --check-timeout=5s --check-deadline=4s --stable=0s"
	if !strings.Contains(r.stderr, "rollout "+rid+": going on with the hosts not on "+f.id2) || !strings.Contains(r.stderr, opts) {
		t.Fatalf("want the options the resume goes on with: %s", r)
	}
	nid := rolloutID(t, r)
	if nid == rid || !strings.HasPrefix(r.stdout, "rollout "+nid+": "+f.id2+" to 4 hosts\n") {
		t.Fatalf("want a new rollout's id first: %s", r)
	}
	for i, h := range f.hosts {
		want := h.Target() + "  unchanged  " + f.id2 + " -> " + f.id2 + "\n"
		if i >= 2 {
			want = h.Target() + "  switched  " + f.id1 + " -> " + f.id2 + "  healthy after "
		}
		if !strings.Contains(r.stdout, want) {
			t.Fatalf("want hosts 2 and 3 switched, 0 and 1 taking no part: %q not in %s", want, r)
		}
	}
	for i := range 2 {
		if after := f.records(t, i); after != before[i] {
			t.Fatalf("host %d took part:\nbefore:\n%s\nafter:\n%s", i, before[i], after)
		}
	}
	f.settled(t, f.id2)
	for i, st := range f.status(t, nid) {
		want := "healthy"
		if i < 2 {
			want = "no-record"
		}
		if st.State != want {
			t.Fatalf("host %d in rollout %s: %+v, want %s", i, nid, st, want)
		}
	}
	for i, st := range f.status(t, rid) {
		want := "healthy"
		if i >= 2 {
			want = "no-record"
		}
		if st.State != want {
			t.Fatalf("host %d in rollout %s: %+v, want %s", i, rid, st, want)
		}
	}
	// The new rollout's records keep the same plan, and its witnesses
	// are on the hosts it switched alone: resumed again, it has nothing
	// left to do.
	for i := range f.hosts {
		if w := f.witness(t, i, nid); (w != "") != (i >= 2) {
			t.Fatalf("host %d's witness of %s: %q", i, nid, w)
		}
	}
	if a := f.records(t, 2); !strings.Contains(a, " hosts="+f.hosts[0].Target()+",") || !strings.Contains(a, " opts=--canary%3D0,--batch%3D2,") {
		t.Fatalf("host 2's record of %s does not keep the plan:\n%s", nid, a)
	}
	if r := f.c.run("--json", "rollout", "resume", nid); r.code != 0 || states(f.jsonRows(t, r)) != "unchanged,unchanged,unchanged,unchanged" {
		t.Fatalf("a resume of the finished resume: want every host unchanged: %s", r)
	}
}

// TestRolloutResumePlanAltered: a record whose plan was altered on one
// host (its check made another command) makes the resume refuse, naming
// the hosts that disagree: nothing is changed, on any host, and no lock
// is left.
func TestRolloutResumePlanAltered(t *testing.T) {
	t.Parallel()
	f := newRolloutFleet(t, 4)
	rid := f.killedBetweenBatches(t)
	dir := strings.TrimPrefix(f.root, "~/") + "/runtimes/.rollouts/" + rid
	hostSh(t, f.hosts[1], "sed 's|--check%3Dtest|--check%3Dtouch%20../../owned%3Btest|' "+dir+"/plan >"+dir+"/p && mv "+dir+"/p "+dir+"/plan")
	var before []string
	for i := range f.hosts {
		before = append(before, f.records(t, i))
	}
	if !strings.Contains(before[1], "owned") {
		t.Fatalf("the plan was not altered:\n%s", before[1])
	}
	r := f.c.run("rollout", "resume", rid)
	want := "rollout " + rid + ": its records do not agree on its plan (" + f.hosts[0].Target() + ": one plan; " + f.hosts[1].Target() + ": another plan): nothing was changed"
	f.refusedUnchanged(t, r, want, "naming hosts 0 and 1", before)
}

// refusedUnchanged: resume r exited 1 with want in its last line, no host's
// records differ from before, the altered check (which makes "owned") ran
// on no host, and every lock is free.
func (f *rolloutFleet) refusedUnchanged(t *testing.T, r run, want, naming string, before []string) {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
	if r.code != 1 || !strings.Contains(lines[len(lines)-1], want) {
		t.Fatalf("want the resume refused, in one line %s: %s", naming, r)
	}
	for i := range f.hosts {
		if after := f.records(t, i); after != before[i] {
			t.Fatalf("host %d was changed:\nbefore:\n%s\nafter:\n%s", i, before[i], after)
		}
		if strings.Contains(hostSh(t, f.hosts[i], "ls "+strings.TrimPrefix(f.root, "~/")), "owned") {
			t.Fatalf("the altered check ran on host %d", i)
		}
	}
	lr := f.c.run("--json", "lock", "status")
	if strings.Count(lr.stdout, `"locked":false`) != len(f.hosts) {
		t.Fatalf("want every lock free: %s", lr)
	}
}

// TestRolloutResumeWitnessAltered: the witness of a host whose batch was
// not reached altered (its check made another command): the resume
// refuses in one line naming that host; nothing is changed on any host,
// the altered check runs nowhere, and no lock is left.
func TestRolloutResumeWitnessAltered(t *testing.T) {
	t.Parallel()
	f := newRolloutFleet(t, 4)
	rid := f.killedBetweenBatches(t)
	before := f.alterWitness(t, 3, rid)
	for _, args := range [][]string{{"rollout", "resume", rid}, {"rollout", "resume", rid, "--trust-plan"}} {
		r := f.c.run(args...)
		want := "rollout " + rid + ": the witnesses of its plan on " + f.hosts[3].Target() + " do not agree with the plan its records keep: nothing was changed"
		f.refusedUnchanged(t, r, want, fmt.Sprintf("(%v) naming host 3", args), before)
	}
}

// TestRolloutResumeNoWitness: a host whose batch was not reached and
// whose witness is gone (removed by hand) has not vouched for the plan:
// the resume settles and stops short of it, naming it alone (the other
// host not reached has its witness) and --trust-plan, switching nothing;
// with --trust-plan it goes on, and every host ends on v2.
func TestRolloutResumeNoWitness(t *testing.T) {
	t.Parallel()
	f := newRolloutFleet(t, 4)
	rid := f.killedBetweenBatches(t)
	hostSh(t, f.hosts[3], "rm "+f.witnessPath(rid))
	r := f.c.run("rollout", "resume", rid)
	if r.code != 1 || !strings.Contains(r.stderr, "not going on by itself: "+f.hosts[3].Target()+" keep neither a record of rollout "+rid+" nor a witness of its plan") ||
		!strings.Contains(r.stderr, "rollout resume "+rid+" --trust-plan") {
		t.Fatalf("want the resume to stop short of host 3 alone, naming it and --trust-plan: %s", r)
	}
	for i := 2; i < 4; i++ {
		if got := f.current(t, i); got != f.id1 {
			t.Fatalf("host %d is on %s after a resume that did not go on", i, got)
		}
	}
	if r := f.c.run("rollout", "resume", rid, "--trust-plan"); r.code != 0 {
		t.Fatalf("want the resume with --trust-plan to switch the hosts not done: %s", r)
	}
	f.settled(t, f.id2)
}

// TestRolloutWitnessIsNoRecord: a host whose batch was not reached keeps a
// witness of the plan and no record: rollout status says no-record there,
// an activate neither settles nor refuses anything for it, gc keeps no
// runtime for it (the staged v2, not current, goes with --keep 0) and
// sweeps it once nothing wrote to it for --keep-runs; a fresh one stays.
func TestRolloutWitnessIsNoRecord(t *testing.T) {
	t.Parallel()
	f := newRolloutFleet(t, 4)
	rid := f.killedBetweenBatches(t)
	if st := f.status(t, rid); st[3].State != "no-record" {
		t.Fatalf("host 3 in rollout %s: %+v, want no-record", rid, st[3])
	}
	one := func(i int) *cli {
		return &cli{t: t, home: f.c.home, flags: append([]string{"-H", f.hosts[i].Target()}, f.c.flags[2:]...)}
	}
	if r := one(3).run("activate", f.id1); r.code != 0 || strings.Contains(r.stderr, "rollout") {
		t.Fatalf("activate on host 3, a witness there: %s", r)
	}
	hostSh(t, f.hosts[3], "touch -d '10 days ago' "+f.witnessPath(rid))
	r := one(3).run("gc", "--keep", "0")
	if r.code != 0 || !strings.Contains(r.stdout, "runtimes/.rollouts/.plan-"+rid) || !strings.Contains(r.stdout, f.id2) {
		t.Fatalf("gc on host 3: want the witness swept and v2 removed: %s", r)
	}
	if f.witness(t, 3, rid) != "" || f.witness(t, 2, rid) == "" {
		t.Fatalf("want host 3's witness swept, host 2's (fresh) kept")
	}
	if got := hostSh(t, f.hosts[3], "ls "+strings.TrimPrefix(f.root, "~/")+"/runtimes"); strings.Contains(got, f.id2) {
		t.Fatalf("gc kept v2 on host 3 for a witness: %s", got)
	}
}

// killedAfterStaging runs batchArgs with the client killed (SIGKILL) once
// every host staged v2 and wrote its witness of the plan, before the
// first batch: every host is on v1, with a witness and no record. It
// returns the rollout's id (f.id2 is set from the witnesses).
func (f *rolloutFleet) killedAfterStaging(t *testing.T) string {
	t.Helper()
	rid := rolloutID(t, f.killedAt(t, "rollout.stage", f.batchArgs()...))
	for i := range f.hosts {
		if got := f.current(t, i); got != f.id1 {
			t.Fatalf("host %d is on %s after staging", i, got)
		}
		w := f.witness(t, i, rid)
		_, to, ok := strings.Cut(w, " to=")
		if !ok {
			t.Fatalf("host %d keeps no witness of rollout %s: %q", i, rid, w)
		}
		f.id2, _, _ = strings.Cut(to, " ")
		if strings.Contains(f.records(t, i), "/"+rid+"\n") {
			t.Fatalf("host %d keeps a record of rollout %s after staging:\n%s", i, rid, f.records(t, i))
		}
	}
	return rid
}

// TestRolloutResumeWitnessesAlone: the client killed after staging,
// before the first batch: no host keeps a record, every host a witness of
// the plan, all agreeing. rollout resume ID goes on from the first batch
// with the witnessed plan, under a new id: every host ends on v2, healthy,
// and no record (not even a tombstone) is made of the old id; no lock is
// left. Without ID, the witnessed rollout is the latest one.
func TestRolloutResumeWitnessesAlone(t *testing.T) {
	t.Parallel()
	for _, withID := range []bool{true, false} {
		t.Run(fmt.Sprint("id=", withID), func(t *testing.T) { resumeWitnessesAlone(t, withID) })
	}
}

func resumeWitnessesAlone(t *testing.T, withID bool) {
	f := newRolloutFleet(t, 4)
	rid := f.killedAfterStaging(t)
	args := []string{"rollout", "resume"}
	if withID {
		args = append(args, rid)
	}
	r := f.c.run(args...)
	if r.code != 0 || !strings.Contains(r.stderr, "rollout "+rid+": no host keeps a record of it, and its hosts' witnesses agree on its plan") ||
		!strings.Contains(r.stderr, "rollout "+rid+": going on with the hosts not on "+f.id2) {
		t.Fatalf("(%v) want the resume to go on with the witnessed plan: %s", args, r)
	}
	nid := rolloutID(t, r)
	for _, h := range f.hosts {
		if want := h.Target() + "  switched  " + f.id1 + " -> " + f.id2 + "  healthy after "; nid == rid || !strings.Contains(r.stdout, want) {
			t.Fatalf("(%v) want every host switched under a new id: %q not in %s", args, want, r)
		}
	}
	if !strings.Contains(r.stderr, "batch 1/2: 2 hosts") || !strings.Contains(r.stderr, "batch 2/2: 2 hosts") {
		t.Fatalf("(%v) want the plan's two batches of two: %s", args, r)
	}
	f.settled(t, f.id2)
	for i, st := range f.status(t, rid) {
		if st.State != "no-record" {
			t.Fatalf("(%v) host %d in rollout %s: %+v, want no-record (a witness is not a record)", args, i, rid, st)
		}
	}
	for i, st := range f.status(t, nid) {
		if st.State != "healthy" {
			t.Fatalf("(%v) host %d in rollout %s: %+v, want healthy", args, i, nid, st)
		}
	}
}

// TestRolloutResumeWitnessesDisagree: the client killed after staging, and
// one host's witness altered (its check made another command): with no
// record to go by, the resume refuses in one line naming the hosts that
// disagree, with or without --trust-plan; nothing is changed on any host
// (no tombstone either), the altered check runs nowhere, and no lock is
// left.
func TestRolloutResumeWitnessesDisagree(t *testing.T) {
	t.Parallel()
	f := newRolloutFleet(t, 4)
	rid := f.killedAfterStaging(t)
	before := f.alterWitness(t, 3, rid)
	for _, args := range [][]string{{"rollout", "resume", rid}, {"rollout", "resume", rid, "--trust-plan"}} {
		r := f.c.run(args...)
		want := "rollout " + rid + ": no host keeps a record of it, and the witnesses of its plan do not agree (" + f.hosts[0].Target() + ", " +
			f.hosts[1].Target() + ", " + f.hosts[2].Target() + ": one plan; " + f.hosts[3].Target() + ": another plan): nothing was changed"
		f.refusedUnchanged(t, r, want, fmt.Sprintf("(%v) naming host 3", args), before)
	}
}

// TestRolloutResumeWitnessesAloneOneMissing: the client killed after
// staging, and host 3's witness removed: host 3 has not vouched for the
// witnessed plan, so the resume stops short of any switch, naming it and
// --trust-plan (every host stays on v1); with --trust-plan it goes on and
// every host ends on v2.
func TestRolloutResumeWitnessesAloneOneMissing(t *testing.T) {
	t.Parallel()
	f := newRolloutFleet(t, 4)
	rid := f.killedAfterStaging(t)
	hostSh(t, f.hosts[3], "rm "+f.witnessPath(rid))
	r := f.c.run("rollout", "resume", rid)
	if r.code != 1 || !strings.Contains(r.stderr, "not going on by itself: "+f.hosts[3].Target()+" keep neither a record of rollout "+rid+" nor a witness of its plan") {
		t.Fatalf("want the resume to stop short of any switch, naming host 3: %s", r)
	}
	f.settled(t, f.id1)
	if r := f.c.run("rollout", "resume", rid, "--trust-plan"); r.code != 0 {
		t.Fatalf("want the resume with --trust-plan to switch every host: %s", r)
	}
	f.settled(t, f.id2)
}
