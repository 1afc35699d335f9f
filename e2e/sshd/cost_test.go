package sshd

import (
	"bufio"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hoistdev/hoist/e2e/internal/harness"
)

// burn is a shell loop that spends CPU, then prints the CPU time the shell
// itself says it spent (utime and stime of /proc/$$/stat, in ticks).
const burn = `i=0; while [ $i -lt 150000 ]; do i=$((i+1)); done; cut -d' ' -f14,15 /proc/$$/stat`

// TestCgroupCountsOrphans: the host's CPU includes a process that its
// login left behind and that ended after the login did, reparented away
// from sshd, whose time no sshd's cutime ever holds.
func TestCgroupCountsOrphans(t *testing.T) {
	t.Parallel()
	h := Start(t, Options{Cgroup: true})
	idle := h.Running(t)
	before := h.CPU(t)
	orphan := filepath.Join(h.Dir, "orphan")
	script := fmt.Sprintf(`nohup sh -c %s >%s 2>/dev/null </dev/null & sh -c %s`, quote(burn), orphan, quote(burn))
	out, status := h.SSH(t, script)
	if status != 0 {
		t.Fatalf("ssh: status %d, output %q", status, out)
	}
	// The orphan says its time as it ends: wait for that, then for the
	// host to be back to its idle processes.
	var said string
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if said = harness.ReadFrom(orphan, 0); strings.HasSuffix(said, "\n") || time.Now().After(deadline) {
			break
		}
	}
	h.WaitRunning(t, idle)
	spent := h.CPU(t) - before
	own := ticks(t, out) + ticks(t, said)
	// Each shell's ticks round its own time; allow one tick for each.
	if spent < own-20*time.Millisecond {
		t.Errorf("the host's cgroup says %v, less than the two shells' own %v", spent, own)
	}
	t.Logf("cgroup %v, the shells their own %v", spent, own)
	if h.Running(t) > idle {
		t.Errorf("%d processes left, want %d", h.Running(t), idle)
	}
}

func ticks(t *testing.T, s string) time.Duration {
	t.Helper()
	f := strings.Fields(s)
	if len(f) != 2 {
		t.Fatalf("utime and stime: got %q", s)
	}
	var sum int64
	for _, v := range f {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			t.Fatalf("utime and stime: got %q", s)
		}
		sum += n
	}
	return time.Duration(sum) * time.Second / 100 // USER_HZ
}

// TestTraceProcs: a command's processes and programs, as the login shell
// runs them, and only those after the mark, also across a Restart.
func TestTraceProcs(t *testing.T) {
	t.Parallel()
	h := Start(t, Options{TraceProcs: true})
	h.SSH(t, "ls >/dev/null")
	mark := h.TraceMark(t)
	if out, status := h.SSH(t, `date >/dev/null; (true); x=$(date); ls / | cat >/dev/null; echo ok`); status != 0 || out != "ok\n" {
		t.Fatalf("ssh: status %d, output %q", status, out)
	}
	procs := h.Started(t, mark)
	got := procs.Programs()
	shell := filepath.Base(h.acct.shell)
	for name, want := range map[string]int{"date": 2, "ls": 1, "cat": 1, "sshd": 1, shell: 1} {
		if got[name] != want {
			t.Errorf("%s ran %d times, want %d; all: %s\n%s", name, got[name], want, procs.Top(), procs.Tree())
		}
	}
	if got[shell+" (fork)"] < 1 || got["sshd (fork)"] < 1 {
		t.Errorf("no subshell of %s or no fork of sshd: %s\n%s", shell, procs.Top(), procs.Tree())
	}
	if procs.Execs() != 6 || !strings.Contains(procs.Tree(), `["date"]`) {
		t.Errorf("%d programs run, want 6 (sshd, the shell, date twice, ls, cat):\n%s", procs.Execs(), procs.Tree())
	}

	t.Logf("%s\n%s", procs.Top(), procs.Tree())
	h.Restart()
	mark = h.TraceMark(t)
	h.SSH(t, "true")
	if got := h.Started(t, mark).Programs(); got["ls"] != 0 || got["date"] != 0 || got["sshd (fork)"] < 1 || got[shell] != 1 {
		t.Errorf("after Restart: %v, want only sshd and the shell", got)
	}
}

// TestParseTrace: strace's split lines (another process's line in
// between), a child whose program shows before its parent's fork returns,
// threads and failed calls.
func TestParseTrace(t *testing.T) {
	log := `0 launch
10 execve("/usr/sbin/sshd", ["/usr/sbin/sshd", "-D"], 0x7ffc /* 5 vars */) = 0
10 clone(child_stack=NULL, flags=CLONE_CHILD_CLEARTID|CLONE_CHILD_SETTID|SIGCHLD, child_tidptr=0x7f) = 11
11 execve("/bin/sh", ["sh", "-c", "x"], 0x55 /* 5 vars */) = 0
11 vfork( <unfinished ...>
12 execve("/usr/bin/nope", ["nope"], 0x55 /* 5 vars */) = -1 ENOENT (No such file or directory)
12 execve("/usr/bin/date", ["date", "+%s"], 0x55 /* 5 vars */ <unfinished ...>
11 <... vfork resumed>) = 12
12 <... execve resumed>) = 0
13 execve("/usr/bin/cat", ["cat"], 0x55 /* 5 vars */) = 0
11 clone(child_stack=NULL, flags=CLONE_CHILD_CLEARTID|CLONE_CHILD_SETTID|SIGCHLD, child_tidptr=0x7f) = 13
11 clone3({flags=CLONE_VM|CLONE_FS|CLONE_FILES|CLONE_SIGHAND|CLONE_THREAD|CLONE_SYSVSEM, exit_signal=0, stack=0x7f}, 88) = 14
11 clone(child_stack=NULL, flags=CLONE_CHILD_CLEARTID|CLONE_CHILD_SETTID|SIGCHLD, child_tidptr=0x7f) = 15
11 execve("/bin/true", ["true"], 0x55 /* 5 vars */`
	mark := int64(strings.Index(log, "11 execve(\"/bin/sh\""))
	procs, err := parseTrace(bufio.NewReader(strings.NewReader(log)), mark)
	if err != nil {
		t.Fatal(err)
	}
	want := "12 /usr/bin/date; 13 /usr/bin/cat; 15 (fork of /bin/sh)"
	var got []string
	for _, p := range procs {
		s := strconv.Itoa(p.PID) + " " + strings.Join(p.Ran, " ")
		if len(p.Ran) == 0 {
			s += "(fork of " + p.Forked + ")"
		}
		if p.Parent != 11 {
			s += " parent " + strconv.Itoa(p.Parent)
		}
		got = append(got, s)
	}
	if strings.Join(got, "; ") != want {
		t.Errorf("got  %s\nwant %s", strings.Join(got, "; "), want)
	}
	if top := procs.Top(); top != "cat 1, date 1, sh (fork) 1" {
		t.Errorf("Top() = %q", top)
	}
}
