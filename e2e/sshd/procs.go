package sshd

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// markerVar is set, with the host's directory as value, in the environment
// of every login (through sshd's SetEnv) and of the host's sshd, so that
// cleanup finds whatever a host left running, even orphans. sshd itself
// overwrites its environment with its process title, so sshd processes are
// recognised by their standard error instead: the host's log file.
const markerVar = "HOIST_E2E_HOST"

func marker(dir string) string { return markerVar + "=" + dir }

// hostPIDs lists the processes that belong to the host in dir.
func hostPIDs(dir string) []int {
	env := []byte(marker(dir))
	logPath := filepath.Join(dir, "sshd.log")
	self := os.Getpid()
	names, _ := filepath.Glob("/proc/[0-9]*")
	var pids []int
	for _, name := range names {
		pid, err := strconv.Atoi(filepath.Base(name))
		if err != nil || pid == self {
			continue
		}
		if hasEnv(name, env) || logsTo(name, logPath) {
			pids = append(pids, pid)
		}
	}
	return pids
}

func hasEnv(proc string, entry []byte) bool {
	env, err := os.ReadFile(proc + "/environ")
	if err != nil {
		return false
	}
	for _, kv := range bytes.Split(env, []byte{0}) {
		if bytes.Equal(kv, entry) {
			return true
		}
	}
	return false
}

func logsTo(proc, logPath string) bool {
	for _, fd := range []string{"1", "2"} {
		target, err := os.Readlink(proc + "/fd/" + fd)
		if err == nil && strings.TrimSuffix(target, " (deleted)") == logPath {
			return true
		}
	}
	return false
}

// killHost kills every process of the host in dir and waits, up to
// timeout, until none is left.
func killHost(dir string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		pids := hostPIDs(dir)
		if len(pids) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("processes %v of host %s survived SIGKILL", pids, dir)
		}
		for _, pid := range pids {
			syscall.Kill(pid, syscall.SIGKILL)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// processStart is a process's start time in clock ticks since boot, which
// tells a live process from a later one that reuses its pid.
func processStart(pid int) (string, bool) {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return "", false
	}
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return "", false
	}
	fields := strings.Fields(string(stat[i+1:]))
	// Field 22 of stat; fields[0] here is field 3.
	if len(fields) < 20 {
		return "", false
	}
	return fields[19], true
}

// Host directories live in /tmp rather than $TMPDIR or t.TempDir, which
// may not be traversable by the test users.
const (
	tmpRoot   = "/tmp"
	dirPrefix = "hoist-sshd-"
)

func ownerStamp() string {
	start, _ := processStart(os.Getpid())
	return fmt.Sprintf("%d %s\n", os.Getpid(), start)
}

var sweepOnce sync.Once

// sweepStale removes host directories (and kills the processes) left by
// test processes that died without running their cleanups, for example
// after a test timeout.
func sweepStale() {
	dirs, _ := filepath.Glob(filepath.Join(tmpRoot, dirPrefix+"*"))
	uid := os.Geteuid()
	for _, dir := range dirs {
		info, err := os.Stat(dir)
		if err != nil || !info.IsDir() {
			continue
		}
		if st, ok := info.Sys().(*syscall.Stat_t); !ok || (uid != 0 && int(st.Uid) != uid) {
			continue
		}
		if !ownerGone(dir, info.ModTime()) {
			continue
		}
		if killHost(dir, 5*time.Second) == nil {
			removeAll(dir)
		}
	}
}

func ownerGone(dir string, created time.Time) bool {
	data, err := os.ReadFile(filepath.Join(dir, "owner"))
	if err != nil {
		return time.Since(created) > 10*time.Minute
	}
	var pid int
	var start string
	if _, err := fmt.Sscan(string(data), &pid, &start); err != nil {
		return true
	}
	now, alive := processStart(pid)
	return !alive || now != start
}

// removeAll removes dir even when the tests left read-only directories in
// it (which only matters when not root).
func removeAll(dir string) error {
	if err := os.RemoveAll(dir); err == nil {
		return nil
	}
	filepath.Walk(dir, func(path string, info os.FileInfo, err error) error {
		if err == nil && info.IsDir() {
			os.Chmod(path, 0o700)
		}
		return nil
	})
	return os.RemoveAll(dir)
}
