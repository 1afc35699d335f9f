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

	"github.com/hoistdev/hoist/e2e/internal/harness"
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

// dirPrefix names the host directories in harness.Root.
const dirPrefix = "hoist-sshd-"

var sweepOnce sync.Once

// sweepStale removes host directories (and kills the processes) left by
// test processes that died without running their cleanups, for example
// after a test timeout.
func sweepStale() {
	harness.Sweep(dirPrefix, func(dir string) error {
		if err := killHost(dir, 5*time.Second); err != nil {
			return err
		}
		return removeCgroup(dir)
	})
}
