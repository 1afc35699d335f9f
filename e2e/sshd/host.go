package sshd

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hoistdev/hoist/e2e/internal/harness"
)

// Options choose what kind of host Start creates.
type Options struct {
	// Shell is the login shell of the test user: "" (bash when root,
	// else the current user's shell unchanged) or, as root only, one of
	// "bash", "dash", "zsh", "fish", "tcsh", "mksh" and "sh" (/bin/sh).
	Shell string
	// Busybox (root only) makes /bin/sh busybox ash on this host and puts
	// a busybox userland first on PATH.
	Busybox bool
	// BootNamespace (root only) runs the host in its own mount and PID
	// namespaces with a fake /proc/sys/kernel/random/boot_id, so that
	// Reboot can restart it with every process gone and a new boot id.
	BootNamespace bool
	// PIDNamespace (root only) runs the host in its own mount and PID
	// namespaces with a fresh /proc but the machine's real boot_id: like a
	// container on this kernel, it shares the boot_id, /etc/machine-id, the
	// users and the filesystem with every other host, and has a PID 1 of its
	// own. Two such hosts are two containers sharing one kernel and a store
	// volume. As with BootNamespace, Stop kills every process of the host.
	// Mounts made outside after Start do not show in the host (its mount
	// namespace is a private copy); files do. Cannot be combined with
	// BootNamespace, which fakes the boot_id.
	PIDNamespace bool
	// ForeignProc (root only) runs the host in its own mount and PID
	// namespaces like PIDNamespace, but keeps the machine's /proc, as
	// `unshare -p --fork` without --mount-proc does: /proc is not the
	// namespace's, so a shell's $$ names another process there, or none.
	// Cannot be combined with PIDNamespace or BootNamespace.
	ForeignProc bool
	// NoShell (root only) makes /bin/sh unusable on this host: the file it
	// points to is replaced by an empty, non-executable one (a bind mount in
	// the host's own mount namespace). The login shell must not be /bin/sh.
	NoShell bool
	// Hide (root only) makes these programs, absolute paths, unusable on
	// this host: each is replaced by an empty, non-executable file (a bind
	// mount in the host's own mount namespace), and a shell looking for
	// it finds none.
	Hide []string
	// MaxSessions is sshd's MaxSessions: the sessions (commands, SFTP)
	// one connection may have open at once; 0 means 64.
	MaxSessions int
	// Tmpfs (root only) mounts a tmpfs of the host's own (mode 1777) at
	// each of these absolute paths, made when missing, in the host's own
	// mount namespace: two such hosts have different directories, and
	// stores, at the same path, as two containers with a volume each.
	Tmpfs []string
	// Cgroup (root, and a writable cgroup v2 hierarchy) runs the host in a
	// cgroup of its own, so that CPU says what its sshd and every process
	// it started have used. Without such a hierarchy the test is skipped.
	Cgroup bool
	// TraceProcs runs the host's sshd under strace (installed by make
	// deps), which records every process the host starts and the programs
	// they run: see TraceMark and Started. It slows the host down: do not
	// time a host that traces.
	TraceProcs bool
}

// Host is a running sshd on 127.0.0.1. Its exported fields are read-only.
type Host struct {
	Addr       string // "127.0.0.1:PORT"
	Port       int
	User       string // login user
	Home       string // User's home directory, shared with other hosts
	Dir        string // per-host scratch directory owned by User, mode 0755
	KeyFile    string // client private key (ed25519, unencrypted, OpenSSH format) authorized for User
	KnownHosts string // known_hosts file listing HostKey for [127.0.0.1]:PORT
	HostKey    string // the host's public key, "ssh-ed25519 AAAA..."
	BootID     string // current fake boot id, with BootNamespace

	t         testing.TB
	opts      Options
	tools     tools
	acct      account
	root      string // the host's directory, holding config, keys and logs
	config    string
	logPath   string
	binDir    string // busybox applets, with Busybox
	bootFile  string // boot id source, with BootNamespace
	cgroup    string // the host's cgroup directory, with Cgroup
	tracePath string // the process trace, with TraceProcs

	mu      sync.Mutex
	running *harness.Process
}

