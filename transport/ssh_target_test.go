package transport

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// sshVerdict says how OpenSSH's ssh(1) relates to hoist for one target, as
// "ssh -G -F /dev/null TARGET" shows it.
type sshVerdict int

const (
	// The zero value, which most cases leave: ssh(1) reads the same user,
	// host and port, or refuses the target too.
	_ sshVerdict = iota
	// sshMayRefuse: hoist takes the target; ssh(1) may refuse it (why says
	// why), and if it takes it, it must read the same user, host and port.
	sshMayRefuse
	// hoistRefuses: hoist refuses a target ssh(1) may take (why says why).
	hoistRefuses
	// notSSHSyntax: ssh(1) reads no ":port" in a plain destination (it
	// takes "host:22" for a host name), so there is nothing to compare.
	notSSHSyntax
)

// targetCases are the targets parseTarget is held to. user, host and port
// are what it returns; err is part of its error when it refuses the target.
var targetCases = []struct {
	in               string
	user, host, port string
	err              string
	ssh              sshVerdict
	why              string
}{
	// [user@]host[:port], as before ssh:// targets.
	{in: "web1", host: "web1", port: "22"},
	{in: "bob@web1", user: "bob", host: "web1", port: "22"},
	{in: "deploy@example.com", user: "deploy", host: "example.com", port: "22"},
	{in: "a@b@10.0.0.1", user: "a@b", host: "10.0.0.1", port: "22"},
	{in: "::1", host: "::1", port: "22"},
	{in: "bob@web1:2222", user: "bob", host: "web1", port: "2222", ssh: notSSHSyntax},
	{in: "deploy@example.com:22", user: "deploy", host: "example.com", port: "22", ssh: notSSHSyntax},
	{in: "a@b@10.0.0.1:23", user: "a@b", host: "10.0.0.1", port: "23", ssh: notSSHSyntax},
	{in: "[::1]:22", host: "::1", port: "22", ssh: notSSHSyntax},
	{in: "[::1]:2222", host: "::1", port: "2222", ssh: notSSHSyntax},
	{in: "bob@[::1]:2222", user: "bob", host: "::1", port: "2222", ssh: notSSHSyntax},
	{in: "[fe80::1%eth0]", host: "fe80::1%eth0", port: "22", ssh: notSSHSyntax},
	{in: "user@[fe80::1%eth0]:22", user: "user", host: "fe80::1%eth0", port: "22", ssh: notSSHSyntax},
	{in: "", err: "empty host name"},
	{in: "@web1", err: "empty user name"},
	{in: "bob@", err: "empty host name"},
	{in: "web1:", err: `port ""`, ssh: notSSHSyntax},
	{in: "web1:0", err: `port "0"`, ssh: notSSHSyntax},
	{in: "web1:65536", err: `port "65536"`, ssh: notSSHSyntax},
	{in: "web1:ssh", err: `port "ssh"`, ssh: notSSHSyntax},
	{in: "[::1", err: "missing ]", ssh: notSSHSyntax},
	{in: "[::1]x", err: `unexpected "x" after ]`, ssh: notSSHSyntax},

	// ssh://[user@]host[:port] that hoist and ssh(1) both take.
	{in: "ssh://web1", host: "web1", port: "22"},
	{in: "ssh://bob@web1", user: "bob", host: "web1", port: "22"},
	{in: "ssh://bob@web1:2222", user: "bob", host: "web1", port: "2222"},
	{in: "ssh://bob@web1:65535", user: "bob", host: "web1", port: "65535"},
	{in: "ssh://bob@web1:022", user: "bob", host: "web1", port: "22"},
	{in: "ssh://bob@web1:", user: "bob", host: "web1", port: "22"},
	{in: "ssh://bob@web1/", user: "bob", host: "web1", port: "22"},
	{in: "ssh://bob@web1:2222/", user: "bob", host: "web1", port: "2222"},
	{in: "ssh://bob@10.0.0.1:23", user: "bob", host: "10.0.0.1", port: "23"},
	{in: "ssh://bob@[10.0.0.1]:23", user: "bob", host: "10.0.0.1", port: "23"},
	{in: "ssh://[web1]:2222", host: "web1", port: "2222"},
	{in: "ssh://bob@web1.example.com.", user: "bob", host: "web1.example.com", port: "22"},
	{in: "ssh://bob@build_box-2", user: "bob", host: "build_box-2", port: "22"},
	// ssh(1) lowers the case of every host name; hoist keeps it, in both
	// forms, and the comparison ignores case.
	{in: "ssh://bob@Web1", user: "bob", host: "Web1", port: "22"},
	{in: "ssh://a%40b@web1", user: "a@b", host: "web1", port: "22"},
	{in: "ssh://deploy%2Bci@web1", user: "deploy+ci", host: "web1", port: "22"},
	{in: "ssh://a+b@web1", user: "a b", host: "web1", port: "22"},
	{in: "ssh://a%20b@web1", user: "a b", host: "web1", port: "22"},
	{in: "ssh://a%2fb@web1", user: "a/b", host: "web1", port: "22"},
	{in: "ssh://a%3Ab@web1", user: "a:b", host: "web1", port: "22"},
	{in: "ssh://ops%2C@web1", user: "ops,", host: "web1", port: "22"},
	{in: "ssh://%C3%A9@web1", user: "\u00e9", host: "web1", port: "22"},
	{in: "ssh://bob;fingerprint=SHA256-abc@web1", user: "bob", host: "web1", port: "22"},
	{in: "ssh://bob;x;y@web1:2222", user: "bob", host: "web1", port: "2222"},

	// ssh:// targets hoist takes and ssh(1) may refuse.
	{in: "ssh://bob@[::1]:2222", user: "bob", host: "::1", port: "2222", ssh: sshMayRefuse,
		why: "OpenSSH 9.2's parse_uri checks the host with valid_domain, which takes no ':', though ssh(1)'s manual shows brackets"},
	{in: "ssh://[2001:db8::1]", host: "2001:db8::1", port: "22", ssh: sshMayRefuse,
		why: "OpenSSH 9.2 takes no IPv6 address in an ssh:// URI"},
	{in: "ssh://bob@[fe80::1%25eth0]:22", user: "bob", host: "fe80::1%eth0", port: "22", ssh: sshMayRefuse,
		why: "OpenSSH 9.2 takes no IPv6 address in an ssh:// URI"},
	{in: "ssh://a%3Bb@web1", user: "a;b", host: "web1", port: "22", ssh: sshMayRefuse,
		why: "patched ssh(1) refuses shell metacharacters in a user name given on its command line, for %-tokens in ssh_config; hoist has none"},
	{in: "ssh://-bob@web1", user: "-bob", host: "web1", port: "22", ssh: sshMayRefuse,
		why: "patched ssh(1) refuses a user name that starts with '-'"},

	// ssh:// targets neither takes.
	{in: "ssh://", err: "empty host name"},
	{in: "ssh:///", err: "empty host name"},
	{in: "ssh://@web1", err: "empty user name"},
	{in: "ssh://;x@web1", err: "empty user name"},
	{in: "ssh://bob@", err: "empty host name"},
	{in: "ssh://bob@:22", err: "empty host name"},
	{in: "ssh://bob@web1/srv/app", err: `a path ("/srv/app") is not allowed`},
	{in: "ssh://bob@web1:22/srv", err: `a path ("/srv") is not allowed`},
	{in: "ssh://web1//", err: `a path ("//") is not allowed`},
	{in: "ssh://web1/%41", err: `a path ("/%41") is not allowed`},
	{in: "ssh://bob@web1?x=1", err: `a query ("?x=1") is not allowed`},
	{in: "ssh://bob@web1/?x", err: `a query ("?x") is not allowed`},
	{in: "ssh://bob@web1:22?", err: `a query ("?") is not allowed`},
	{in: "ssh://bob@web1#top", err: `a fragment ("#top") is not allowed`},
	{in: "ssh://bob@web1:0", err: `port "0"`},
	{in: "ssh://bob@web1:00000", err: `port "00000"`},
	{in: "ssh://bob@web1:65536", err: `port "65536"`},
	{in: "ssh://bob@web1:99999999999999999999", err: `port "99999999999999999999"`},
	{in: "ssh://bob@web1:-1", err: `port "-1"`},
	{in: "ssh://bob@web1:22x", err: `port "22x"`},
	{in: "ssh://bob@web1:0x16", err: `port "0x16"`},
	{in: "ssh://bob@web1:1:2", err: `port "1:2"`},
	{in: "ssh://bob@[::1", err: "missing ] after ["},
	{in: "ssh://bob@[web1", err: "missing ] after ["},
	{in: "ssh://bob@web1]", err: `"]" is not allowed in host name`},
	{in: "ssh://bob@[web1]]", err: `unexpected "]" after ]`},
	{in: "ssh://bob@[[web1]]", err: `unexpected "]" after ]`},
	{in: "ssh://bob@w[eb1", err: `"[" is not allowed in host name`},
	{in: "ssh://bob@[web1]x", err: `unexpected "x" after ]`},
	{in: "ssh://bob@[]:22", err: "empty host name"},
	{in: "ssh://bob@[::1]x", err: `unexpected "x" after ]`},
	{in: "ssh://::1", err: "must stand in brackets"},
	{in: "ssh://bob@fe80::1:22", err: "must stand in brackets"},
	{in: "ssh://bob@[fe80::1%eth0]:22", err: "as %25zone"},
	{in: "ssh://bob@[::g]", err: `"::g" is not an IPv6 address`},
	{in: "ssh://bob@[1.2.3.4:5]", err: `"1.2.3.4:5" is not an IPv6 address`},
	{in: "ssh://a%2@web1", err: `"%2" is not an escape`},
	{in: "ssh://a%@web1", err: `"%" is not an escape`},
	{in: "ssh://a%zzb@web1", err: `"%zz" is not an escape`},
	{in: "ssh://bob@a@web1", err: "more than one @"},
	{in: "ssh://bob@@web1", err: "more than one @"},
	{in: "ssh://bob@web1;x", err: `";" is not allowed in host name`},
	{in: "ssh://bob@we b1", err: `" " is not allowed in host name`},
	{in: "ssh://bob@web%31", err: `"%" is not allowed in host name`},
	{in: "ssh://bob@-web1", err: "must start with a letter or digit"},
	{in: "ssh://bob@.web1", err: "must start with a letter or digit"},
	{in: "ssh://bob@web1..example", err: "empty part (..)"},
	{in: "ssh://bob@web1...", err: "empty part (..)"},
	{in: "ssh://ssh://web1", err: `a path ("//web1") is not allowed`},

	// Targets hoist refuses and ssh(1) may take.
	{in: "ssh://bob@web1:ssh", err: `port "ssh"`, ssh: hoistRefuses,
		why: "ssh(1) looks port names up in /etc/services"},
	{in: "ssh://bob@web1: 22", err: `port " 22"`, ssh: hoistRefuses,
		why: "ssh(1)'s strtonum skips leading blanks"},
	{in: "ssh://bob:secret@web1", err: "a password (user:password@)", ssh: hoistRefuses,
		why: `ssh(1) would send "bob:secret" as the user name`},
	{in: "ssh://web1/x@web2", err: `a path ("/x@web2") is not allowed`, ssh: hoistRefuses,
		why: `ssh(1) looks for the @ past the /, reading user "web1/x" on host web2`},
	{in: "ssh://a?b@web1", err: `a query ("?b@web1") is not allowed`, ssh: hoistRefuses,
		why: `ssh(1) reads user "a?b"`},
	{in: "ssh://a%00b@web1", err: `control character "\x00"`, ssh: hoistRefuses,
		why: "OpenSSH before 10.1 (and Debian's 9.2 before deb12u8) cuts the user name at the NUL"},
	{in: "ssh://a%0Ab@web1", err: `control character "\n"`, ssh: hoistRefuses,
		why: "OpenSSH before 10.1 (and Debian's 9.2 before deb12u8) takes control characters in a user name"},
	{in: "SSH://web1", err: "write the scheme as ssh://, in lower case", ssh: hoistRefuses,
		why: `ssh(1) sees no URI and takes "SSH://web1" for a host name`},
	{in: "sftp://bob@web1", err: "sftp:// targets are not supported", ssh: hoistRefuses,
		why: `ssh(1) sees no ssh:// URI and reads user "sftp://bob" on host web1`},
}

