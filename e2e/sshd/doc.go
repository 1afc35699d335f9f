// Package sshd starts real OpenSSH servers on loopback for hoist's
// end-to-end tests.
//
// Every host is a separate /usr/sbin/sshd listening on 127.0.0.1 with its
// own port, host key, client key, known_hosts file and scratch directory.
// Logins run the login shell of a real user, which runs the script, exactly
// as on a production host. Tests talk to it with hoist itself or, for
// assertions, with Host.SSH, which runs the real ssh client.
//
// # Quick start
//
//	func TestDeploy(t *testing.T) {
//		t.Parallel()
//		h := sshd.Start(t, sshd.Options{})
//		// run hoist against h.Target() with h.KeyFile and h.KnownHosts,
//		// keeping its state under h.Dir
//		out, status := h.SSH(t, "cat "+h.Dir+"/state")
//		...
//	}
//
// Start needs openssh-server and openssh-client; when sshd is missing it
// fails the test (it never skips): run `make test`, which installs them.
// Everything Start creates is removed by t.Cleanup: the sshd processes,
// every process a login left behind (logins carry HOIST_E2E_HOST in their
// environment to be found), the namespaces and the temporary directory. Hosts are independent, so tests may call t.Parallel freely.
//
// # Root and non-root
//
// As root (CI runs the suite as root) a host logs in as a dedicated user
// named after its login shell: hoist-bash (the default), hoist-dash,
// hoist-zsh, hoist-fish, hoist-tcsh, hoist-mksh and hoist-sh (whose login
// shell is /bin/sh). These users are created on first use with useradd,
// unlocked without a password, and kept across runs. Their homes are clean,
// so logins do not read slow rc files. Root itself is never used for
// logins.
//
// Without root, sshd runs unprivileged and can only accept the current
// user: User, Home (from /etc/passwd, as sshd sees it) and the login shell
// are the caller's own, and rc files in that home are read as usual. Options that need root (Shell, Busybox,
// BootNamespace, PIDNamespace, ForeignProc, NoShell, Cgroup) skip the test with the message of
// RequireRoot.
//
// # What is shared and what is not
//
// Hosts share this machine's filesystem, users and kernel. Home is shared
// by every host that uses the same login user, including hosts of tests
// running in parallel, so keep per-test state under Host.Dir, a fresh
// directory owned by User. The script given to Host.SSH is interpreted by
// the login shell, so for fish and tcsh users it must use their syntax;
// `exec /bin/sh -c '...'` works in all of them.
//
// # Busybox hosts
//
// With Options.Busybox the host's sshd runs in its own mount namespace in
// which the file /bin/sh points to is replaced by busybox (a bind mount),
// so /bin/sh is busybox ash there and only there. Busybox applets are
// installed as symlinks in a per-host directory that sshd puts first on
// PATH (SetEnv PATH=DIR:/usr/bin:/bin), so stat, mv, date, sleep and so on
// are busybox's. The login shell is still bash by default; Shell "sh"
// makes it busybox ash. On Debian /bin/sh points to dash, so Shell "dash"
// cannot be combined with Busybox.
//
// Options.NoShell uses the same kind of namespace to make /bin/sh an empty,
// non-executable file on that host only: a host without a usable /bin/sh.
//
// # Boot namespaces and reboots
//
// With Options.BootNamespace the host runs in its own mount and PID
// namespaces, with a fresh /proc and /proc/sys/kernel/random/boot_id
// bind-mounted from a file holding Host.BootID. PID 1 of the namespace is a
// small /bin/sh that mounts these, starts sshd in the background and waits
// for it, reaping orphaned processes meanwhile. Stop kills that PID 1 with
// SIGKILL, so the kernel kills every process of the host, and returns only
// when they are all gone. Reboot does this, writes a new boot id and starts
// the host again on the same port with the same keys: processes are gone,
// files (including Dir and Home) survive, like a power cycle.
//
// Options.PIDNamespace gives a host the same kind of namespaces and PID 1,
// but keeps the machine's real boot_id: two such hosts are two containers on
// one kernel, sharing its boot_id, /etc/machine-id and the filesystem, each
// with its own PID 1. Stop kills every process of the host, as above.
// Options.ForeignProc is the same without a /proc of its own (unshare -p
// --fork without --mount-proc): the host's /proc is the machine's, so $$
// there names another process, or none.
//
// # What a host costs
//
// Options.Cgroup runs the host in a cgroup v2 of its own (a directory
// under hoist-e2e/ in the v2 hierarchy, /sys/fs/cgroup or, on a machine
// with v1 controllers beside it, /sys/fs/cgroup/unified), entered by sshd
// as it starts. Every process the host starts stays in it, whoever reaps
// it, so Host.CPU is the CPU time of sshd, the sessions, the shells and
// their tools, orphans included; Host.Running counts the processes there
// now, and Host.WaitRunning waits for a command's to end before CPU is
// read. It needs root and a writable hierarchy, and skips the test with
// the reason otherwise.
//
// Options.TraceProcs runs sshd under strace -f, which writes a line for
// every fork and every program run to a file in the host's directory.
// Host.TraceMark before a command and Host.Started after it list the
// processes the host started for it, with Procs.Programs counting them by
// program ("date", "sh (fork)" for a subshell). A traced host is slow: time
// and measure the CPU of other hosts.
//
// # Stopping plain hosts
//
// Without BootNamespace, Stop stops the listening sshd only; sessions that
// are already open go on, as with `systemctl restart ssh`. Restart starts it
// again on the same port with the same keys.
//
// # Fault injection
//
// A Proxy is a TCP relay to put between hoist and a host: Cut drops every
// relayed connection at once (both sides see a reset), Freeze stops relaying
// bytes while keeping the sockets open (a silently dead link) and Thaw
// resumes. Host.KnownHostsFor writes a known_hosts file for the proxy's
// address, so host key checking stays strict through the proxy.
//
// # When a test fails
//
// Each host logs sshd's output (LogLevel VERBOSE, including the auth
// decisions of every login) to sshd.log in its directory. When the test has
// failed, cleanup logs the tail of that file and keeps the directory for
// inspection; the next run that uses this package removes directories whose
// test process is gone, after killing whatever they left running.
package sshd
