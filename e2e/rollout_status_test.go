package e2e

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hoistdev/hoist/cmd/hoist/output"
)

// hoist rollout status, a REF source, and --on-fail revert's order
// (docs/rollout.md, "As built for a fleet"), over real sshd hosts.

// on is the fleet's command line for hosts idx only.
func (f *rolloutFleet) on(idx ...int) *cli {
	c := *f.c
	var targets []string
	for _, i := range idx {
		targets = append(targets, f.hosts[i].Target())
	}
	c.flags = slices.Clone(f.c.flags)
	c.flags[1] = strings.Join(targets, ",")
	return &c
}

// killHolder SIGKILLs the host shell that holds the store lock c reaches
// (one host: the holder pid its lock status gives), as a crash of the host
// command would; who names the host in a failure.
func killHolder(t *testing.T, c *cli, who string) {
	t.Helper()
	var st output.LockStatus
	r := c.run("--json", "lock", "status")
	if err := json.Unmarshal([]byte(strings.TrimSpace(r.stdout)), &st); err != nil || !st.Locked || st.Owner == nil {
		t.Fatalf("%s's lock: %v %s", who, err, r)
	}
	pid, err := strconv.Atoi(st.Owner.HolderPID)
	if err != nil {
		t.Fatalf("%s's holder pid %q", who, st.Owner.HolderPID)
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
}

// status runs hoist --json rollout status [ID] and reads a row per host,
// in the order of f.hosts (hosts answer as they finish).
func (f *rolloutFleet) status(t *testing.T, args ...string) []output.RolloutStatus {
	t.Helper()
	r := f.c.run(append([]string{"--json", "rollout", "status"}, args...)...)
	if r.code != 0 {
		t.Fatalf("rollout status: %s", r)
	}
	rows := make([]output.RolloutStatus, len(f.hosts))
	n := 0
	for _, l := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		var o output.RolloutStatus
		if err := json.Unmarshal([]byte(l), &o); err != nil {
			t.Fatalf("rollout status --json: %v\n%s", err, r)
		}
		for i, h := range f.hosts {
			if h.Target() == o.Host {
				rows[i] = o
				n++
			}
		}
	}
	if n != len(f.hosts) {
		t.Fatalf("want a row per host:\n%s", r)
	}
	return rows
}

// TestRolloutStatusRevertOrder: batches [0] [1] [2]; host 2 fails, and
// --on-fail revert takes host 1 back before host 0 (a line per batch, the
// last first). Each host's record is named by the rollout's id (mode
// batch) and each revert has a record of its own, revert-of the rollout;
// rollout status, without ID, reads the latest rollout and says each
// host's state from them.
func TestRolloutStatusRevertOrder(t *testing.T) {
	t.Parallel()
	f := newRolloutFleet(t, 3)
	f.failOn(t, 2)
	rows, r := f.rollout(t, "--batch", "1", "--on-fail", "revert")
	if r.code != 3 || states(rows) != "reverted,reverted,failed" {
		t.Fatalf("want exit 3, hosts 0 and 1 reverted: %s", r)
	}
	b2 := strings.Index(r.stderr, "back, batch 2/3: 1 hosts ("+f.hosts[1].Target()+"): 1 reverted")
	b1 := strings.Index(r.stderr, "back, batch 1/3: 1 hosts ("+f.hosts[0].Target()+"): 1 reverted")
	if b2 < 0 || b1 < 0 || b2 > b1 {
		t.Fatalf("want batch 2 taken back, then batch 1: %s", r)
	}
	rid := rows[0].Rollout
	st := f.status(t)
	for i, s := range st {
		if s.Rollout != rid || s.State != "reverted" || s.Current != f.id1 || s.Host != f.hosts[i].Target() {
			t.Fatalf("host %d: %+v, want rollout %s reverted, current %s", i, s, rid, f.id1)
		}
		own := s.Records[0]
		if own.ID != rid || own.Mode != "batch" || own.From != f.id1 || own.To != f.id2 || own.Parts["switched"] != "file" || own.Since == "" {
			t.Fatalf("host %d: its record %+v", i, own)
		}
		switch i {
		case 0, 1:
			if own.Parts["done"] != "to" || len(s.Records) != 2 {
				t.Fatalf("host %d: want done -> to and a revert's record: %+v", i, s.Records)
			}
			rv := s.Records[1]
			if rv.ID == rid || rv.RevertOf != rid || rv.Mode != "batch" || rv.From != f.id2 || rv.To != f.id1 || rv.Parts["done"] != "to" {
				t.Fatalf("host %d: the revert's record %+v", i, rv)
			}
		case 2:
			if own.Parts["done"] != "from" || len(s.Records) != 1 {
				t.Fatalf("host 2 went back by itself: %+v", s.Records)
			}
		}
	}
	// The same by ID, as text: a row per host and a line per record.
	tr := f.c.run("rollout", "status", rid)
	if tr.code != 0 || strings.Count(tr.stdout, "  reverted  rollout "+rid) != 3 || strings.Count(tr.stdout, "revert-of "+rid) != 2 {
		t.Fatalf("rollout status %s: %s", rid, tr)
	}
	// gc sweeps host 0's finished records once nothing was written in
	// them for --keep-runs (a week), and leaves host 1's, fresh.
	rs := strings.TrimPrefix(f.root, "~/") + "/runtimes/.rollouts"
	hostSh(t, f.hosts[0], "touch -h -d '10 days ago' "+rs+"/*/* "+rs+"/*")
	gr := f.c.run("gc")
	if gr.code != 0 || strings.Count(gr.stdout, "runtimes/.rollouts/") != 2 {
		t.Fatalf("gc: want host 0's two records swept: %s", gr)
	}
	st = f.status(t, rid)
	if st[0].State != "no-record" || st[1].State != "reverted" || len(st[1].Records) != 2 {
		t.Fatalf("after gc: %+v", st)
	}
}

