package sshd

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// cgroupParent holds the hosts' cgroups, in the cgroup v2 hierarchy.
const cgroupParent = "hoist-e2e"

// cgroup2Mount is where this machine mounts the cgroup v2 hierarchy:
// /sys/fs/cgroup on a unified machine, /sys/fs/cgroup/unified on a hybrid
// one (v1 controllers beside it). The base CPU statistics of cpu.stat are
// kept for every v2 cgroup, whichever hierarchy the cpu controller is on.
func cgroup2Mount() (string, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return "", err
	}
	defer f.Close()
	// mountinfoSep ends a mountinfo line's optional tags.
	const mountinfoSep = "-"
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTIONS [TAGS...] - FSTYPE SOURCE SUPER
		fields := strings.Fields(sc.Text())
		for i, f := range fields {
			if f == mountinfoSep && i+1 < len(fields) && i > 4 {
				if fields[i+1] == "cgroup2" {
					return fields[4], nil
				}
				break
			}
		}
	}
	if err := sc.Err(); err != nil {
		return "", err
	}
	return "", errors.New("no cgroup v2 hierarchy is mounted (mount -t cgroup2 none /sys/fs/cgroup/unified)")
}

// makeCgroup creates the host's cgroup, named after its directory.
func (h *Host) makeCgroup() error {
	mnt, err := cgroup2Mount()
	if err != nil {
		return err
	}
	parent := filepath.Join(mnt, cgroupParent)
	if err := os.Mkdir(parent, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
		return fmt.Errorf("the cgroup v2 hierarchy at %s is not writable here: %v", mnt, err)
	}
	h.cgroup = filepath.Join(parent, filepath.Base(h.root))
	return os.Mkdir(h.cgroup, 0o755)
}

// removeCgroup removes the cgroup of the host whose directory is dir, once
// its processes are gone (a cgroup with members cannot be removed).
func removeCgroup(dir string) error {
	mnt, err := cgroup2Mount()
	if err != nil {
		return nil
	}
	cg := filepath.Join(mnt, cgroupParent, filepath.Base(dir))
	deadline := time.Now().Add(5 * time.Second)
	for {
		err := os.Remove(cg)
		if err == nil || errors.Is(err, os.ErrNotExist) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("removing cgroup %s: %v", cg, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// CPU is the CPU time that every process of the host has used since Start:
// the listening sshd, each connection's sshd, the login shells and
// everything they ran, those that have ended included. It needs
// Options.Cgroup. Processes still running count with what they used so far:
// to account for a command in full, wait for them to end (WaitRunning).
func (h *Host) CPU(t testing.TB) time.Duration {
	t.Helper()
	h.needCgroup(t, "CPU")
	data, err := os.ReadFile(filepath.Join(h.cgroup, "cpu.stat"))
	if err != nil {
		t.Fatalf("reading the CPU time of host %s: %v", h.Addr, err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "usage_usec "); ok {
			us, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				break
			}
			return time.Duration(us) * time.Microsecond
		}
	}
	t.Fatalf("no usage_usec in %s/cpu.stat:\n%s", h.cgroup, data)
	return 0
}

// Running is the number of processes the host has now (its cgroup's
// members). It needs Options.Cgroup.
func (h *Host) Running(t testing.TB) int {
	t.Helper()
	h.needCgroup(t, "Running")
	data, err := os.ReadFile(filepath.Join(h.cgroup, "cgroup.procs"))
	if err != nil {
		t.Fatalf("reading the processes of host %s: %v", h.Addr, err)
	}
	return len(strings.Fields(string(data)))
}

// WaitRunning waits until the host has at most n processes, as it had before
// a command whose processes (a connection's sshd ending after the client
// left, say) must be gone before CPU accounts for all of it. It fails the
// test after 10 s.
func (h *Host) WaitRunning(t testing.TB, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for h.Running(t) > n {
		if time.Now().After(deadline) {
			t.Fatalf("host %s still has %d processes after 10 s, want at most %d", h.Addr, h.Running(t), n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func (h *Host) needCgroup(t testing.TB, what string) {
	t.Helper()
	if h.cgroup == "" {
		t.Fatalf("Host.%s of %s: the host was not started with Options{Cgroup: true}", what, h.Addr)
	}
}
