package e2e

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hoistdev/hoist/e2e/sshd"
	"github.com/hoistdev/hoist/transport"
)

// The OpenSSH configuration: hoist reaches every host ssh reaches, with the
// same configuration (aliases, HostName, Port, User, IdentityFile,
// ProxyJump, ProxyCommand, -F, -J, -p, -l), against real sshd hosts.

// sshConfigCLI is a CLI with no target flags of its own: the
// configuration file says everything.
func sshConfigCLI(t *testing.T, cfg string, root string) *cli {
	return &cli{t: t, home: t.TempDir(), flags: []string{"-F", cfg, "--root", root}}
}

// hostBlock is a Host block that reaches h as alias.
func hostBlock(alias string, h *sshd.Host, extra ...string) string {
	lines := []string{"Host " + alias, "  HostName 127.0.0.1", fmt.Sprintf("  Port %d", h.Port), "  User " + h.User,
		"  IdentityFile " + h.KeyFile, "  IdentitiesOnly yes", "  UserKnownHostsFile " + h.KnownHosts}
	for _, e := range extra {
		lines = append(lines, "  "+e)
	}
	return strings.Join(lines, "\n") + "\n"
}

func writeConfig(t *testing.T, blocks ...string) string {
	t.Helper()
	f := filepath.Join(t.TempDir(), "ssh_config")
	if err := os.WriteFile(f, []byte(strings.Join(blocks, "\n")), 0o600); err != nil {
		t.Fatal(err)
	}
	return f
}

// accepted counts the logins the host's sshd has accepted so far.
func accepted(t *testing.T, h *sshd.Host) int {
	t.Helper()
	logs, _ := filepath.Glob(filepath.Join(filepath.Dir(h.KnownHosts), "sshd.log"))
	n := 0
	for _, l := range logs {
		data, _ := os.ReadFile(l)
		n += strings.Count(string(data), "Accepted publickey")
	}
	return n
}

// TestSSHConfigAlias: an alias with HostName, Port, User and IdentityFile
// reaches the host; messages name the alias.
func TestSSHConfigAlias(t *testing.T) {
	t.Parallel()
	h := sshd.Start(t, sshd.Options{})
	cfg := writeConfig(t, hostBlock("staging", h))
	c := sshConfigCLI(t, cfg, filepath.Join(h.Dir, "store"))
	r := c.run("-H", "staging", "run", "--", "sh", "-c", "echo on-$(id -un)")
	if r.code != 0 || r.stdout != "on-"+h.User+"\n" {
		t.Fatalf("run through the alias: %s", r)
	}
	r = c.run("-H", "staging", "lock", "status")
	if r.code != 0 || !strings.HasPrefix(r.stdout, "staging: free") {
		t.Fatalf("status names the alias: %s", r)
	}
	// -p and -l on the command line, as ssh takes them, for a host the
	// configuration does not name.
	plain := writeConfig(t, "Host *\n  IdentityFile "+h.KeyFile+"\n  UserKnownHostsFile "+h.KnownHosts+"\n")
	c = sshConfigCLI(t, plain, filepath.Join(h.Dir, "store"))
	if r := c.run("-H", "127.0.0.1", "-p", fmt.Sprint(h.Port), "-l", h.User, "lock", "status"); r.code != 0 {
		t.Fatalf("-p and -l: %s", r)
	}
	// A configuration OpenSSH refuses is an error in one line naming the host.
	bad := writeConfig(t, "Host x\n  NoSuchKeyword yes\n")
	r = sshConfigCLI(t, bad, filepath.Join(h.Dir, "store")).run("-H", "x", "lock", "status")
	if r.code == 0 || !strings.Contains(r.stderr, "OpenSSH configuration for x") || strings.Count(strings.TrimSpace(r.stderr), "\n") > 0 {
		t.Fatalf("a bad configuration: want one line naming it: %s", r)
	}
}