// TestRolloutStatusJournal: a record directory that is a symlink, and a
// record's done that is a link to elsewhere, are journal trouble: said,
// never followed. A host without the rollout says no-record.
func TestRolloutStatusJournal(t *testing.T) {
	t.Parallel()
	f := newRolloutFleet(t, 3)
	rows, r := f.rollout(t, "--canary", "0")
	if r.code != 0 {
		t.Fatalf("rollout: %s", r)
	}
	rid := rows[0].Rollout
	dir := strings.TrimPrefix(f.root, "~/") + "/runtimes/.rollouts/" + rid
	// Host 0: the record is a symlink to a directory with a plan of
	// someone else's; host 1: its done names something else.
	hostSh(t, f.hosts[0], "d=$(mktemp -d) && printf 'hoist-rollout/1 id=x mode=planted\\n' >\"$d/plan\" && rm -rf "+dir+" && ln -s \"$d\" "+dir)
	hostSh(t, f.hosts[1], "rm "+dir+"/done && ln -s /etc/passwd "+dir+"/done")
	hostSh(t, f.hosts[2], "rm -rf "+dir)
	st := f.status(t, rid)
	if st[0].State != "journal" || len(st[0].Records) != 1 || st[0].Records[0].Mode != "" || !strings.HasSuffix(st[0].Records[0].Trouble, "/.rollouts/"+rid) {
		t.Fatalf("host 0: %+v, want journal trouble, the planted plan unread", st[0])
	}
	if st[1].State != "journal" || !strings.HasSuffix(st[1].Records[0].Trouble, rid+"/done") || st[1].Records[0].Parts["done"] != "" {
		t.Fatalf("host 1: %+v, want journal trouble at done", st[1])
	}
	if st[2].State != "no-record" || len(st[2].Records) != 0 || st[2].Current != f.id2 {
		t.Fatalf("host 2: %+v, want no-record", st[2])
	}
	// Without ID: the latest rollout any host recorded (host 1's: host
	// 0's record is not one, host 2 has none), read on every host.
	st = f.status(t)
	if st[0].Rollout != rid || st[0].State != "journal" || st[2].Rollout != rid || st[2].State != "no-record" {
		t.Fatalf("without ID: %+v, want rollout %s read on every host", st, rid)
	}
}

// TestRolloutRef: a REF (an id the hosts have) is found on each host; a
// host without it fails the rollout before any switch, saying so; once
// it has it, the rollout switches every host.
func TestRolloutRef(t *testing.T) {
	t.Parallel()
	f := newRolloutFleet(t, 3)
	pr := f.on(0, 1).run("--json", "push", f.v2, "--name", "app")
	var p output.Push
	if err := json.Unmarshal([]byte(strings.SplitN(pr.stdout, "\n", 2)[0]), &p); pr.code != 0 || err != nil {
		t.Fatalf("push v2: %v\n%s", err, pr)
	}
	check := []string{"--check", "true", "--stable", "0s", "--check-interval", "200ms", "--canary", "0"}
	r := f.c.run(append([]string{"rollout", p.ID}, check...)...)
	want := "hoist: " + f.hosts[2].Target() + ": \"" + p.ID + "\" is not on this host: push it there first"
	others := strings.Contains(r.stderr, f.hosts[0].Target()+": \"") || strings.Contains(r.stderr, f.hosts[1].Target()+": \"")
	if r.code != 1 || !strings.Contains(r.stderr, want) || others {
		t.Fatalf("want exit 1, host 2 named as not having %s: %s", p.ID, r)
	}
	for i := range f.hosts {
		if got := f.current(t, i); got != f.id1 {
			t.Fatalf("host %d is on %s: switched although a host could not stage", i, got)
		}
	}
	if pr := f.on(2).run("push", f.v2, "--name", "app"); pr.code != 0 {
		t.Fatalf("push v2 to host 2: %s", pr)
	}
	r = f.c.run(append([]string{"--json", "rollout", p.ID}, check...)...)
	if r.code != 0 || strings.Count(r.stdout, `"state":"switched"`) != 3 {
		t.Fatalf("want every host switched: %s", r)
	}
	for i := range f.hosts {
		if got := f.current(t, i); got != p.ID {
			t.Fatalf("host %d is on %s, want %s", i, got, p.ID)
		}
	}
}