// Start starts a new host for the test and registers its cleanup. It fails
// the test if sshd cannot run and skips it if opts need root and the test
// does not run as root.
func Start(t testing.TB, opts Options) *Host {
	t.Helper()
	if opts.Shell != "" && !validShell(opts.Shell) {
		t.Fatalf("sshd.Options.Shell %q: want \"\" or one of %s", opts.Shell, strings.Join(loginShells, ", "))
	}
	if opts.PIDNamespace && opts.BootNamespace {
		t.Fatalf("sshd.Options: PIDNamespace keeps the machine's boot_id and BootNamespace fakes one; choose one")
	}
	if opts.ForeignProc && (opts.PIDNamespace || opts.BootNamespace) {
		t.Fatalf("sshd.Options: ForeignProc keeps the machine's /proc, which PIDNamespace and BootNamespace replace; choose one")
	}
	if rootOnly(opts) {
		RequireRoot(t)
	}
	tl, err := findTools(opts)
	if err != nil {
		t.Fatal(err)
	}
	if opts.Busybox && opts.Shell != "" && opts.Shell != "sh" {
		if p, err := shellPath(opts.Shell); err == nil {
			if real, _ := filepath.EvalSymlinks(p); real == tl.shTarget {
				t.Fatalf("sshd.Options: Busybox replaces %s (what /bin/sh points to) with busybox, so Shell %q cannot be the login shell; use Shell \"sh\" for busybox ash", real, opts.Shell)
			}
		}
	}
	sweepOnce.Do(sweepStale)

	h := &Host{t: t, opts: opts, tools: tl}
	if os.Geteuid() == 0 {
		if err := os.MkdirAll("/run/sshd", 0o755); err != nil {
			t.Fatalf("creating sshd's privilege separation directory: %v", err)
		}
		shell := opts.Shell
		if shell == "" {
			shell = "bash"
		}
		if h.acct, err = ensureUser(shell); err != nil {
			t.Fatalf("preparing test user hoist-%s: %v", shell, err)
		}
	} else if h.acct, err = currentAccount(); err != nil {
		t.Fatal(err)
	}
	h.User, h.Home = h.acct.name, h.acct.home

	if err := h.makeDir(); err != nil {
		t.Fatalf("creating host directory: %v", err)
	}
	t.Cleanup(h.cleanup)
	if opts.Cgroup {
		if err := h.makeCgroup(); err != nil {
			t.Skipf("sshd.Options.Cgroup: %v", err)
		}
	}
	if err := h.prepare(); err != nil {
		t.Fatalf("preparing host in %s: %v", h.root, err)
	}
	h.startNewPort(t)
	return h
}

// rootOnly reports whether opts need root.
func rootOnly(opts Options) bool {
	return opts.Shell != "" || opts.Cgroup || opts.Busybox || opts.BootNamespace || opts.NoShell || opts.PIDNamespace || opts.ForeignProc || len(opts.Hide) > 0 || len(opts.Tmpfs) > 0
}

// ownPIDs reports whether the host runs in a PID namespace of its own,
// whose PID 1 takes every process of the host with it when killed.
func ownPIDs(opts Options) bool { return opts.BootNamespace || opts.PIDNamespace || opts.ForeignProc }

// Target is "user@127.0.0.1:PORT".
func (h *Host) Target() string { return h.User + "@" + h.Addr }

// Stop stops the host's sshd. With BootNamespace or PIDNamespace it kills
// every process of the host and returns when they are gone; otherwise logins
// already open go on. Stopping a stopped host does nothing.
func (h *Host) Stop() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.running != nil {
		if h.tracePath != "" && !ownPIDs(h.opts) {
			// strace passes a signal on to sshd only as it detaches,
			// which may swallow it: signal sshd, and strace ends with it.
			stopTraced(h.root)
		}
		h.running.Stop(stopSignal(ownPIDs(h.opts)))
		h.running = nil
	}
}

// Restart starts sshd again, after stopping it if it runs, on the same
// port with the same keys. It fails the test given to Start, so call it
// from that test's goroutine.
func (h *Host) Restart() {
	h.t.Helper()
	h.restart(h.t)
}