// TestSSHConfigProxyJump: the alias behind a ProxyJump through a second
// sshd (the bastion logs the login), then -J on the command line, then a
// ProxyCommand (ssh -W through the bastion).
func TestSSHConfigProxyJump(t *testing.T) {
	t.Parallel()
	target := sshd.Start(t, sshd.Options{})
	bastion := sshd.Start(t, sshd.Options{})
	root := filepath.Join(target.Dir, "store")
	for _, tc := range []struct {
		name  string
		cfg   string
		flags []string
	}{
		{"ProxyJump", writeConfig(t, hostBlock("app", target, "ProxyJump bastion"), hostBlock("bastion", bastion)), nil},
		{"-J", writeConfig(t, hostBlock("app", target), hostBlock("bastion", bastion)), []string{"-J", "bastion"}},
		{"ProxyCommand", "", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := tc.cfg
			if tc.name == "ProxyCommand" {
				// ssh itself relays through the bastion, with this same file.
				cfg = filepath.Join(t.TempDir(), "ssh_config")
				body := hostBlock("app", target, "ProxyCommand ssh -F "+cfg+" -W %h:%p bastion") +
					hostBlock("bastion", bastion, "BatchMode yes")
				if err := os.WriteFile(cfg, []byte(body), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			before := accepted(t, bastion)
			c := sshConfigCLI(t, cfg, root)
			c.flags = append(c.flags, tc.flags...)
			r := c.run("-H", "app", "run", "--", "sh", "-c", "echo through")
			if r.code != 0 || r.stdout != "through\n" {
				t.Fatalf("run through %s: %s", tc.name, r)
			}
			waitFor(t, 5*time.Second, "the bastion logs the login", func() bool { return accepted(t, bastion) > before })
		})
	}
}

// TestSSHConfigKnownHosts: host keys as the configuration says, on a real
// sshd: a key only in the GlobalKnownHostsFile is accepted;
// StrictHostKeyChecking accept-new with HashKnownHosts records a hashed
// line that the next connection finds; a changed key is refused, with the
// fingerprints and the ssh-keygen -R line; StrictHostKeyChecking no warns.
func TestSSHConfigKnownHosts(t *testing.T) {
	t.Parallel()
	h := sshd.Start(t, sshd.Options{})
	root := filepath.Join(h.Dir, "store")
	dir := t.TempDir()
	block := func(extra ...string) string {
		lines := []string{"Host box", "  HostName 127.0.0.1", fmt.Sprintf("  Port %d", h.Port), "  User " + h.User,
			"  IdentityFile " + h.KeyFile, "  IdentitiesOnly yes"}
		return strings.Join(append(lines, extra...), "\n") + "\n"
	}
	global, _ := os.ReadFile(h.KnownHosts)
	globalFile := filepath.Join(dir, "global_known_hosts")
	if err := os.WriteFile(globalFile, global, 0o644); err != nil {
		t.Fatal(err)
	}
	empty := filepath.Join(dir, "empty_known_hosts")
	cfg := writeConfig(t, block("  UserKnownHostsFile "+empty, "  GlobalKnownHostsFile "+globalFile))
	if r := sshConfigCLI(t, cfg, root).run("-H", "box", "lock", "status"); r.code != 0 {
		t.Fatalf("a key only in the global known_hosts: %s", r)
	}
	if exists(empty) {
		t.Fatal("a key found in the global file must not be recorded in the user's")
	}

	hashed := filepath.Join(dir, "hashed_known_hosts")
	cfg = writeConfig(t, block("  UserKnownHostsFile "+hashed, "  GlobalKnownHostsFile /dev/null",
		"  StrictHostKeyChecking accept-new", "  HashKnownHosts yes"))
	if r := sshConfigCLI(t, cfg, root).run("-H", "box", "lock", "status"); r.code != 0 {
		t.Fatalf("accept-new: %s", r)
	}
	data, _ := os.ReadFile(hashed)
	if !strings.HasPrefix(string(data), "|1|") || strings.Contains(string(data), "127.0.0.1") {
		t.Fatalf("HashKnownHosts: want one hashed line, got %q", data)
	}
	// The hashed line is found: strict checking now passes.
	cfg = writeConfig(t, block("  UserKnownHostsFile "+hashed, "  GlobalKnownHostsFile /dev/null", "  StrictHostKeyChecking yes"))
	if r := sshConfigCLI(t, cfg, root).run("-H", "box", "lock", "status"); r.code != 0 {
		t.Fatalf("the hashed line must be found: %s", r)
	}

	// Another key for the host: refused, with the fingerprints and the fix.
	changed := filepath.Join(dir, "changed_known_hosts")
	other := fmt.Sprintf("[127.0.0.1]:%d ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIHXJ9lXTQ1R4XkXXwS8Yz0l1h5c8b0Jh0Q5bT0Q1a2b3\n", h.Port)
	if err := os.WriteFile(changed, []byte(other), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg = writeConfig(t, block("  UserKnownHostsFile "+changed, "  GlobalKnownHostsFile /dev/null", "  StrictHostKeyChecking no"))
	r := sshConfigCLI(t, cfg, root).run("-H", "box", "lock", "status")
	if r.code == 0 || !strings.Contains(r.stderr, "ssh-keygen -R") || !strings.Contains(r.stderr, "SHA256:") {
		t.Fatalf("a changed key must be refused, even with StrictHostKeyChecking no: %s", r)
	}

	// StrictHostKeyChecking no: an unknown key is accepted, loudly.
	cfg = writeConfig(t, block("  UserKnownHostsFile "+filepath.Join(dir, "none_known_hosts"), "  GlobalKnownHostsFile /dev/null",
		"  StrictHostKeyChecking no"))
	r = sshConfigCLI(t, cfg, root).run("-H", "box", "-q", "lock", "status")
	if r.code != 0 || !strings.Contains(r.stderr, "WARNING: StrictHostKeyChecking no") {
		t.Fatalf("StrictHostKeyChecking no: want it connected with a warning: %s", r)
	}
}

// TestSSHConfigCommandLinePrecedence: the first of -l, -o User= and a
// target's user@ given wins, and so of -p, -o Port= and a target's port, as
// in ssh: each command line is tried with the real ssh and with hoist, in
// the same order, against a real sshd, and both reach the host or neither.
func TestSSHConfigCommandLinePrecedence(t *testing.T) {
	t.Parallel()
	h := sshd.Start(t, sshd.Options{})
	cfg := writeConfig(t, "Host *\n  IdentityFile "+h.KeyFile+"\n  IdentitiesOnly yes\n  UserKnownHostsFile "+h.KnownHosts+
		"\n  GlobalKnownHostsFile /dev/null\n  BatchMode yes\n  IdentityAgent none\n")
	right := h.User + "@127.0.0.1:" + fmt.Sprint(h.Port)
	closed := fmt.Sprint(closedPort(t))
	c := sshConfigCLI(t, cfg, filepath.Join(h.Dir, "store"))
	for _, args := range [][]string{
		{"-l", "hoist-nobody", "-H", right},
		{"-H", right, "-l", "hoist-nobody"},
		{"-o", "User=hoist-nobody", "-H", right, "-l", h.User},
		{"-l", h.User, "-o", "User=hoist-nobody", "-H", "127.0.0.1:" + fmt.Sprint(h.Port)},
		{"-p", closed, "-H", right},
		{"-H", right, "-p", closed},
		{"-o", "Port=" + closed, "-p", fmt.Sprint(h.Port), "-H", h.User + "@127.0.0.1"},
		{"-p", fmt.Sprint(h.Port), "-o", "Port=" + closed, "-H", h.User + "@127.0.0.1"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			// ssh takes the target where -H stands, as ssh://.
			var sshArgs []string
			for i := 0; i < len(args); i++ {
				if args[i] == "-H" {
					i++
					sshArgs = append(sshArgs, "ssh://"+args[i])
					continue
				}
				sshArgs = append(sshArgs, args[i])
			}
			ssh := exec.Command("ssh", append(append([]string{"-F", cfg}, sshArgs...), "true")...)
			sshOut, sshErr := ssh.CombinedOutput()
			r := c.run(append(args, "lock", "status")...)
			if (sshErr == nil) != (r.code == 0) {
				t.Fatalf("ssh %q: %v %s; hoist: %s", sshArgs, sshErr, sshOut, r)
			}
		})
	}
}

// closedPort is a loopback port nothing listens on.
func closedPort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	return port
}

