package transport

import (
	"bytes"
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// The oracle for everything hoist makes of an OpenSSH configuration after
// ssh -G: OpenSSH's own ssh, run far enough to show it. With -v, ssh logs
// each identity and certificate file it reads, expanded ("identity file X
// type N"), and each proxy command it runs, expanded ("Executing proxy
// command: exec ..."), which for a ProxyJump is an ssh -W to the hop with
// -l and -p only when the chain names them. No network is used: the
// proxies are true and false.

// sshSays is what the real ssh did with a configuration.
type sshSays struct {
	identities   []string // identity files read, in order (not the -cert files ssh adds)
	certificates []string // certificate files read
	proxies      []string // commands run, "exec ..."; a ProxyJump's from the last hop to the first
	refused      bool     // ssh refused the configuration before it had a connection
	log          string
}

var (
	identityLine = regexp.MustCompile(`(?m)^debug1: identity file (.*) type -?\d+$`)
	certLine     = regexp.MustCompile(`(?m)^debug1: certificate file (.*) type -?\d+$`)
	proxyLine    = regexp.MustCompile(`(?m)^debug1: Executing proxy command: (.*)$`)
)

// askOpenSSH runs ssh -v -F cfg args... true, where args end with the
// destination.
func askOpenSSH(t *testing.T, cfg string, args ...string) sshSays {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	argv := append([]string{"-v", "-F", cfg, "-o", "BatchMode=yes", "-o", "GlobalKnownHostsFile=/dev/null",
		"-o", "UserKnownHostsFile=/dev/null"}, args...)
	cmd := exec.CommandContext(ctx, "ssh", append(argv, "true")...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	_ = cmd.Run()
	log := strings.ReplaceAll(stderr.String(), "\r\n", "\n") // ssh ends its log lines in \r\n
	var s sshSays
	s.log = log
	for _, m := range identityLine.FindAllStringSubmatch(log, -1) {
		if n := len(s.identities); n > 0 && m[1] == s.identities[n-1]+"-cert" {
			continue // the certificate ssh looks for beside each identity file
		}
		s.identities = append(s.identities, m[1])
	}
	for _, m := range certLine.FindAllStringSubmatch(log, -1) {
		s.certificates = append(s.certificates, m[1])
	}
	for _, m := range proxyLine.FindAllStringSubmatch(log, -1) {
		s.proxies = append(s.proxies, m[1])
	}
	s.refused = !strings.Contains(log, "kex_exchange_identification")
	return s
}

// inHostnameNamespace makes the test run on a machine whose host name has
// a domain (so that %L and %l differ): as root, the test binary runs this
// test again in a UTS namespace of its own with that name, and the test
// here ends with its result. Elsewhere the test runs as it is, on this
// machine's name.
func inHostnameNamespace(t *testing.T, name string) (parent bool) {
	t.Helper()
	if os.Getenv("HOIST_TEST_HOSTNAME") == name {
		return false
	}
	if os.Geteuid() != 0 {
		host, _ := os.Hostname()
		t.Logf("not root: no UTS namespace, so the host name stays %q and %%L and %%l may not differ", host)
		return false
	}
	cmd := exec.Command("unshare", "--uts", "--", "sh", "-c", `hostname "$0" && exec "$@"`, name,
		os.Args[0], "-test.run=^"+t.Name()+"$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), "HOIST_TEST_HOSTNAME="+name)
	out, err := cmd.CombinedOutput()
	t.Logf("in a UTS namespace with host name %s:\n%s", name, out)
	if err != nil {
		t.Fatalf("the test failed in its namespace: %v", err)
	}
	return true
}

// plainTempDir is a temporary directory whose name holds no character a
// configuration would read as a token, a variable or ~ (t.TempDir's holds
// the test's name).
func plainTempDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "hoist-ssh-oracle-")
	must(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// writeOracleConfig writes body, with DIR replaced by dir, to dir/config.
func writeOracleConfig(t *testing.T, dir, body string) string {
	t.Helper()
	f := filepath.Join(dir, "config")
	must(t, os.WriteFile(f, []byte(strings.ReplaceAll(body, "DIR", dir)), 0o600))
	return f
}

// TestIdentityFileTokensAsOpenSSH: IdentityFile and CertificateFile take
// the tokens, ${VAR} and ~ that ssh_config(5) gives them, meaning what they
// mean to ssh: the files hoist reads are those ssh reads, found or not (ssh
// then offers no default key), and a value ssh refuses (an unknown token,
// an unset variable, an unknown ~user) hoist refuses too. Each case runs the
// real ssh for the answer.
func TestIdentityFileTokensAsOpenSSH(t *testing.T) {
	if inHostnameNamespace(t, "box.example.test") {
		return
	}
	if _, err := exec.LookPath("ssh"); err != nil {
		t.Fatal("OpenSSH's ssh is not installed: run make test, which installs openssh-client")
	}
	t.Setenv("HOIST_TOK_EMPTY", "")
	t.Setenv("HOIST_TOK_NAME", "from-env")
	os.Unsetenv("HOIST_TOK_UNSET")
	cases := []struct {
		name   string
		config string
		args   []string // before the destination, for ssh; hoist gets them as ConfigOptions
		target string
	}{
		{"every token", `Host al
  HostName Real.Example.COM
  Port 2200
  User bob
  IdentityFile DIR/i_%h_%p_%r_%n_%k_%L_%l_%u_%i_%C_%%
  CertificateFile DIR/c_%h_%k_%C_%L
`, nil, "al"},
		{"%d", "Host *\n  IdentityFile DIR/home%d/k\n", nil, "h"},
		{"HostKeyAlias in %k", "Host ka\n  HostKeyAlias Other.Name\n  IdentityFile DIR/k_%k_%n\n", nil, "ka"},
		{"the name as typed in %n and %k", "Host *\n  IdentityFile DIR/n_%n_%k_%h_%r\n", nil, "Bob@MiXed.Case"},
		{"-p and -l in %p and %r", "Host plain\n  IdentityFile DIR/pl_%p_%r\n", []string{"-p", "2022", "-l", "carol"}, "plain"},
		{"${VAR}", "Host *\n  IdentityFile DIR/env_${HOIST_TOK_NAME}_%h\n  CertificateFile DIR/cenv_${HOIST_TOK_NAME}${HOIST_TOK_EMPTY}\n", nil, "h"},
		{"an unset ${VAR}", "Host *\n  IdentityFile DIR/${HOIST_TOK_UNSET}/k\n", nil, "h"},
		{"an unset ${VAR} in CertificateFile", "Host *\n  CertificateFile DIR/${HOIST_TOK_UNSET}\n", nil, "h"},
		{"an unknown token", "Host *\n  IdentityFile DIR/k_%z\n", nil, "h"},
		{"a token ProxyCommand takes but not IdentityFile", "Host *\n  IdentityFile DIR/k_%T\n", nil, "h"},
		{"a % at the end", "Host *\n  IdentityFile DIR/k%\n", nil, "h"},
		{"%j", "Host *\n  IdentityFile DIR/j_%j\n", nil, "h"},
		{"%%h is no token", "Host *\n  IdentityFile DIR/pct%%h\n  IdentityFile DIR/$HOME_%%%h\n", nil, "h"},
		{"~ and ~user", "Host *\n  IdentityFile ~\n  IdentityFile ~/\n  IdentityFile ~//\n  IdentityFile ~root\n" +
			"  IdentityFile ~root/\n  IdentityFile ~/../../etc/hostname\n  IdentityFile DIR/~notexpanded\n", nil, "h"},
		{"an unknown ~user", "Host *\n  IdentityFile ~hoist-no-such-user/k\n", nil, "h"},
		{"IdentityFile none", "Host *\n  IdentityFile none\n  IdentityFile DIR/after_none\n", nil, "h"},
		{"IdentityFile none alone", "Host *\n  IdentityFile none\n  User u\n", nil, "h"},
		{"no IdentityFile", "Host *\n  User u\n", nil, "h"},
		{"a default name, configured", "Host *\n  IdentityFile ~/.ssh/id_rsa\n", nil, "h"},
		{"a space in the path", "Host *\n  IdentityFile \"DIR/with space/%h\"\n", nil, "h"},
		{"Match and tokens", "Match originalhost m*\n  IdentityFile DIR/m_%n\nHost *\n  IdentityFile DIR/all_%h\n", nil, "mine"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := plainTempDir(t)
			cfgFile := writeOracleConfig(t, dir, c.config)
			// ssh is given a ProxyCommand that ends at once; so is hoist, to
			// resolve the same configuration.
			args := append([]string{"-o", "ProxyCommand=true"}, c.args...)
			says := askOpenSSH(t, cfgFile, append(args, c.target)...)
			o := ConfigOptions{File: cfgFile, Options: []string{"ProxyCommand=true"}}
			for i := 0; i < len(c.args); i += 2 {
				switch c.args[i] {
				case "-p":
					o.Port = c.args[i+1]
				case "-l":
					o.User = c.args[i+1]
				}
			}
			var got SSHConfig
			err := ResolveTarget(context.Background(), c.target, o, &got)
			switch {
			case says.refused && err == nil:
				t.Fatalf("ssh refuses the configuration, hoist took it (identity files %q); ssh said:\n%s", got.IdentityFiles, says.log)
			case says.refused:
				t.Logf("refused, as by ssh: %v", err)
				if strings.Contains(err.Error(), "\n") {
					t.Errorf("the error is not one line: %q", err)
				}
				return
			case err != nil:
				t.Fatalf("ssh takes the configuration, hoist refuses it: %v; ssh said:\n%s", err, says.log)
			}
			configured := slices.DeleteFunc(slices.Clone(got.ConfigIdentityFiles), func(f string) bool { return f == "none" })
			switch {
			case got.ConfigIdentityFiles == nil:
				// hoist's default keys: ssh must be reading its own.
				if !slices.Equal(said(t, cfgFile, c.target), said(t, "none", "x")) {
					t.Errorf("no identity files taken from the configuration, but ssh reads %q", says.identities)
				}
			case !slices.Equal(configured, says.identities):
				t.Errorf("identity files %q, ssh reads %q; ssh said:\n%s", got.ConfigIdentityFiles, says.identities, says.log)
			case len(got.IdentityFiles) > 0:
				t.Errorf("IdentityFiles %q: the configuration's belong in ConfigIdentityFiles", got.IdentityFiles)
			}
			if !slices.Equal(got.ConfigCertificateFiles, says.certificates) {
				t.Errorf("certificate files %q, ssh reads %q", got.ConfigCertificateFiles, says.certificates)
			}
		})
	}
}

// said is what ssh -G prints for IdentityFile.
func said(t *testing.T, cfg, host string) []string {
	t.Helper()
	out, err := exec.Command("ssh", "-G", "-F", cfg, "--", host).Output()
	must(t, err)
	var files []string
	for _, l := range strings.Split(string(out), "\n") {
		if f, ok := strings.CutPrefix(l, "identityfile "); ok {
			files = append(files, f)
		}
	}
	return files
}

// sshHop is one hop of a ProxyJump chain: the host, and the user and port
// the chain names for it ("" for none).
type sshHop struct{ host, user, port string }

// sshHops reads the hops of a ProxyJump chain from the commands ssh ran:
// for each hop, from the last to the first, an ssh -W to it with -l and -p
// when the chain names them.
func sshHops(proxies []string) []sshHop {
	var hops []sshHop
	for _, p := range proxies {
		f := strings.Fields(p)
		if len(f) < 3 || f[0] != "exec" || filepath.Base(f[1]) != "ssh" {
			continue
		}
		h := sshHop{host: f[len(f)-1]}
		for i := 2; i+1 < len(f); i++ {
			switch f[i] {
			case "-l":
				h.user = f[i+1]
			case "-p":
				h.port = f[i+1]
			}
		}
		hops = append([]sshHop{h}, hops...)
	}
	return hops
}

// viaHops reads the hops of a "ProxyJump a,b" that SSHConfig.Via reports.
func viaHops(t *testing.T, via string) []sshHop {
	t.Helper()
	chain, ok := strings.CutPrefix(via, "ProxyJump ")
	if !ok {
		t.Fatalf("reached via %q, not a ProxyJump", via)
	}
	var hops []sshHop
	for _, h := range strings.Split(chain, ",") {
		tg, err := parseTarget(h)
		if err != nil {
			t.Fatalf("ProxyJump %q: %v", chain, err)
		}
		hop := sshHop{host: tg.host, user: tg.user}
		if explicitPort(h) {
			hop.port = tg.port
		}
		hops = append(hops, hop)
	}
	return hops
}

// TestProxyTokensAsOpenSSH: ProxyCommand and ProxyJump take %%, %h, %k,
// %n, %p and %r, as ssh expands them, and nothing else; a ProxyJump's
// tokens stand for the host it leads to. The command hoist runs is the one
// ssh runs, and the hops it goes through (host, and the user and port the
// chain names) are those ssh goes through.
func TestProxyTokensAsOpenSSH(t *testing.T) {
	if _, err := exec.LookPath("ssh"); err != nil {
		t.Fatal("OpenSSH's ssh is not installed: run make test, which installs openssh-client")
	}
	// Every hop's own ssh ends at once: no network.
	const hopsEnd = "Host *\n  ProxyCommand false\n"
	cases := []struct {
		name   string
		config string
		jump   string // -J
		target string
	}{
		{"ProxyCommand", "Host pc\n  HostName Real.Example\n  User bob\n  Port 2201\n" +
			"  ProxyCommand true %h %p %r %n %k %% ~/y $HOME ${HOME} %%h\n", "", "pc"},
		{"ProxyCommand with HostKeyAlias", "Host pk\n  HostKeyAlias KeyName\n  ProxyCommand true %k %n\n", "", "pk"},
		{"ProxyCommand with the user given", "Host *\n  ProxyCommand true %r@%h:%p\n", "", "Dana@Some.Host"},
		{"ProxyCommand with %d", "Host *\n  ProxyCommand true %d\n", "", "h"},
		{"ProxyCommand with %C", "Host *\n  ProxyCommand true %C\n", "", "h"},
		{"ProxyCommand with %u", "Host *\n  ProxyCommand true %u\n", "", "h"},
		{"ProxyJump tokens", "Host y\n  HostName yreal\n  User yuser\n  ProxyJump %r@b_%h:2222,c_%n\n" + hopsEnd, "", "y"},
		{"ProxyJump chain", "Host z\n  ProxyJump ssh://u1@h1:2201,u2@h2,h3:2203\n" + hopsEnd, "", "z"},
		{"ProxyJump with %k", "Host w\n  HostKeyAlias wkey\n  ProxyJump j_%k\n" + hopsEnd, "", "w"},
		{"-J with tokens", hopsEnd, "%r@jb_%n", "Carl@tgt"},
		{"ProxyJump to addresses", "Host v\n  ProxyJump [::1],u@[::2]:2200,10.0.0.1,a:22,[10.0.0.2]\n" + hopsEnd, "", "v"},
		{"-J to IPv6", hopsEnd, "u@[::1]:2222,[::2]", "v"},
		{"-J to an IPv6 address with a zone", hopsEnd, "[fe80::1%lo]", "v"}, // a token to ssh
		{"ProxyJump with %d", "Host *\n  ProxyJump b_%d\n", "", "h"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := plainTempDir(t)
			cfgFile := writeOracleConfig(t, dir, c.config)
			var args []string
			if c.jump != "" {
				args = []string{"-J", c.jump}
			}
			says := askOpenSSH(t, cfgFile, append(args, c.target)...)
			var got SSHConfig
			err := ResolveTarget(context.Background(), c.target, ConfigOptions{File: cfgFile, Jump: c.jump}, &got)
			refused := len(says.proxies) == 0
			switch {
			case refused && err == nil:
				t.Fatalf("ssh refuses the configuration, hoist took it (%s); ssh said:\n%s", got.Via, says.log)
			case refused:
				t.Logf("refused, as by ssh: %v", err)
				return
			case err != nil:
				t.Fatalf("ssh takes the configuration, hoist refuses it: %v; ssh said:\n%s", err, says.log)
			}
			if pc, ok := strings.CutPrefix(got.Via, "ProxyCommand "); ok {
				if "exec "+pc != says.proxies[0] {
					t.Errorf("ProxyCommand %q, ssh runs %q", "exec "+pc, says.proxies[0])
				}
				return
			}
			want := sshHops(says.proxies)
			if len(want) == 0 {
				t.Fatalf("ssh went through no jump host; it said:\n%s", says.log)
			}
			if hops := viaHops(t, got.Via); !slices.Equal(hops, want) {
				t.Errorf("jump hosts %+v (%s), ssh goes through %+v; ssh said:\n%s", hops, got.Via, want, says.log)
			}
		})
	}
}

// TestCommandLinePrecedenceAsOpenSSH: of -o User=, -l and a target's user@
// the first given wins, and so of -o Port=, -p and a target's port, over
// the configuration file too (the cases of OpenSSH's regress/sshcfgparse.sh
// "user first match", and the same for ports, IPv6 and user names ssh
// takes). The answer is ssh -G's, given the same command line.
func TestCommandLinePrecedenceAsOpenSSH(t *testing.T) {
	if _, err := exec.LookPath("ssh"); err != nil {
		t.Fatal("OpenSSH's ssh is not installed: run make test, which installs openssh-client")
	}
	dir := plainTempDir(t)
	cfgFile := writeOracleConfig(t, dir, "Host *\n  User from_config\n  Port 2000\n")
	// Each case is a command line; "T" stands where the target is. ssh gets
	// the target as an ssh:// URI, or, for IPv6, which OpenSSH 9.2 takes in
	// no URI, as -p and user@host at the same place.
	cases := []struct {
		args   []string
		target string
	}{
		{[]string{"T"}, "host"},
		{[]string{"-o", "User=foo", "-l", "bar", "T"}, "baz@host"},
		{[]string{"-l", "bar", "T"}, "baz@host"},
		{[]string{"T", "-o", "User=foo", "-l", "bar"}, "baz@host"},
		{[]string{"-l", "bar", "T", "-o", "User=foo"}, "baz@host"},
		{[]string{"-l", "bar", "-o", "User=foo", "T"}, "host"},
		{[]string{"-o", "User foo", "-l", "bar", "T"}, "host"},
		{[]string{"-p", "1", "-o", "Port=2", "T"}, "host:3"},
		{[]string{"T", "-p", "1"}, "host:3"},
		{[]string{"-o", "Port=2", "-p", "1", "T"}, "host"},
		{[]string{"-p", "1", "T"}, "ssh://u@host:3"},
		{[]string{"T", "-o", "Port=2"}, "ssh://u@host"},
		{[]string{"-p", "1", "T"}, "[::1]:3"},
		{[]string{"T", "-p", "1"}, "[::1]:3"},
		{[]string{"T", "-p", "1"}, "u@[::1]"},
		{[]string{"T"}, `DOMAIN\user@host`},
		{[]string{"-l", `DOMAIN\user`, "T"}, "host"},
		{[]string{"-o", `User=DOMAIN\user`, "T"}, "host"},
		{[]string{"T"}, "first last@host"},
	}
	for _, c := range cases {
		name := strings.Join(c.args, " ")
		name = strings.Replace(name, "T", c.target, 1)
		t.Run(name, func(t *testing.T) {
			var sshArgs, hoistArgs []string
			at := 0
			for _, a := range c.args {
				if a != "T" {
					sshArgs, hoistArgs = append(sshArgs, a), append(hoistArgs, a)
					continue
				}
				at = len(hoistArgs)
				tg, err := parseTarget(c.target)
				must(t, err)
				dest := tg.host
				if tg.user != "" {
					dest = tg.user + "@" + dest
				}
				switch {
				case strings.Contains(tg.host, ":") && explicitPort(c.target):
					sshArgs = append(sshArgs, "-p", tg.port, dest)
				case strings.Contains(tg.host, ":"):
					sshArgs = append(sshArgs, dest)
				case explicitPort(c.target):
					sshArgs = append(sshArgs, "ssh://"+dest+":"+tg.port)
				default:
					sshArgs = append(sshArgs, "ssh://"+dest)
				}
			}
			out, err := exec.Command("ssh", append([]string{"-G", "-F", cfgFile}, sshArgs...)...).CombinedOutput()
			if err != nil {
				t.Fatalf("ssh -G %q: %v\n%s", sshArgs, err, out)
			}
			want := map[string]string{}
			for _, l := range strings.Split(string(out), "\n") {
				if k, v, ok := strings.Cut(l, " "); ok && want[k] == "" {
					want[k] = v
				}
			}
			var got SSHConfig
			o := ConfigOptions{File: cfgFile, Args: hoistArgs, TargetAt: at}
			must(t, ResolveTarget(context.Background(), c.target, o, &got))
			host, port, err := net.SplitHostPort(got.Target)
			must(t, err)
			if got.User != want["user"] || port != want["port"] || host != want["hostname"] {
				t.Errorf("user %q, host %q, port %s; ssh %q says user %q, host %q, port %s",
					got.User, host, port, sshArgs, want["user"], want["hostname"], want["port"])
			}
		})
	}
}

// hostfileLine is ssh -v's word for each known_hosts file it reads (none
// of them exists).
var hostfileLine = regexp.MustCompile(`(?m)^debug1: load_hostkeys: fopen (.*): No such file or directory$`)

// TestKnownHostsFilesAsOpenSSH: the known_hosts files hoist reads are
// those ssh reads, in its order (ssh -v names each as it tries it), and
// the agent socket is the one ssh -G says: ssh expands UserKnownHostsFile
// and IdentityAgent (~, tokens, ${VAR}) once and GlobalKnownHostsFile only
// for ~, and hoist must not expand them again.
func TestKnownHostsFilesAsOpenSSH(t *testing.T) {
	if _, err := exec.LookPath("ssh"); err != nil {
		t.Fatal("OpenSSH's ssh is not installed: run make test, which installs openssh-client")
	}
	ts := newTestServer(t)
	_, port, _ := net.SplitHostPort(ts.addr)
	t.Setenv("HOIST_KH_NAME", "from-env")
	for _, body := range []string{
		"Host *\n  UserKnownHostsFile DIR/kh_%%h_%k DIR/kh2_%C ~/kh3_%r\n  GlobalKnownHostsFile ~/gkh DIR/g_%h\n",
		"Host *\n  UserKnownHostsFile DIR/${HOIST_KH_NAME}_%%%%\n  GlobalKnownHostsFile DIR/g_${HOIST_KH_NAME}\n",
		"Host *\n  UserKnownHostsFile none\n  GlobalKnownHostsFile DIR/only_global\n",
		"Host *\n  HostKeyAlias the-alias\n  UserKnownHostsFile DIR/kh_%k\n  GlobalKnownHostsFile DIR/g\n",
	} {
		dir := plainTempDir(t)
		cfgFile := writeOracleConfig(t, dir, body+"  IdentityAgent DIR/agent_%%h_%h_${HOIST_KH_NAME}\n")
		out, _ := exec.Command("ssh", "-v", "-F", cfgFile, "-o", "BatchMode=yes", "-p", port, "127.0.0.1", "true").CombinedOutput()
		log := strings.ReplaceAll(string(out), "\r\n", "\n")
		var want []string
		for _, m := range hostfileLine.FindAllStringSubmatch(log, -1) {
			if !slices.Contains(want, m[1]) {
				want = append(want, m[1])
			}
		}
		if len(want) == 0 {
			t.Fatalf("%q: ssh tried no known_hosts file; it said:\n%s", body, log)
		}
		var got SSHConfig
		must(t, ResolveTarget(context.Background(), "127.0.0.1", ConfigOptions{File: cfgFile, Port: port}, &got))
		if files := knownHostsFiles(got); !slices.Equal(files, want) {
			t.Errorf("%q: known_hosts files %q, ssh tries %q", body, files, want)
		}
		g, err := exec.Command("ssh", "-G", "-F", cfgFile, "127.0.0.1").Output()
		must(t, err)
		agent := regexp.MustCompile(`(?m)^identityagent (.*)$`).FindSubmatch(g)
		if agent == nil || agentSocket(got) != string(agent[1]) {
			t.Errorf("%q: agent socket %q, ssh -G says %q", body, agentSocket(got), agent)
		}
	}
}