// TestRolloutRefIsOneRuntime: a REF that names a different runtime on one
// host (a name whose newest runtime differs) switches no host, in batches
// or --atomic, and says to give the full id; a full id rolls out --atomic.
func TestRolloutRefIsOneRuntime(t *testing.T) {
	t.Parallel()
	f := newRolloutFleet(t, 3)
	pr := f.on(0, 1).run("--json", "push", f.v2, "--name", "app")
	var p output.Push
	if err := json.Unmarshal([]byte(strings.SplitN(pr.stdout, "\n", 2)[0]), &p); pr.code != 0 || err != nil {
		t.Fatalf("push v2: %v\n%s", err, pr)
	}
	if r := f.on(2).run("push", sourceTree(t, "3"), "--name", "app"); r.code != 0 {
		t.Fatalf("push v3 to host 2: %s", r)
	}
	check := []string{"--check", "true", "--stable", "0s", "--check-interval", "200ms"}
	for _, mode := range [][]string{{"--canary", "0"}, {"--atomic", "--hold-lease", "10s"}} {
		r := f.c.run(append(append([]string{"rollout", "app"}, check...), mode...)...)
		if r.code != 1 || !strings.Contains(r.stderr, "give the runtime's full id") || !strings.Contains(r.stderr, "no host was switched") {
			t.Fatalf("%v: want exit 1 naming two runtimes of app: %s", mode, r)
		}
		for i := range f.hosts {
			if got := f.current(t, i); got != f.id1 {
				t.Fatalf("%v: host %d is on %s: switched although app is two runtimes", mode, i, got)
			}
		}
	}
	if r := f.on(2).run("push", f.v2, "--name", "app"); r.code != 0 {
		t.Fatalf("push v2 to host 2: %s", r)
	}
	r := f.c.run(append(append([]string{"--json", "rollout", p.ID}, check...), "--atomic", "--hold-lease", "10s")...)
	if r.code != 0 || strings.Count(r.stdout, `"state":"switched"`) != 3 {
		t.Fatalf("--atomic of a full id: want every host switched: %s", r)
	}
	for i := range f.hosts {
		if got := f.current(t, i); got != p.ID {
			t.Fatalf("host %d is on %s, want %s", i, got, p.ID)
		}
	}
}

// TestRolloutResumeOfABatchRollout: a batch rollout whose host commands
// died mid-check (their hosts' shells killed, the client too) leaves each
// host on the new runtime, unchecked, its record unfinished; rollout
// resume settles every record by the local rule (back on what it had),
// then goes on with its plan: every host switched again, under a new id,
// with the same check (which passes now).
func TestRolloutResumeOfABatchRollout(t *testing.T) {
	t.Parallel()
	f := newRolloutFleet(t, 3)
	s := f.c.start("rollout", f.v2, "--name", "app", "--canary", "0", "--check", "test -e ../../pass || { touch ../../checking-$(cat VERSION); sleep 60; }",
		"--check-timeout", "90s", "--check-deadline", "90s", "--stable", "0s")
	for i, h := range f.hosts {
		waitFor(t, 60*time.Second, "host checking v2", func() bool {
			out, _ := h.SSH(t, "exec /bin/sh -c 'test -e "+strings.TrimPrefix(f.root, "~/")+"/checking-2 && echo yes'")
			return strings.TrimSpace(out) == "yes"
		})
		one := &cli{t: t, home: f.c.home, flags: append([]string{"-H", h.Target()}, f.c.flags[2:]...)}
		killHolder(t, one, fmt.Sprintf("host %d", i))
	}
	s.cmd.Process.Kill()
	s.wait(t, 30*time.Second)
	id := rolloutID(t, run{stdout: s.stdout()})
	for i := range f.hosts {
		if got := f.current(t, i); got == f.id1 {
			t.Fatalf("host %d is back on v1 before the resume: the test did not interrupt its sequence", i)
		}
	}
	to := f.current(t, 0)
	for _, h := range f.hosts {
		hostSh(t, h, "touch "+strings.TrimPrefix(f.root, "~/")+"/pass")
	}
	r := f.c.run("rollout", "resume", id)
	nid := rolloutID(t, r)
	if r.code != 0 || nid == id || strings.Count(r.stdout, "  switched  "+f.id1+" -> "+to) != 3 ||
		!strings.Contains(r.stderr, "settled by the local rule, back on what they had") {
		t.Fatalf("want the resume to take every host back, then switch it again (exit 0): %s", r)
	}
	f.settled(t, to)
	for _, st := range f.status(t, id) {
		if st.State != "reverted" {
			t.Fatalf("want every host's record of %s reverted: %+v", id, st)
		}
	}
	for _, st := range f.status(t, nid) {
		if st.State != "healthy" {
			t.Fatalf("want every host healthy in %s: %+v", nid, st)
		}
	}
}