// TestSSHConfigJumpHosts: a jump host that names no port takes its own
// configuration's, however it is written (here [::1]); a jump host that
// fails is named, with what failed, and only an unreachable one is said to
// need its sshd checked; a ProxyJump loop between aliases is reported as
// one. The real ssh, with the same configuration, reaches the host or fails
// alike.
func TestSSHConfigJumpHosts(t *testing.T) {
	t.Parallel()
	target := sshd.Start(t, sshd.Options{})
	bastion := sshd.Start(t, sshd.Options{})
	v6 := sshd.NewProxyOn(t, "[::1]:0", bastion.Addr).Addr
	_, v6port, _ := net.SplitHostPort(v6)
	v6known := bastion.KnownHostsFor(t, v6)
	root := filepath.Join(target.Dir, "store")
	stranger := filepath.Join(t.TempDir(), "stranger")
	if out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", stranger).CombinedOutput(); err != nil {
		t.Fatalf("ssh-keygen: %v %s", err, out)
	}
	empty := filepath.Join(t.TempDir(), "known_hosts")
	closed := closedPort(t)
	// hop is a block for the bastion under another name and settings.
	hop := func(name string, extra ...string) string {
		lines := []string{"Host " + name, "  HostName 127.0.0.1", fmt.Sprintf("  Port %d", bastion.Port), "  User " + bastion.User}
		if !strings.Contains(strings.Join(extra, "\n"), "IdentityFile") {
			lines = append(lines, "  IdentityFile "+bastion.KeyFile)
		}
		return strings.Join(append(lines, extra...), "\n") + "\n"
	}
	defaults := "Host *\n  IdentitiesOnly yes\n  UserKnownHostsFile " + bastion.KnownHosts +
		"\n  GlobalKnownHostsFile /dev/null\n  BatchMode yes\n  IdentityAgent none\n"
	for _, tc := range []struct {
		name, config string
		ok           bool
		want         []string // in hoist's error
	}{
		{"an IPv6 hop with its port from its own block",
			hostBlock("app", target, "ProxyJump [::1]") + "Host ::1\n  Port " + v6port + "\n  User " + bastion.User +
				"\n  IdentityFile " + bastion.KeyFile + "\n  UserKnownHostsFile " + v6known + "\n" + defaults, true, nil},
		{"a hop that refuses the key",
			hostBlock("app", target, "ProxyJump bastion") + hop("bastion", "  IdentityFile "+stranger) + defaults, false,
			[]string{"jump host bastion: authentication failed for user " + bastion.User}},
		{"a hop with an unknown host key",
			hostBlock("app", target, "ProxyJump bastion") + hop("bastion", "  UserKnownHostsFile "+empty) + defaults, false,
			[]string{"jump host bastion: unknown host key"}},
		{"an unreachable hop",
			hostBlock("app", target, "ProxyJump bastion") + "Host bastion\n  HostName 127.0.0.1\n  Port " + fmt.Sprint(closed) + "\n" + defaults, false,
			[]string{"jump host bastion: cannot connect to 127.0.0.1:" + fmt.Sprint(closed), "sshd is running"}},
		{"a hop that cannot reach the host",
			"Host app\n  HostName 127.0.0.1\n  Port " + fmt.Sprint(closed) + "\n  ProxyJump bastion\n" + hop("bastion") + defaults, false,
			[]string{"jump host bastion cannot reach 127.0.0.1:" + fmt.Sprint(closed), "sshd is running"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := writeConfig(t, tc.config)
			ssh := exec.Command("ssh", "-F", cfg, "app", "true")
			sshOut, sshErr := ssh.CombinedOutput()
			if (sshErr == nil) != tc.ok {
				t.Fatalf("ssh -F %s app: %v %s; want it to succeed: %v", cfg, sshErr, sshOut, tc.ok)
			}
			r := sshConfigCLI(t, cfg, root).run("-H", "app", "lock", "status")
			if tc.ok {
				if r.code != 0 {
					t.Fatalf("ssh reaches app, hoist does not: %s", r)
				}
				return
			}
			oneLine(t, r, 1, "app", tc.want...)
			if !slices.Contains(tc.want, "sshd is running") && strings.Contains(r.stderr, "sshd is running") {
				t.Errorf("a jump host that answered is not to have its sshd checked: %s", r)
			}
		})
	}
	t.Run("a loop", func(t *testing.T) {
		cfg := writeConfig(t, "Host loopa\n  ProxyJump loopb\nHost loopb\n  ProxyJump loopa\n"+defaults)
		r := sshConfigCLI(t, cfg, root).run("-H", "loopa", "lock", "status")
		oneLine(t, r, 1, "loopa", "ProxyJump loop (loopa -> loopb -> loopa)")
	})
}

