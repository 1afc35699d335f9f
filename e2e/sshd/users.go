package sshd

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

const rootSkipReason = "needs root (extra users, namespaces): run as root, as CI does"

// RequireRoot skips the test, saying why, unless it runs as root.
func RequireRoot(t testing.TB) {
	t.Helper()
	requireRoot(t, os.Geteuid())
}

func requireRoot(t testing.TB, euid int) {
	t.Helper()
	if euid != 0 {
		t.Skip(rootSkipReason)
	}
}

// loginShells lists the values Options.Shell accepts besides "".
var loginShells = []string{"bash", "dash", "zsh", "fish", "tcsh", "mksh", "sh"}

func validShell(name string) bool {
	for _, s := range loginShells {
		if s == name {
			return true
		}
	}
	return false
}

// account is one line of /etc/passwd.
type account struct {
	name     string
	uid, gid int
	home     string
	shell    string
}

func lookupAccount(match func(account) bool) (account, bool, error) {
	f, err := os.Open("/etc/passwd")
	if err != nil {
		return account{}, false, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Split(sc.Text(), ":")
		if len(fields) != 7 {
			continue
		}
		uid, err1 := strconv.Atoi(fields[2])
		gid, err2 := strconv.Atoi(fields[3])
		if err1 != nil || err2 != nil {
			continue
		}
		a := account{name: fields[0], uid: uid, gid: gid, home: fields[5], shell: fields[6]}
		if match(a) {
			return a, true, nil
		}
	}
	return account{}, false, sc.Err()
}

func accountByName(name string) (account, bool, error) {
	return lookupAccount(func(a account) bool { return a.name == name })
}

// currentAccount describes the user running the tests, for non-root mode.
func currentAccount() (account, error) {
	uid := os.Getuid()
	a, ok, err := lookupAccount(func(a account) bool { return a.uid == uid })
	if err != nil {
		return account{}, fmt.Errorf("reading /etc/passwd: %v", err)
	}
	if !ok {
		return account{}, fmt.Errorf("uid %d is not in /etc/passwd, so sshd cannot log it in", uid)
	}
	if a.home == "" {
		a.home = os.Getenv("HOME")
	}
	return a, nil
}

// shellPath is the absolute path of a login shell binary.
func shellPath(name string) (string, error) {
	if name == "sh" {
		return "/bin/sh", nil
	}
	p, err := exec.LookPath(name)
	if err != nil {
		return "", fmt.Errorf("%s not found: run `make test`, which installs it", name)
	}
	return filepath.Abs(p)
}

const usersLockFile = "/run/hoist-e2e-users.lock"

var (
	usersMu    sync.Mutex
	usersReady = map[string]account{}
)

// ensureUser returns the test user whose login shell is shell ("bash",
// "zsh", ...), creating or repairing it first. It is safe for concurrent
// use within a process (usersMu) and across test processes (a flock).
func ensureUser(shell string) (account, error) {
	usersMu.Lock()
	defer usersMu.Unlock()
	if a, ok := usersReady[shell]; ok {
		return a, nil
	}
	path, err := shellPath(shell)
	if err != nil {
		return account{}, err
	}
	a, err := ensureAccount("hoist-"+shell, path)
	if err != nil {
		return account{}, err
	}
	usersReady[shell] = a
	return a, nil
}

// ensureAccount makes sure user name exists with login shell path, an
// unlocked password and a home directory.
func ensureAccount(name, path string) (account, error) {
	unlock, err := flockFile(usersLockFile)
	if err != nil {
		return account{}, err
	}
	defer unlock()

	if err := listShell(path); err != nil {
		return account{}, err
	}
	a, ok, err := accountByName(name)
	if err != nil {
		return account{}, fmt.Errorf("reading /etc/passwd: %v", err)
	}
	if !ok {
		if err := retry("useradd", "-m", "-s", path, "-c", "hoist e2e test user", name); err != nil {
			if a, ok, _ = accountByName(name); !ok {
				return account{}, err
			}
		}
		if a, ok, err = accountByName(name); !ok {
			return account{}, fmt.Errorf("user %s missing from /etc/passwd after useradd (%v)", name, err)
		}
	}
	if a.shell != path {
		if err := retry("usermod", "-s", path, name); err != nil {
			return account{}, err
		}
		a.shell = path
	}
	if locked, err := passwordLocked(name); err != nil {
		return account{}, err
	} else if locked {
		// sshd without PAM refuses locked accounts; '*' is unlocked
		// yet matches no password.
		if err := retry("usermod", "-p", "*", name); err != nil {
			return account{}, err
		}
	}
	if err := os.MkdirAll(a.home, 0o755); err != nil {
		return account{}, err
	}
	if err := os.Chown(a.home, a.uid, a.gid); err != nil {
		return account{}, err
	}
	return a, nil
}

