package sshd

import (
	"bufio"
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// With Options.TraceProcs the host's sshd runs under strace, which follows
// every process it and its descendants start and writes one line per
// fork, clone and execve to a file in the host's directory. A test takes a
// TraceMark before a command and reads what the host started since with
// Started: the processes, and the programs they ran.

// straceArgs is the tracer put in front of sshd: follow forks (-f), only
// the calls that make processes and run programs, no signals and no exit
// lines (-qq), appending (-A) so that a Restart keeps what came before.
// --seccomp-bpf stops the tracees at those calls only, not at every call.
func straceArgs(strace, out string) []string {
	return []string{strace, "-f", "--seccomp-bpf", "-qq", "-A", "-s", "200",
		"-e", "trace=execve,fork,vfork,clone,clone3", "-e", "signal=none", "-o", out}
}

// launchLine, as "0 launch", starts each sshd's part of a trace file.
const launchLine = "launch"

// stopTraced sends SIGTERM to the traced sshd of the host in dir, found by
// its pid file.
func stopTraced(dir string) {
	data, err := os.ReadFile(filepath.Join(dir, "sshd.pid"))
	if err != nil {
		return
	}
	if pid, err := strconv.Atoi(strings.TrimSpace(string(data))); err == nil && pid > 1 {
		syscall.Kill(pid, syscall.SIGTERM)
	}
}

// TraceMark is a point in a host's process trace.
type TraceMark int64

// TraceMark is now, in the host's process trace: Started(mark) lists what
// the host started after it. The host must be quiet (no command running).
func (h *Host) TraceMark(t testing.TB) TraceMark {
	t.Helper()
	h.needTrace(t, "TraceMark")
	info, err := os.Stat(h.tracePath)
	if err != nil {
		t.Fatalf("the process trace of %s: %v", h.Addr, err)
	}
	return TraceMark(info.Size())
}

// Started lists the processes the host started after mark, in the order
// they started. Call it once the command is over: a process counts from
// its fork, and its programs as they run.
func (h *Host) Started(t testing.TB, mark TraceMark) Procs {
	t.Helper()
	h.needTrace(t, "Started")
	f, err := os.Open(h.tracePath)
	if err != nil {
		t.Fatalf("the process trace of %s: %v", h.Addr, err)
	}
	defer f.Close()
	procs, err := parseTrace(bufio.NewReader(f), int64(mark))
	if err != nil {
		t.Fatalf("the process trace of %s (%s): %v", h.Addr, h.tracePath, err)
	}
	return procs
}

func (h *Host) needTrace(t testing.TB, what string) {
	t.Helper()
	if h.tracePath == "" {
		t.Fatalf("Host.%s of %s: the host was not started with Options{TraceProcs: true}", what, h.Addr)
	}
}

// Proc is a process a host started: a fork of its sshd or of a
// descendant, threads left out.
type Proc struct {
	PID, Parent int
	// Forked is the program the parent was running when it forked: what
	// the process runs until it runs a program of its own.
	Forked string
	// Ran are the programs it ran (execve that succeeded), in order:
	// absolute paths. A fork that ran none (a subshell, a pipeline's
	// builtin, sshd's own helpers) has none.
	Ran []string
	// Args are the argument vectors of Ran, as strace printed them.
	Args []string
}

// Procs are the processes a host started for a command.
type Procs []Proc

// Execs is how many programs they ran.
func (ps Procs) Execs() int {
	n := 0
	for _, p := range ps {
		n += len(p.Ran)
	}
	return n
}

// Programs counts them by what they cost the host: each program run counts
// under its base name ("date", "sh"), and each process that ran none under
// the program it was forked from, with " (fork)" ("sh (fork)": a subshell).
func (ps Procs) Programs() map[string]int {
	m := map[string]int{}
	for _, p := range ps {
		if len(p.Ran) == 0 {
			m[filepath.Base(p.Forked)+" (fork)"]++
		}
		for _, r := range p.Ran {
			m[filepath.Base(r)]++
		}
	}
	return m
}

// Top is Programs as one line, the most frequent first: "sh (fork) 5,
// date 3, mkdir 2, ...".
func (ps Procs) Top() string {
	type count struct {
		name string
		n    int
	}
	var cs []count
	for name, n := range ps.Programs() {
		cs = append(cs, count{name, n})
	}
	slices.SortFunc(cs, func(a, b count) int { return cmp.Or(b.n-a.n, strings.Compare(a.name, b.name)) })
	parts := make([]string, len(cs))
	for i, c := range cs {
		parts[i] = c.name + " " + strconv.Itoa(c.n)
	}
	return strings.Join(parts, ", ")
}

// Tree is the processes one a line, indented under their parents, with
// the arguments of what they ran (each cut at 160 bytes): for reading what
// a command does.
func (ps Procs) Tree() string {
	depth := map[int]int{}
	var b strings.Builder
	for _, p := range ps {
		d, ok := depth[p.Parent]
		if ok {
			d++
		}
		depth[p.PID] = d
		fmt.Fprintf(&b, "%s%d", strings.Repeat("  ", d), p.PID)
		if len(p.Ran) == 0 {
			fmt.Fprintf(&b, " (fork of %s)", filepath.Base(p.Forked))
		}
		for _, a := range p.Args {
			if len(a) > 160 {
				a = a[:160] + "..."
			}
			fmt.Fprintf(&b, " %s", a)
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// A trace line is "PID CALL(ARGS) = RESULT", or a call split in two when
// another process's line came in between: "PID CALL(ARGS <unfinished ...>"
// then "PID <... CALL resumed>REST) = RESULT".
var (
	traceLine = regexp.MustCompile(`^(\d+) +(.*)$`)
	resumed   = regexp.MustCompile(`^<\.\.\. (\w+) resumed>(.*)$`)
	result    = regexp.MustCompile(`\) += (-?\d+)(?: .*)?$`)
	execArgs  = regexp.MustCompile(`^execve\("((?:[^"\\]|\\.)*)", (\[.*?\](?:\.\.\.)?)`)
)

// parseTrace reads a strace -f log from its beginning (to know every
// process's program) and returns the processes forked at or after offset,
// with what they ran.
func parseTrace(r *bufio.Reader, offset int64) (Procs, error) {
	type exec struct{ path, args string }
	running := map[int]string{} // pid: the program it runs now
	pending := map[int]string{} // pid: an unfinished call's first half
	index := map[int]int{}      // pid: its place in procs
	early := map[int][]exec{}   // pid: what a child ran before its parent's fork returned
	var procs Procs
	var pos int64
	for {
		line, err := r.ReadString('\n')
		if err != nil { // the end, or a line still being written: not the command's
			break
		}
		at := pos
		pos += int64(len(line))
		m := traceLine.FindStringSubmatch(strings.TrimSuffix(line, "\n"))
		if m == nil {
			return nil, fmt.Errorf("unexpected line %q", line)
		}
		pid, _ := strconv.Atoi(m[1])
		call := m[2]
		if pid == 0 && call == launchLine {
			running = map[int]string{} // a new sshd: its first line is its own execve
			continue
		}
		if first, ok := strings.CutSuffix(call, " <unfinished ...>"); ok {
			pending[pid] = first
			continue
		}
		if rm := resumed.FindStringSubmatch(call); rm != nil {
			first, ok := pending[pid]
			if !ok {
				return nil, fmt.Errorf("%q resumes no call", line)
			}
			delete(pending, pid)
			call = first + rm[2]
		}
		res := result.FindStringSubmatch(call)
		if res == nil {
			continue // a call that did not return: the process ended or was killed
		}
		ret, _ := strconv.Atoi(res[1])
		name, _, _ := strings.Cut(call, "(")
		switch name {
		case "execve":
			em := execArgs.FindStringSubmatch(call)
			if ret != 0 || em == nil {
				continue
			}
			path, err := strconv.Unquote(`"` + em[1] + `"`)
			if err != nil {
				path = em[1]
			}
			if _, known := running[pid]; !known && len(running) > 0 {
				// The child of a fork whose line is still to come.
				early[pid] = append(early[pid], exec{path, em[2]})
				continue
			}
			running[pid] = path
			if i, ok := index[pid]; ok && at >= offset {
				procs[i].Ran = append(procs[i].Ran, path)
				procs[i].Args = append(procs[i].Args, em[2])
			}
		case "fork", "vfork", "clone", "clone3":
			if ret <= 0 || strings.Contains(call, "CLONE_THREAD") {
				continue
			}
			running[ret] = running[pid]
			p := Proc{PID: ret, Parent: pid, Forked: running[pid]}
			for _, e := range early[ret] {
				running[ret] = e.path
				p.Ran, p.Args = append(p.Ran, e.path), append(p.Args, e.args)
			}
			delete(early, ret)
			delete(index, ret)
			if at >= offset {
				index[ret] = len(procs)
				procs = append(procs, p)
			}
		}
	}
	return procs, nil
}