// TestSSHConfigHostKeyAliasAsOpenSSH: a HostKeyAlias is used as ssh uses
// it, whatever it looks like: a key ssh records under the alias (plain or
// hashed) is the key hoist finds, a key hoist records is the key ssh finds,
// and a known_hosts file with the lines of the other aliases vouches for
// the host to hoist exactly when it does to ssh. Against a real sshd, with
// the real ssh.
func TestSSHConfigHostKeyAliasAsOpenSSH(t *testing.T) {
	t.Parallel()
	h := sshd.Start(t, sshd.Options{})
	dir := t.TempDir()
	block := func(alias, known, strict string, hash bool) string {
		hashed := "no"
		if hash {
			hashed = "yes"
		}
		return writeConfig(t, fmt.Sprintf("Host box\n  HostName 127.0.0.1\n  Port %d\n  User %s\n  IdentityFile %s\n"+
			"  IdentitiesOnly yes\n  IdentityAgent none\n  BatchMode yes\n  GlobalKnownHostsFile /dev/null\n"+
			"  HostKeyAlias %s\n  UserKnownHostsFile %s\n  StrictHostKeyChecking %s\n  HashKnownHosts %s\n",
			h.Port, h.User, h.KeyFile, alias, known, strict, hashed))
	}
	sshReaches := func(cfg string) bool {
		out, err := exec.Command("ssh", "-F", cfg, "box", "true").CombinedOutput()
		t.Logf("ssh: %v %s", err, out)
		return err == nil
	}
	hoistReaches := func(cfg string) (bool, error) {
		c := transport.SSHConfig{NoAgent: true}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := transport.ResolveTarget(ctx, "box", transport.ConfigOptions{File: cfg}, &c); err != nil {
			return false, err
		}
		s, err := transport.DialSSH(ctx, c)
		if err != nil {
			return false, err
		}
		s.Close()
		return true, nil
	}
	aliases := []string{"web-alias", "Web-Alias", "[web]:2222", "web:2222", "[web]:22", "::1", "[::1]:2200", "none"}
	recorded := map[string]string{} // alias: the line ssh recorded
	for i, alias := range aliases {
		for _, hash := range []bool{false, true} {
			name := fmt.Sprintf("%s hashed %v", alias, hash)
			byssh := filepath.Join(dir, fmt.Sprintf("ssh-%d-%v", i, hash))
			if !sshReaches(block(alias, byssh, "accept-new", hash)) {
				t.Fatalf("%s: ssh did not record the key", name)
			}
			if !hash {
				recorded[alias] = readFile(t, byssh)
			}
			if ok, err := hoistReaches(block(alias, byssh, "yes", false)); !ok {
				t.Errorf("%s: hoist does not find the key ssh recorded (%q): %v", name, readFile(t, byssh), err)
			}
			byhoist := filepath.Join(dir, fmt.Sprintf("hoist-%d-%v", i, hash))
			if ok, err := hoistReaches(block(alias, byhoist, "accept-new", hash)); !ok {
				t.Fatalf("%s: hoist did not record the key: %v", name, err)
			}
			if !sshReaches(block(alias, byhoist, "yes", false)) {
				t.Errorf("%s: ssh does not find the key hoist recorded (%q)", name, readFile(t, byhoist))
			}
		}
	}
	// Each alias against the lines ssh recorded for all the others, and
	// patterns with wildcards and a negation.
	patterns := []string{"w?b-al* ", "*:2222,!web:2222 ", "[::1]:22* "}
	for _, alias := range aliases {
		var others []string
		for _, p := range patterns {
			others = append(others, p+h.HostKey+"\n")
		}
		for _, a := range aliases {
			if a != alias {
				others = append(others, recorded[a])
			}
		}
		known := filepath.Join(dir, "others-"+strings.NewReplacer(":", "_", "[", "", "]", "").Replace(alias))
		if err := os.WriteFile(known, []byte(strings.Join(others, "")), 0o600); err != nil {
			t.Fatal(err)
		}
		cfg := block(alias, known, "yes", false)
		want := sshReaches(cfg)
		t.Logf("%s among the others: ssh reaches the host: %v", alias, want)
		if got, err := hoistReaches(cfg); got != want {
			t.Errorf("%s among the others' lines: hoist reaches the host %v (%v), ssh %v", alias, got, err, want)
		}
	}
}