// retry runs a shadow-utils command, retrying while another process holds
// the password file lock.
func retry(name string, args ...string) error {
	var out []byte
	var err error
	for i := 0; i < 30; i++ {
		out, err = exec.Command(name, args...).CombinedOutput()
		if err == nil {
			return nil
		}
		if !bytes.Contains(out, []byte("lock")) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("%s %s: %v: %s", name, strings.Join(args, " "), err, bytes.TrimSpace(out))
}

func passwordLocked(name string) (bool, error) {
	data, err := os.ReadFile("/etc/shadow")
	if err != nil {
		return false, err
	}
	for _, line := range strings.Split(string(data), "\n") {
		fields := strings.Split(line, ":")
		if len(fields) > 1 && fields[0] == name {
			return fields[1] != "*", nil
		}
	}
	return false, fmt.Errorf("user %s missing from /etc/shadow", name)
}

// listShell adds path to /etc/shells when it is not there yet.
func listShell(path string) error {
	data, err := os.ReadFile("/etc/shells")
	if err != nil && !os.IsNotExist(err) {
		return err
	}
	for _, line := range strings.Split(string(data), "\n") {
		if strings.TrimSpace(line) == path {
			return nil
		}
	}
	f, err := os.OpenFile("/etc/shells", os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	if len(data) > 0 && data[len(data)-1] != '\n' {
		path = "\n" + path
	}
	if _, err := f.WriteString(path + "\n"); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func flockFile(path string) (unlock func(), err error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, fmt.Errorf("locking %s: %v", path, err)
	}
	return func() { f.Close() }, nil
}

// Group makes the login users of hosts members of the group name, created
// if missing, and returns its gid: the deploy group of a store a team
// shares. Root only; the membership counts from the next login. Safe for
// concurrent use, like the users themselves.
func Group(t testing.TB, name string, hosts ...*Host) int {
	t.Helper()
	RequireRoot(t)
	unlock, err := flockFile(usersLockFile)
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	if err := retry("groupadd", "-f", name); err != nil {
		t.Fatal(err)
	}
	for _, h := range hosts {
		if err := retry("usermod", "-a", "-G", name, h.User); err != nil {
			t.Fatal(err)
		}
	}
	data, err := os.ReadFile("/etc/group")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if f := strings.Split(line, ":"); len(f) == 4 && f[0] == name {
			if gid, err := strconv.Atoi(f[2]); err == nil {
				return gid
			}
		}
	}
	t.Fatalf("group %s missing from /etc/group after groupadd", name)
	return -1
}

// InContainer reports whether the tests run inside a container (podman's
// /run/.containerenv, docker's /.dockerenv), which may lack what a machine
// always has: /dev/fuse, kernel threads in /proc, ...
func InContainer() bool {
	for _, f := range []string{"/run/.containerenv", "/.dockerenv"} {
		if _, err := os.Stat(f); err == nil {
			return true
		}
	}
	return false
}

// NeedMachine ends a test whose environment lacks what it needs, saying
// why: on a machine that is a failure (CI is one, and make test installs
// what the tests need); in a container it is a skip, with the reason.
func NeedMachine(t testing.TB, why string) {
	t.Helper()
	if InContainer() {
		t.Skipf("%s: this is a container that lacks it (a machine runs this test)", why)
	}
	t.Fatal(why)
}
