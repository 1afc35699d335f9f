// Package harness is the plumbing the e2e harness packages (sshd,
// registry) share: scratch directories that outlive a crashed test run
// only until the next run, program lookup and log reading.
package harness

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// Root holds the scratch directories: /tmp rather than $TMPDIR or
// t.TempDir, which may not be traversable by the test users.
const Root = "/tmp"

// NewDir creates a scratch directory Root/PREFIX..., mode 0755 so that
// test users reach the files in it, stamped with this process as its
// owner for Sweep.
func NewDir(prefix string) (string, error) {
	dir, err := os.MkdirTemp(Root, prefix)
	if err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(dir, "owner"), []byte(ownerStamp()), 0o644); err != nil {
		return "", err
	}
	return dir, os.Chmod(dir, 0o755)
}

// Sweep removes the scratch directories made with prefix by test processes
// that died without running their cleanups (after a test timeout, say),
// once kill, if not nil, has ended what each left running.
func Sweep(prefix string, kill func(dir string) error) {
	dirs, _ := filepath.Glob(filepath.Join(Root, prefix+"*"))
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
		if kill == nil || kill(dir) == nil {
			RemoveAll(dir)
		}
	}
}

func ownerStamp() string {
	start, _ := processStart(os.Getpid())
	return fmt.Sprintf("%d %s\n", os.Getpid(), start)
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

// RemoveAll removes dir even when the tests left read-only directories in
// it (which only matters when not root).
func RemoveAll(dir string) error {
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

// FindProgram looks name up in PATH, then at the given absolute paths
// (sbin directories are often missing from non-root PATHs).
func FindProgram(name string, fallbacks ...string) (string, error) {
	if p, err := exec.LookPath(name); err == nil {
		return filepath.Abs(p)
	}
	for _, p := range fallbacks {
		if info, err := os.Stat(p); err == nil && info.Mode().IsRegular() && info.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s not found", name)
}

// ReadFrom returns the file at path from offset on, or "" when it cannot
// be read.
func ReadFrom(path string, offset int64) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	if _, err := f.Seek(offset, io.SeekStart); err != nil {
		return ""
	}
	data, _ := io.ReadAll(f)
	return string(data)
}

// Tail returns the last n lines of the file at path.
func Tail(path string, n int) string {
	lines := strings.Split(strings.TrimRight(ReadFrom(path, 0), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// Process is a server a harness started, its output appended to a log.
type Process struct {
	Cmd  *exec.Cmd
	Done chan struct{} // closed once Cmd has been waited for
}

// Start appends banner (unless "") to the log at logPath, then starts cmd
// with its standard output and error appended there too. It returns the
// log's size before the banner: where this run's lines begin, for ReadFrom.
func Start(cmd *exec.Cmd, logPath, banner string) (*Process, int64, error) {
	logf, err := os.OpenFile(logPath, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, 0, err
	}
	offset, err := logf.Seek(0, io.SeekEnd)
	if err != nil {
		logf.Close()
		return nil, 0, err
	}
	if banner != "" {
		fmt.Fprintln(logf, banner)
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	err = cmd.Start()
	logf.Close()
	if err != nil {
		return nil, 0, fmt.Errorf("starting %s: %v", cmd.Path, err)
	}
	p := &Process{Cmd: cmd, Done: make(chan struct{})}
	go func() {
		cmd.Wait()
		close(p.Done)
	}()
	return p, offset, nil
}

// Stop sends sig to the process and returns once it has ended, killing it
// if it is still there 5 s later.
func (p *Process) Stop(sig syscall.Signal) {
	p.Cmd.Process.Signal(sig)
	select {
	case <-p.Done:
	case <-time.After(5 * time.Second):
		p.Cmd.Process.Kill()
		<-p.Done
	}
}