// TestSSHConfigIdentityFileLive: the identity file the configuration names
// with tokens is the one ssh logs in with; one that expands to a missing
// file leaves ssh without a key, and hoist too, though hoist's home holds
// the host's key as a default key (~/.ssh/id_ed25519). Real ssh and hoist,
// the same configuration, a real sshd.
func TestSSHConfigIdentityFileLive(t *testing.T) {
	t.Parallel()
	h := sshd.Start(t, sshd.Options{})
	dir := t.TempDir()
	key, err := os.ReadFile(h.KeyFile)
	if err != nil {
		t.Fatal(err)
	}
	named := filepath.Join(dir, fmt.Sprintf("key_%s_127.0.0.1_%d_box", h.User, h.Port))
	if err := os.WriteFile(named, key, 0o600); err != nil {
		t.Fatal(err)
	}
	c := sshConfigCLI(t, "", filepath.Join(h.Dir, "store"))
	if err := os.MkdirAll(filepath.Join(c.home, ".ssh"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(c.home, ".ssh", "id_ed25519"), key, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		identity string
		ok       bool
	}{
		{dir + "/key_%r_%h_%p_%n", true},
		{dir + "/key_%r_%h_%p_%k_missing", false},
	} {
		cfg := writeConfig(t, fmt.Sprintf("Host box\n  HostName 127.0.0.1\n  Port %d\n  User %s\n  IdentityFile %s\n"+
			"  IdentitiesOnly yes\n  IdentityAgent none\n  BatchMode yes\n  UserKnownHostsFile %s\n  GlobalKnownHostsFile /dev/null\n",
			h.Port, h.User, tc.identity, h.KnownHosts))
		out, sshErr := exec.Command("ssh", "-F", cfg, "box", "true").CombinedOutput()
		if (sshErr == nil) != tc.ok {
			t.Fatalf("IdentityFile %s: ssh %v %s, want it to log in: %v", tc.identity, sshErr, out, tc.ok)
		}
		c.flags = []string{"-F", cfg, "--root", filepath.Join(h.Dir, "store")}
		r := c.run("-H", "box", "lock", "status")
		if (r.code == 0) != tc.ok {
			t.Errorf("IdentityFile %s: ssh logs in: %v; hoist: %s", tc.identity, tc.ok, r)
		}
		if !tc.ok && !strings.Contains(r.stderr, "_missing (no such file)") {
			t.Errorf("the error does not name the missing identity file: %s", r)
		}
	}
}
