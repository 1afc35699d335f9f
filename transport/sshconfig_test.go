package transport

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestResolveConfigTable: for a table of OpenSSH configurations (aliases,
// wildcards, negation, Include, Match, %-tokens, ProxyJump chains) the
// settings hoist dials with are those ssh itself uses: the host, port and
// user ssh -G prints (the oracle), the identity files with their tokens
// expanded as ssh expands them (TestIdentityFileTokensAsOpenSSH has each
// token), and the proxy.
func TestResolveConfigTable(t *testing.T) {
	if _, err := exec.LookPath("ssh"); err != nil {
		t.Fatal("OpenSSH's ssh is not installed: run make test, which installs openssh-client")
	}
	dir := t.TempDir()
	home, _ := os.UserHomeDir()
	keys := map[string]string{}
	for _, k := range []string{"staging", "k_10.1.2.3_deploy", "internal", "inc"} {
		keys[k] = filepath.Join(dir, k)
		if err := os.WriteFile(keys[k], []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	included := filepath.Join(dir, "included.conf")
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	write("included.conf", "Host fromincl\n  HostName 10.9.9.9\n  IdentityFile "+keys["inc"]+"\n")
	cfg := write("config", `Include `+included+`
Host staging
  HostName 127.0.0.1
  Port 2222
  User deploy
  IdentityFile `+keys["staging"]+`
  IdentityFile `+dir+`/nonexistent
Host tok
  HostName 10.1.2.3
  User deploy
  IdentityFile `+dir+`/k_%h_%r
Host *.internal !secret.internal
  User internal
  IdentityFile `+keys["internal"]+`
Host jumped
  HostName 10.0.0.5
  ProxyJump bastion,deploy@b2:2200
Host piped
  ProxyCommand nc %h %p
Match originalhost matched
  HostName 10.7.7.7
  Port 2207
Match host 10.7.7.7 user root
  User matcheduser
`)
	cases := []struct {
		host, target, user string
		ids                []string
		proxy              string // "", "command", "jump"
	}{
		{"staging", "127.0.0.1:2222", "deploy", []string{keys["staging"], dir + "/nonexistent"}, ""},
		{"tok", "10.1.2.3:22", "deploy", []string{keys["k_10.1.2.3_deploy"]}, ""},
		{"a.internal", "a.internal:22", "internal", []string{keys["internal"]}, ""},
		{"secret.internal", "secret.internal:22", "", nil, ""},
		{"jumped", "10.0.0.5:22", "", nil, "jump"},
		{"piped", "piped:22", "", nil, "command"},
		{"fromincl", "10.9.9.9:22", "", []string{keys["inc"]}, ""},
		{"matched", "10.7.7.7:2207", "", nil, ""},
	}
	for _, c := range cases {
		t.Run(c.host, func(t *testing.T) {
			o := ConfigOptions{File: cfg}
			r, err := ResolveConfig(context.Background(), c.host, o)
			if err != nil {
				t.Fatal(err)
			}
			var got SSHConfig
			if err := r.Apply(&got, c.host, o); err != nil {
				t.Fatal(err)
			}
			// The oracle: ssh -G itself.
			out, err := exec.Command("ssh", "-G", "-F", cfg, c.host).Output()
			if err != nil {
				t.Fatal(err)
			}
			oracle := map[string]string{}
			for _, l := range strings.Split(string(out), "\n") {
				if k, v, ok := strings.Cut(l, " "); ok {
					if _, seen := oracle[k]; !seen {
						oracle[k] = v
					}
				}
			}
			if want := oracle["hostname"] + ":" + oracle["port"]; got.Target != want || got.Target != c.target {
				t.Errorf("target %q, ssh -G says %q, want %q", got.Target, want, c.target)
			}
			if got.User != oracle["user"] {
				t.Errorf("user %q, ssh -G says %q", got.User, oracle["user"])
			}
			if c.user != "" && got.User != c.user {
				t.Errorf("user %q, want %q", got.User, c.user)
			}
			if c.ids != nil && strings.Join(got.ConfigIdentityFiles, ",") != strings.Join(c.ids, ",") {
				t.Errorf("identity files %q, want %q (all of them, tokens expanded)", got.ConfigIdentityFiles, c.ids)
			}
			for _, f := range got.ConfigIdentityFiles {
				if strings.Contains(f, "%") || strings.HasPrefix(f, "~") || !strings.HasPrefix(f, "/") {
					t.Errorf("identity file %q is not expanded (home %s)", f, home)
				}
			}
			if (got.Dialer != nil) != (c.proxy != "") {
				t.Errorf("proxy dialer set %v, want %q", got.Dialer != nil, c.proxy)
			}
		})
	}
}

// TestResolveConfigErrors: ssh refuses a configuration, and the error says
// so in one line naming the host.
func TestResolveConfigErrors(t *testing.T) {
	f := filepath.Join(t.TempDir(), "config")
	if err := os.WriteFile(f, []byte("Host x\n  NoSuchKeyword yes\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := ResolveConfig(context.Background(), "x", ConfigOptions{File: f})
	if err == nil || !strings.Contains(err.Error(), "OpenSSH configuration for x") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("want one line naming the host, got %v", err)
	}
	if _, err := ResolveConfig(context.Background(), "-oProxyCommand=x", ConfigOptions{}); err == nil {
		t.Fatal("a host that starts with - must be refused")
	}
}

// TestResolveTargetRefusesShellCharacters: %h, %n and %r reach ProxyCommand,
// which a shell runs on this machine: a crafted target (from a hosts file)
// must not run anything there.
func TestResolveTargetRefusesShellCharacters(t *testing.T) {
	dir := t.TempDir()
	mark := filepath.Join(dir, "ran")
	cfg := filepath.Join(dir, "config")
	if err := os.WriteFile(cfg, []byte("Host *\n  ProxyCommand true %h %r\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, target := range []string{"x;touch " + mark, "a$(touch " + mark + ")b", "u`touch " + mark + "`@host",
		"host'x", "ho st", "-oProxyCommand=touch", "u;x@host"} {
		var c SSHConfig
		err := ResolveTarget(context.Background(), target, ConfigOptions{File: cfg}, &c)
		if err == nil {
			t.Errorf("%q: resolved, want it refused", target)
		}
	}
	if _, err := os.Stat(mark); err == nil {
		t.Fatal("a target ran a command on this machine")
	}
	var c SSHConfig
	if err := ResolveTarget(context.Background(), "deploy@web-1.example.com:2222", ConfigOptions{File: cfg}, &c); err != nil {
		t.Fatalf("a plain target: %v", err)
	}
	if err := ResolveTarget(context.Background(), "[::1]:2222", ConfigOptions{File: cfg}, &c); err != nil {
		t.Fatalf("an IPv6 target: %v", err)
	}
}

// TestResolveTargetTakesUserNamesSSHTakes: a user name ssh accepts on its
// command line (DOMAIN\user, a space inside) is accepted, and means what
// ssh -G says; those ssh refuses stay refused
// (TestResolveTargetRefusesShellCharacters).
func TestResolveTargetTakesUserNamesSSHTakes(t *testing.T) {
	for _, c := range []struct {
		target, login string
	}{
		{`DOMAIN\user@host`, ""},
		{"host", `DOMAIN\user`},
		{"first last@host", ""},
		{"user$name@host", ""},
		{"host", "o'brien"}, // refused by both
		{"host", `trailing\`},
		{"a -b@host", ""},
	} {
		args := []string{"-G", "-F", "none"}
		if c.login != "" {
			args = append(args, "-l", c.login)
		}
		out, sshErr := exec.Command("ssh", append(args, c.target)...).CombinedOutput()
		var got SSHConfig
		err := ResolveTarget(context.Background(), c.target, ConfigOptions{File: "none", User: c.login}, &got)
		if sshErr != nil || strings.Contains(c.login+c.target, "'") || strings.HasSuffix(c.login, `\`) || strings.Contains(c.target, " -") {
			// OpenSSH 9.2 takes any user name; newer releases refuse
			// these (ssh_valid_ruser), and so does hoist.
			if err == nil {
				t.Errorf("%q -l %q: taken, want it refused as OpenSSH refuses it", c.target, c.login)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q -l %q: %v; ssh takes it", c.target, c.login, err)
			continue
		}
		if want := "user " + got.User + "\n"; !strings.Contains(string(out), want) {
			t.Errorf("%q -l %q: user %q; ssh -G says:\n%s", c.target, c.login, got.User, out)
		}
	}
}

// TestServerAliveIntervalZeroTurnsKeepalivesOff: -o ServerAliveInterval=0
// turns keepalives off, as in ssh; an interval the configuration gives is
// used; with none, hoist keeps alive every 15 s (OpenSSH's default of 0,
// which ssh -G prints, cannot be told from a 0 in a file).
func TestServerAliveIntervalZeroTurnsKeepalivesOff(t *testing.T) {
	f := filepath.Join(t.TempDir(), "config")
	if err := os.WriteFile(f, []byte("Host *\n  ServerAliveInterval 7\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		file string
		opts []string
		want time.Duration
	}{
		{"none", []string{"ServerAliveInterval=0"}, -1},
		{f, []string{"ServerAliveInterval=0"}, -1},
		{f, nil, 7 * time.Second},
		{f, []string{"ServerAliveInterval=3"}, 3 * time.Second},
		{"none", nil, defaultKeepaliveInterval},
	} {
		var cfg SSHConfig
		if err := ResolveTarget(context.Background(), "host", ConfigOptions{File: c.file, Options: c.opts}, &cfg); err != nil {
			t.Fatal(err)
		}
		if cfg, _ = cfg.withDefaults(); cfg.KeepaliveInterval != c.want {
			t.Errorf("-F %s -o %q: keepalive interval %v, want %v", c.file, c.opts, cfg.KeepaliveInterval, c.want)
		}
	}
}