func TestParseTargetForms(t *testing.T) {
	t.Parallel()
	for _, c := range targetCases {
		got, err := parseTarget(c.in)
		if c.err == "" {
			want := sshTarget{c.user, c.host, c.port}
			if err != nil || got != want {
				t.Errorf("parseTarget(%q) = %+v, %v; want %+v", c.in, got, err, want)
			}
			continue
		}
		if err == nil {
			t.Errorf("parseTarget(%q) = %+v; want an error about %s", c.in, got, c.err)
			continue
		}
		msg := err.Error()
		hint := "write it as [user@]host[:port]"
		if strings.Contains(c.in, "://") {
			hint = "write it as "
		}
		if !strings.Contains(msg, c.err) || !strings.HasPrefix(msg, "target "+strconv.Quote(redactTarget(c.in))+": ") ||
			!strings.Contains(msg, hint) || !strings.Contains(msg, "host[:port]") || strings.ContainsAny(msg, "\n\r") {
			t.Errorf("parseTarget(%q) error:\n\t%s\nwant one line naming the target, saying %q, then %q...", c.in, msg, c.err, hint)
		}
	}
}

// TestParseTargetAgainstSSH holds parseTarget to what OpenSSH's ssh(1)
// makes of each target: "ssh -G -F /dev/null TARGET" prints the user, host
// name and port ssh(1) would use, and fails on a target it refuses.
func TestParseTargetAgainstSSH(t *testing.T) {
	t.Parallel()
	sshPath, err := exec.LookPath("ssh")
	if err != nil {
		t.Skipf("no comparison with ssh -G: OpenSSH's ssh is not installed (%v)", err)
	}
	if v, err := exec.Command(sshPath, "-V").CombinedOutput(); err == nil {
		t.Logf("comparing with %s", strings.TrimSpace(string(v)))
	}
	me, err := currentUser()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range targetCases {
		if c.ssh == notSSHSyntax {
			continue
		}
		p, perr := parseTarget(c.in)
		if (perr == nil) != (c.err == "") {
			t.Errorf("parseTarget(%q) = %+v, %v; not what the table says (see TestParseTargetForms)", c.in, p, perr)
			continue
		}
		want := p.user
		if want == "" {
			want = me
		}
		got := sshG(t, sshPath, c.in)
		agrees := got.refused == "" && got.user == want &&
			strings.EqualFold(got.host, p.host) && got.port == p.port
		switch {
		case perr == nil && agrees, perr != nil && got.refused != "":
			// The same.
		case c.ssh == sshMayRefuse && got.refused != "":
			t.Logf("%q: ssh refuses it (%s), hoist takes it: %s", c.in, got.refused, c.why)
		case c.ssh == hoistRefuses && got.refused == "":
			t.Logf("%q: ssh takes it as user %q host %q port %s, hoist refuses it: %s", c.in, got.user, got.host, got.port, c.why)
		case got.refused != "":
			t.Errorf("%q: ssh refuses it (%s); hoist reads user %q host %q port %s", c.in, got.refused, want, p.host, p.port)
		case perr == nil:
			t.Errorf("%q: ssh reads user %q host %q port %s; hoist reads user %q host %q port %s",
				c.in, got.user, got.host, got.port, want, p.host, p.port)
		default:
			t.Errorf("%q: ssh reads user %q host %q port %s; hoist refuses it: %v", c.in, got.user, got.host, got.port, perr)
		}
	}
}

