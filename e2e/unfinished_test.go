package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hoistdev/hoist/cmd/hoist/output"
	"github.com/hoistdev/hoist/e2e/sshd"
)

// The commands that only read or run (list, lock status, run) name a
// rollout record a host keeps unfinished (docs/rollout.md, "Other commands
// and unfinished records"), changing nothing and costing no process; and
// rollout status without ID is one host command per host.

// killedMidBatch runs a rollout in batches of one over f's hosts whose
// first host's check hangs, then kills that host's host command (its
// lock's holder) and the client: host 0 keeps an unfinished record
// (switched), host 1, whose batch was not reached, none. It returns the
// rollout's id.
func (f *rolloutFleet) killedMidBatch(t *testing.T) string {
	t.Helper()
	s := f.c.start("rollout", f.v2, "--name", "app", "--canary", "0", "--batch", "1", "--check", "touch ../../checking-$(cat VERSION); sleep 60",
		"--check-timeout", "90s", "--check-deadline", "90s", "--stable", "0s")
	dir := strings.TrimPrefix(f.root, "~/")
	waitFor(t, 60*time.Second, "host 0 checking v2", func() bool {
		out, _ := f.hosts[0].SSH(t, "exec /bin/sh -c 'test -e "+dir+"/checking-2 && echo yes'")
		return strings.TrimSpace(out) == "yes"
	})
	killHolder(t, f.on(0), "host 0")
	s.cmd.Process.Kill()
	s.wait(t, 30*time.Second)
	f.released(t, 0)
	return rolloutID(t, run{stdout: s.stdout()})
}

// released waits until host i's lock is free: the guardian of a killed
// host command has released it.
func (f *rolloutFleet) released(t *testing.T, i int) {
	t.Helper()
	waitFor(t, 60*time.Second, "the lock released", func() bool {
		r := f.on(i).run("--json", "lock", "status")
		return r.code == 0 && strings.Contains(r.stdout, `"locked":false`)
	})
}

// journal is host i's records byte for byte: every entry's name, mode,
// size and time, each link's value, each file's contents, and current.
func (f *rolloutFleet) journal(t *testing.T, i int) string {
	t.Helper()
	dir := strings.TrimPrefix(f.root, "~/")
	return hostSh(t, f.hosts[i], "cd "+dir+" && readlink current; find runtimes/.rollouts -exec ls -ld --time-style=full-iso {} + 2>/dev/null | sort -k 9; "+
		"find runtimes/.rollouts -type l -exec readlink {} + 2>/dev/null; find runtimes/.rollouts -type f -exec cat {} + 2>/dev/null; true")
}

// TestReadOnlyCommandsNameUnfinishedRollout: a rollout in batches whose
// client and host command were killed mid-batch leaves host 0 with an
// unfinished record. hoist list, hoist run -- echo and hoist lock status
// each say so on stderr, once, for host 0 alone, with the rollout's id,
// from, to and state and the status and resume that show and finish it;
// each exits 0 as it would without the record (its host command's hold no
// longer owns the lock: interrupted); run's stdout is the
// command's output alone; --json has unfinished_rollouts on host 0's
// object and none on host 1's; and the records are unchanged.
func TestReadOnlyCommandsNameUnfinishedRollout(t *testing.T) {
	t.Parallel()
	f := newRolloutFleet(t, 2)
	rid := f.killedMidBatch(t)
	id2 := f.current(t, 0)
	if id2 == f.id1 || f.current(t, 1) != f.id1 {
		t.Fatalf("want host 0 switched, unfinished, and host 1 untouched: %s, %s", id2, f.current(t, 1))
	}
	before := []string{f.journal(t, 0), f.journal(t, 1)}
	h0, h1 := f.hosts[0].Target(), f.hosts[1].Target()
	line := "hoist: " + h0 + ": keeps an unfinished rollout " + rid + " (" + f.id1 + " -> " + id2 + ", switched), interrupted: hoist rollout status " + rid +
		" shows it; hoist rollout resume " + rid + " finishes it\n"
	for _, args := range [][]string{{"list"}, {"run", "--wait", "60s", "--", "echo", "out"}, {"lock", "status"}} {
		r := f.c.run(args...)
		if r.code != 0 || strings.Count(r.stderr, line) != 1 || strings.Contains(r.stderr, h1+": keeps") || strings.Contains(r.stdout, "unfinished") {
			t.Errorf("hoist %v: want exit 0 and, on stderr, once for host 0 alone:\n%s\n%s", args, line, r)
		}
		if args[0] == "run" && (strings.Count(r.stdout, "\n") != 2 || !strings.Contains(r.stdout, h0+": out\n") || !strings.Contains(r.stdout, h1+": out\n")) {
			t.Errorf("run's stdout is not the command's output alone: %q", r.stdout)
		}
		j := f.c.run(append([]string{"--json"}, args...)...)
		if j.code != 0 || strings.Count(j.stderr, line) != 1 {
			t.Errorf("hoist --json %v: want exit 0 and the line on stderr: %s", args, j)
		}
		for _, l := range strings.Split(strings.TrimSpace(j.stdout), "\n") {
			var obj struct {
				Host       string                     `json:"host"`
				Unfinished []output.UnfinishedRollout `json:"unfinished_rollouts"`
			}
			if err := json.Unmarshal([]byte(l), &obj); err != nil {
				t.Fatalf("hoist --json %v: %v\n%s", args, err, j)
			}
			want := []output.UnfinishedRollout{{ID: rid, Mode: "batch", From: f.id1, To: id2, State: "switched"}}
			if obj.Host == h1 {
				want = nil
			}
			if got, _ := json.Marshal(obj.Unfinished); string(got) != string(must(json.Marshal(want))) {
				t.Errorf("hoist --json %v on %s: unfinished_rollouts %s, want %s", args, obj.Host, got, must(json.Marshal(want)))
			}
		}
	}
	for i := range f.hosts {
		if after := f.journal(t, i); after != before[i] {
			t.Errorf("host %d's records changed:\nbefore:\n%s\nafter:\n%s", i, before[i], after)
		}
	}
}

