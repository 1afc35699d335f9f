package e2e

// Hosts whose /proc is not their PID namespace's (sshd under unshare -p
// --fork without --mount-proc): a pid this namespace gives a shell names
// another process in /proc, or none. hoist must not follow a command, nor
// judge a holder, by what /proc says there; it follows the command by wait
// and kill -0, which look in the namespace, and leaves the rest to the
// lease.

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hoistdev/hoist/e2e/sshd"
)

// foreignProcHost is a ForeignProc host whose /proc is checked to be the
// machine's: the shell's $$ is not /proc/self.
func foreignProcHost(t *testing.T) *sshd.Host {
	t.Helper()
	h := sshd.Start(t, sshd.Options{ForeignProc: true})
	out := hostSh(t, h, `read s </proc/self/stat; echo "$$ ${s%% *}"`)
	if f := strings.Fields(out); len(f) != 2 || f[0] == f[1] {
		t.Fatalf("the host's /proc is its namespace's ($$ and /proc/self: %q)", out)
	}
	return h
}

// TestForeignProcHostFreesTheLock: on two such hosts, 4 clients each loop
// hoist --lease 4s run -- sh -c 'echo ...; sleep 0.2'. Every command runs
// and ends, one at a time on each host (the journal), and every lock is
// freed at its holder's end: the next holder starts well within a lease of
// the previous one's end. A host command that follows the command through
// /proc finds a process of the machine under the command's pid, takes it
// for the command, and never releases: the loop stalls for good.
func TestForeignProcHostFreesTheLock(t *testing.T) {
	sshd.RequireRoot(t)
	t.Parallel()
	const clients, rounds, lease = 4, 4, 4 * time.Second
	hosts := []*sshd.Host{foreignProcHost(t), foreignProcHost(t)}
	var wg sync.WaitGroup
	rigs := make([]*recRig, len(hosts))
	var mu sync.Mutex
	var failures []string
	for hi, h := range hosts {
		r := newRecRig(t, h, "store")
		rigs[hi] = r
		for ci := 0; ci < clients; ci++ {
			wg.Go(func() {
				for k := 0; k < rounds; k++ {
					name := fmt.Sprintf("%c%d%d", 'a'+hi, ci, k)
					s := r.cli().start(runArgs([]string{"--lease", "4s"}, []string{"--wait", "120s"}, r.holder(name, "echo "+name+"; sleep 0.2", ""))...)
					select {
					case <-s.done:
					case <-time.After(150 * time.Second):
						s.cmd.Process.Kill()
						<-s.done
					}
					if s.code != 0 || s.stdout() != name+"\n" {
						mu.Lock()
						failures = append(failures, fmt.Sprintf("%s on %s: exit %d, stdout %q, stderr %s", name, h.Addr, s.code, s.stdout(), s.stderr()))
						mu.Unlock()
						return
					}
				}
			})
		}
	}
	wg.Wait()
	if len(failures) > 0 {
		t.Fatalf("%d client(s) failed; the first:\n%s", len(failures), failures[0])
	}
	for hi, r := range rigs {
		var names []string
		for ci := 0; ci < clients; ci++ {
			for k := 0; k < rounds; k++ {
				names = append(names, fmt.Sprintf("%c%d%d", 'a'+hi, ci, k))
			}
		}
		spans := r.check(names, names)
		var order []recSpan
		for _, s := range spans {
			order = append(order, s)
		}
		sort.Slice(order, func(i, j int) bool { return order[i].start.Before(order[j].start) })
		var worst time.Duration
		for i := 1; i < len(order); i++ {
			worst = max(worst, order[i].start.Sub(order[i-1].end))
		}
		figure(t, "foreign /proc host, 4 clients looping run (lease 4 s): the largest gap between one holder's end and the next start", worst,
			"the host releases at the command's end; a waiter polls every 0.1 s")
		if worst > lease {
			t.Errorf("host %d: a lock outlived its holder's end by %s, more than the lease (%s)", hi, worst, lease)
		}
	}
}

// outerPID is the pid, as this test sees it, of the host command (the
// shell) that runs holder name's command: the parent of its first process.
func outerPID(t *testing.T, r *recRig, name string) int {
	t.Helper()
	pids := r.procs(name)
	marked := map[int]bool{}
	for _, p := range pids {
		marked[p] = true
	}
	for _, p := range pids {
		st := readFile(t, fmt.Sprintf("/proc/%d/stat", p))
		f := strings.Fields(st[strings.LastIndexByte(st, ')')+1:])
		ppid, err := strconv.Atoi(f[1])
		if err == nil && !marked[ppid] {
			return ppid
		}
	}
	t.Fatalf("no host command found for %s (its processes: %v)", name, pids)
	return 0
}

// TestForeignProcHostWrapperKilled: on such a host the host command that
// holds the lock is SIGKILLed while its command runs. Its guardian, which
// cannot read the shell's start time there, finds the shell gone by kill
// -0 in its namespace, stops the command's group and releases: the waiter
// gets the lock with no process of the command left. A guardian that
// judges the shell by what /proc says under its pid takes another process
// for it and renews the lock for as long as that one lives.
func TestForeignProcHostWrapperKilled(t *testing.T) {
	sshd.RequireRoot(t)
	t.Parallel()
	r := newRecRig(t, foreignProcHost(t), "store")
	wrapperKilled(t, r, []string{"--lease", "4s"}, func() int { return outerPID(t, r, "a00") },
		"foreign /proc host, host command SIGKILLed", "the guardian finds the shell gone by kill -0 and releases after the group")
}