type sshGResult struct {
	user, host, port string
	refused          string // why ssh refused the target, "" if it took it
}

// sshG runs "ssh -G -F /dev/null -- dest", which prints the configuration
// ssh(1) would connect with and connects to nothing.
func sshG(t *testing.T, sshPath, dest string) sshGResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, sshPath, "-G", "-F", "/dev/null", "--", dest)
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if ctx.Err() != nil {
		t.Fatalf("ssh -G %q: %v", dest, ctx.Err())
	}
	if err != nil {
		why, _, _ := strings.Cut(strings.TrimSpace(stderr.String()), "\n")
		if strings.HasPrefix(why, "usage:") {
			why = "usage message"
		}
		return sshGResult{refused: why + "; " + err.Error()}
	}
	var r sshGResult
	for _, line := range strings.Split(string(out), "\n") {
		key, val, _ := strings.Cut(line, " ")
		switch key {
		case "user":
			r.user = val
		case "hostname":
			r.host = val
		case "port":
			r.port = val
		}
	}
	if r.host == "" {
		r.refused = "no host name"
	}
	return r
}

// TestTargetErrorsHideAPassword: a target written with a password in its
// user part is refused, and the error names it without the password.
func TestTargetErrorsHideAPassword(t *testing.T) {
	for _, target := range []string{"bob:hunter2@web1:ssh", "ssh://bob:hunter2@web1", "bob:hunter2@"} {
		_, err := parseTarget(target)
		if err == nil {
			t.Fatalf("%q was accepted", target)
		}
		if strings.Contains(err.Error(), "hunter2") || !strings.Contains(err.Error(), "bob:***") {
			t.Errorf("%q: %v", target, err)
		}
	}
}