func must(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}

// TestUnfinishedRecordCostsNoProcess: on a host that keeps an unfinished
// record, lock status, list and run -- true start no more processes, of
// no program, than on one that keeps none: the host finds the record with
// shell builtins, in the command it runs anyway.
func TestUnfinishedRecordCostsNoProcess(t *testing.T) {
	h := sshd.Start(t, sshd.Options{TraceProcs: true})
	root := filepath.Join(h.Dir, "store")
	c := newCLI(t, h, root)
	if r := c.run("push", sourceTree(t, "v1"), "--name", "a", "--activate"); r.code != 0 {
		t.Fatalf("push: %s", r)
	}
	cmds := [][]string{{"lock", "status"}, {"list"}, {"run", "--", "true"}}
	// Each command twice: the trace of one run may miss a process (a
	// line strace had not written yet), so the record's cost is the least
	// of two runs and the clean cost the most.
	costs := func(keep func(a, b int) int) []map[string]int {
		out := make([]map[string]int, len(cmds))
		for range 2 {
			for i, args := range cmds {
				mark := h.TraceMark(t)
				r := c.run(args...)
				if r.code != 0 {
					t.Fatalf("hoist %v: %s", args, r)
				}
				progs := h.Started(t, mark).Programs()
				delete(progs, "sleep") // a run's guardian's naps, which its timing decides
				if out[i] == nil {
					out[i] = progs
					continue
				}
				for prog := range out[i] {
					out[i][prog] = keep(out[i][prog], progs[prog])
				}
				for prog, n := range progs {
					out[i][prog] = keep(out[i][prog], n)
				}
			}
		}
		return out
	}
	clean := costs(func(a, b int) int { return max(a, b) })
	id := "20261201T000000Z-00000a"
	d := filepath.Join(root, "runtimes", ".rollouts", id)
	hostSh(t, h, "mkdir -p -m 700 "+shq(d)+" && printf '%s\\n' 'hoist-rollout/1 id="+id+" mode=batch from=a-1 to=a-2 token=t lease=30' >"+shq(d+"/plan")+
		" && : >"+shq(d+"/switched"))
	dirty := costs(func(a, b int) int { return min(a, b) })
	for i, args := range cmds {
		for prog, n := range dirty[i] {
			if n > clean[i][prog] {
				t.Errorf("hoist %v started %s %d times with an unfinished record, %d without", args, prog, n, clean[i][prog])
			}
		}
	}
	if r := c.run("list"); !strings.Contains(r.stderr, "keeps an unfinished rollout "+id+" (a-1 -> a-2, switched), interrupted") {
		t.Errorf("list does not name the record: %s", r)
	}
	if _, err := os.Stat(filepath.Join(d, "done")); err == nil {
		t.Errorf("a read-only command finished the record")
	}
}

// sessions counts the host commands (exec sessions) h's sshd has started.
func sessions(t *testing.T, h *sshd.Host) int {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(filepath.Dir(h.KnownHosts), "sshd.log"))
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(string(data), "Starting session: command")
}