// Reboot simulates a power cycle of a BootNamespace host: every process of
// the host dies, BootID changes and sshd starts again on the same port.
func (h *Host) Reboot(t testing.TB) {
	t.Helper()
	if !h.opts.BootNamespace {
		t.Fatalf("Reboot of %s: the host was not started with Options{BootNamespace: true}", h.Addr)
	}
	h.Stop()
	id := newBootID()
	if err := writeFileAtomic(h.bootFile, id+"\n", 0o444); err != nil {
		t.Fatalf("Reboot of %s: writing boot id: %v", h.Addr, err)
	}
	h.BootID = id
	h.restart(t)
}

func (h *Host) restart(t testing.TB) {
	t.Helper()
	h.Stop()
	if err := h.launchRetry(); err != nil {
		t.Fatalf("restarting sshd on %s: %v (log: %s)\n%s", h.Addr, err, h.logPath, harness.Tail(h.logPath, 30))
	}
}

// makeDir creates the host directory, mode 0755 so that the test user can
// reach the files in it.
func (h *Host) makeDir() error {
	dir, err := harness.NewDir(dirPrefix)
	h.root = dir
	return err
}

// prepare writes everything but the sshd config: keys, scratch directory,
// busybox applets and boot id.
func (h *Host) prepare() error {
	h.config = filepath.Join(h.root, "sshd_config")
	h.logPath = filepath.Join(h.root, "sshd.log")
	h.KnownHosts = filepath.Join(h.root, "known_hosts")
	h.KeyFile = filepath.Join(h.root, "id_ed25519")
	var err error
	if h.HostKey, err = keygen(h.tools.keygen, filepath.Join(h.root, "ssh_host_ed25519_key")); err != nil {
		return err
	}
	clientKey, err := keygen(h.tools.keygen, h.KeyFile)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(h.root, "authorized_keys"), []byte(clientKey+" hoist-e2e\n"), 0o644); err != nil {
		return err
	}
	h.Dir = filepath.Join(h.root, "scratch")
	if err := os.Mkdir(h.Dir, 0o755); err != nil {
		return err
	}
	if err := os.Chmod(h.Dir, 0o755); err != nil {
		return err
	}
	if err := os.Chown(h.Dir, h.acct.uid, h.acct.gid); err != nil {
		return err
	}
	if h.opts.Busybox {
		h.binDir = filepath.Join(h.root, "busybox-bin")
		if err := os.Mkdir(h.binDir, 0o755); err != nil {
			return err
		}
		out, err := exec.Command(h.tools.busybox, "--install", "-s", h.binDir).CombinedOutput()
		if err != nil {
			return fmt.Errorf("busybox --install -s %s: %v: %s", h.binDir, err, out)
		}
	}
	if h.opts.TraceProcs {
		h.tracePath = filepath.Join(h.root, "procs.trace")
	}
	if h.opts.BootNamespace {
		h.bootFile = filepath.Join(h.root, "boot_id")
		h.BootID = newBootID()
		if err := writeFileAtomic(h.bootFile, h.BootID+"\n", 0o444); err != nil {
			return err
		}
	}
	return nil
}

// setPort points the host, its config and its known_hosts file at port.
func (h *Host) setPort(port int) error {
	h.Port = port
	h.Addr = "127.0.0.1:" + strconv.Itoa(port)
	if err := writeKnownHosts(h.KnownHosts, h.Addr, h.HostKey); err != nil {
		return err
	}
	return os.WriteFile(h.config, []byte(h.sshdConfig()), 0o644)
}

func (h *Host) cleanup() {
	failed := h.t.Failed()
	if failed {
		h.t.Logf("sshd on %s (user %s), log %s, last lines:\n%s", h.Addr, h.User, h.logPath, harness.Tail(h.logPath, 40))
	}
	h.Stop()
	if err := killHost(h.root, 10*time.Second); err != nil {
		h.t.Errorf("cleaning up host %s: %v", h.Addr, err)
	}
	if h.cgroup != "" {
		if err := removeCgroup(h.root); err != nil {
			h.t.Errorf("cleaning up host %s: %v", h.Addr, err)
		}
	}
	if failed {
		h.t.Logf("kept %s for inspection; a later test run removes it", h.root)
		return
	}
	if err := harness.RemoveAll(h.root); err != nil {
		h.t.Errorf("cleaning up host %s: %v", h.Addr, err)
	}
}

func writeFileAtomic(path, content string, mode os.FileMode) error {
	tmp := path + ".new"
	os.Remove(tmp)
	if err := os.WriteFile(tmp, []byte(content), mode); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