// TestRolloutStatusWithoutIDIsOnePass: rollout status without ID starts
// as many host commands on each host as with the ID, the latest rollout
// any host recorded: one pass (each host's own, and with several targets
// the same-store check every fleet command makes); on one target, one. A
// host whose own latest is older says no-record for it, with what its
// current names.
func TestRolloutStatusWithoutIDIsOnePass(t *testing.T) {
	t.Parallel()
	f := newRolloutFleet(t, 2)
	if rows, r := f.rollout(t); r.code != 0 || states(rows) != "switched,switched" {
		t.Fatalf("rollout v2: %s", r)
	}
	time.Sleep(1100 * time.Millisecond) // ids are ordered by the second they begin with
	r := f.on(0).run("rollout", sourceTree(t, "3"), "--name", "app", "--check", "true", "--stable", "0s")
	if r.code != 0 {
		t.Fatalf("rollout v3 to host 0: %s", r)
	}
	rid := rolloutID(t, r)
	cost := func(args ...string) ([]int, []output.RolloutStatus) {
		var n []int
		for _, h := range f.hosts {
			n = append(n, sessions(t, h))
		}
		rows := f.status(t, args...)
		for i, h := range f.hosts {
			n[i] = sessions(t, h) - n[i]
		}
		return n, rows
	}
	withID, _ := cost(rid)
	without, rows := cost()
	t.Logf("host commands per host: %v with the ID, %v without", withID, without)
	for i := range f.hosts {
		if without[i] != withID[i] || without[i] < 1 {
			t.Errorf("host %d: rollout status took %d host commands without ID, %d with it: want as many (one pass)", i, without[i], withID[i])
		}
	}
	if rows[0].Rollout != rid || rows[0].State != "healthy" || rows[1].Rollout != rid || rows[1].State != "no-record" || rows[1].Current != f.id2 {
		t.Errorf("want the latest rollout, %s: healthy on host 0, no record on host 1 (on %s): %+v", rid, f.id2, rows)
	}
	// One target: no same-store check, so the one host command is all.
	n := sessions(t, f.hosts[1])
	if r := f.on(1).run("rollout", "status"); r.code != 0 || !strings.Contains(r.stdout, "  healthy  rollout ") {
		t.Fatalf("rollout status on host 1 alone: %s", r)
	}
	if n = sessions(t, f.hosts[1]) - n; n != 1 {
		t.Errorf("rollout status without ID on one host took %d host commands, want 1", n)
	}
}

// TestReadOnlyCommandsNameVotedRollout: an --atomic rollout whose client
// is killed once the first other host voted leaves that host in doubt,
// its record unfinished with a vote: once the others settled by
// themselves (decider aborted, host 2 voted aborted and went back),
// lock status names host 1's record alone, as voted and interrupted (a vote's value is
// not read: rollout status tells), with mode atomic in --json.
func TestReadOnlyCommandsNameVotedRollout(t *testing.T) {
	t.Parallel()
	f := newRolloutFleet(t, 3)
	rid := rolloutID(t, f.killedAt(t, "rollout.vote", f.atomicArgs()...))
	var j run
	waitFor(t, 60*time.Second, "every participant settled and released", func() bool {
		j = f.c.run("--json", "lock", "status")
		return j.code == 0 && !strings.Contains(j.stdout, `"locked":true`)
	})
	id2 := f.current(t, 1)
	line := "hoist: " + f.hosts[1].Target() + ": keeps an unfinished rollout " + rid + " (" + f.id1 + " -> " + id2 + ", voted), interrupted: "
	if strings.Count(j.stderr, line) != 1 || strings.Count(j.stderr, "keeps an unfinished rollout") != 1 {
		t.Fatalf("want host 1's record alone named, voted: %s", j)
	}
	for _, l := range strings.Split(strings.TrimSpace(j.stdout), "\n") {
		var st output.LockStatus
		if err := json.Unmarshal([]byte(l), &st); err != nil {
			t.Fatal(err)
		}
		want := 0
		if st.Host == f.hosts[1].Target() {
			want = 1
		}
		if len(st.UnfinishedRollouts) != want || want == 1 && (st.UnfinishedRollouts[0].Mode != "atomic" || st.UnfinishedRollouts[0].State != "voted") {
			t.Errorf("%s: unfinished_rollouts %+v", st.Host, st.UnfinishedRollouts)
		}
	}
	if st := f.status(t, rid); st[1].State != "in-doubt" {
		t.Errorf("rollout status: host 1 is %s, want in-doubt", st[1].State)
	}
}
