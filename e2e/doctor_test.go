package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/hoistdev/hoist/cmd/hoist/output"
	"github.com/hoistdev/hoist/e2e/sshd"
)

// doctorReport is hoist --json doctor's object for one host.
type doctorReport output.Doctor

// doctor runs hoist doctor on h (text and --json) with the store under
// root, and returns the report and the text run.
func doctor(t *testing.T, h *sshd.Host, root string) (doctorReport, run) {
	t.Helper()
	c := newCLI(t, h, root)
	js := c.run("--json", "doctor")
	rep := decodeOne[doctorReport](t, "hoist --json doctor", js.stdout)
	if rep.Exit != js.code {
		t.Errorf("--json says exit %d, hoist exited %d", rep.Exit, js.code)
	}
	return rep, c.run("doctor")
}

// check returns the named item, failing the test when it is missing.
func (r doctorReport) check(t *testing.T, name string) (status, value, detail, fix string) {
	t.Helper()
	for _, c := range r.Checks {
		if c.Name == name {
			return c.Status, c.Value, c.Detail, c.Fix
		}
	}
	t.Fatalf("no %s check in the report: %+v", name, r.Checks)
	return
}

// noneFail: every check passes or warns, hoist exits 0, and the text
// report says so.
func noneFail(t *testing.T, rep doctorReport, txt run) {
	t.Helper()
	for _, c := range rep.Checks {
		if c.Status == "fail" {
			t.Errorf("%s fails: %s (fix: %s)", c.Name, c.Detail, c.Fix)
		}
	}
	if !rep.OK || txt.code != 0 || !strings.Contains(txt.stdout, " 0 fail") {
		t.Errorf("want exit 0 and no failure:\n%s", txt)
	}
}

// TestDoctorPlainHost: the target as reached, public key auth, a measured
// round trip, a clock that agrees with this machine's (the same one), and
// a store that does not exist is not created.
func TestDoctorPlainHost(t *testing.T) {
	t.Parallel()
	h := sshd.Start(t, sshd.Options{})
	root := filepath.Join(h.Dir, "store")
	rep, txt := doctor(t, h, root)
	noneFail(t, rep, txt)
	if rep.Target.User != h.User || rep.Target.Host != "127.0.0.1" || rep.Target.Port != strconv.Itoa(h.Port) ||
		rep.Target.Jump != "-" || rep.Target.Identity != h.KeyFile {
		t.Errorf("target: %+v, want %s at 127.0.0.1 port %d, directly, offering %s", rep.Target, h.User, h.Port, h.KeyFile)
	}
	if _, v, _, _ := rep.check(t, "auth"); v != "publickey" {
		t.Errorf("auth: %q, want publickey", v)
	}
	if _, v, d, _ := rep.check(t, "rtt"); v == "-" || !strings.Contains(d, "a trivial command takes") {
		t.Errorf("rtt: value %q, detail %q; want a measured round trip and a command's time", v, d)
	}
	if s, v, d, _ := rep.check(t, "clock"); s != "ok" || !strings.HasPrefix(v, "+") && !strings.HasPrefix(v, "-0") {
		t.Errorf("clock: %s %q %q; want ok and a skew of this machine against itself", s, v, d)
	}
	for _, name := range []string{"sha256", "tar", "mv", "touch", "paths"} {
		if s, _, d, _ := rep.check(t, name); s != "ok" {
			t.Errorf("%s: %s %s", name, s, d)
		}
	}
	if s, v, _, _ := rep.check(t, "root"); s != "ok" || v != "absent" {
		t.Errorf("root: %s %s, want ok absent", s, v)
	}
	if exists(root) {
		t.Errorf("doctor created the store root %s", root)
	}
	if !strings.Contains(txt.stdout, "OK    target    "+h.Target()) {
		t.Errorf("the text report does not name the target %s:\n%s", h.Target(), txt)
	}
}

// TestDoctorBusybox: on a host whose /bin/sh and userland are busybox's,
// the doctor says so, and finds everything hoist needs there.
func TestDoctorBusybox(t *testing.T) {
	sshd.RequireRoot(t)
	t.Parallel()
	h := sshd.Start(t, sshd.Options{Busybox: true})
	rep, txt := doctor(t, h, filepath.Join(h.Dir, "store"))
	noneFail(t, rep, txt)
	if s, v, d, _ := rep.check(t, "sh"); s != "ok" || v != "busybox" || !strings.Contains(d, "BusyBox") {
		t.Errorf("sh: %s %q %q; want ok busybox", s, v, d)
	}
	if s, v, d, _ := rep.check(t, "userland"); s != "ok" || v != "busybox" {
		t.Errorf("userland: %s %q %q; want ok busybox", s, v, d)
	}
	if _, v, _, _ := rep.check(t, "tar"); v != "busybox" {
		t.Errorf("tar: %q, want busybox's", v)
	}
	for _, want := range []string{"OK    sh        busybox", "OK    userland  busybox"} {
		if !strings.Contains(txt.stdout, want) {
			t.Errorf("the text report lacks %q:\n%s", want, txt)
		}
	}
}

// TestDoctorLoginShells: a login whose shell is fish (and each other login
// shell the harness has): the doctor names it, and works through it,
// clock reading included.
func TestDoctorLoginShells(t *testing.T) {
	sshd.RequireRoot(t)
	t.Parallel()
	for _, shell := range []string{"fish", "tcsh", "zsh", "dash", "mksh", "sh"} {
		t.Run(shell, func(t *testing.T) {
			t.Parallel()
			h := sshd.Start(t, sshd.Options{Shell: shell})
			rep, txt := doctor(t, h, filepath.Join(h.Dir, "store"))
			noneFail(t, rep, txt)
			if s, v, d, _ := rep.check(t, "login"); s != "ok" || v != shell || !strings.Contains(d, "/"+shell) {
				t.Errorf("login: %s %q %q; want ok %s", s, v, d, shell)
			}
			if s, _, d, _ := rep.check(t, "clock"); s != "ok" {
				t.Errorf("clock through %s: %s %s; want ok", shell, s, d)
			}
			if want := "OK    login     " + shell + ": passwd "; !strings.Contains(txt.stdout, want) {
				t.Errorf("the text report lacks %q:\n%s", want, txt)
			}
		})
	}
}

// TestDoctorStoreOfAnotherUser: a store root owned by another uid fails the
// path checks with the owner problem and what to do, hoist exits 1, and
// nothing is created in it.
func TestDoctorStoreOfAnotherUser(t *testing.T) {
	sshd.RequireRoot(t)
	t.Parallel()
	h := sshd.Start(t, sshd.Options{})
	root := filepath.Join(h.Dir, "theirs")
	if err := os.Mkdir(root, 0o755); err != nil {
		t.Fatal(err)
	}
	uid, gid := lookupIDs(t, h.User)
	other := uid + 4242
	if err := os.Chown(root, other, gid); err != nil {
		t.Fatal(err)
	}
	rep, txt := doctor(t, h, root)
	if rep.OK || rep.Exit != 1 || txt.code != 1 {
		t.Errorf("want exit 1: --json ok %v exit %d; text:\n%s", rep.OK, rep.Exit, txt)
	}
	s, v, d, fix := rep.check(t, "paths")
	if s != "fail" || v != "owner" || d != "owner "+root {
		t.Errorf("paths: %s %q %q; want fail owner %s", s, v, d, root)
	}
	if !strings.Contains(fix, root+" belongs to another user") || !strings.Contains(fix, "chown") {
		t.Errorf("paths fix: %q; want the owner problem and chown", fix)
	}
	if s, _, d, _ := rep.check(t, "root"); s != "ok" || !strings.Contains(d, "(uid "+strconv.Itoa(other)+")") {
		t.Errorf("root: %s %q; want its owner, uid %d", s, d, other)
	}
	if s, _, _, _ := rep.check(t, "lock"); s != "warn" {
		t.Errorf("lock: %s; want warn (not read)", s)
	}
	for _, want := range []string{"FAIL  paths     owner " + root, "fix: " + root + " belongs to another user"} {
		if !strings.Contains(txt.stdout, want) {
			t.Errorf("the text report lacks %q:\n%s", want, txt)
		}
	}
	if !strings.Contains(txt.stderr, "1 check failed: paths") {
		t.Errorf("stderr: %q; want the failed check named", txt.stderr)
	}
	if left, err := os.ReadDir(root); err != nil || len(left) > 0 {
		t.Errorf("the doctor wrote into %s: %v %v", root, left, err)
	}
}

// TestDoctorSaysTheResolvedTarget: the target as resolved through the
// OpenSSH configuration (a ProxyJump, two IdentityFiles) is said before
// connecting; the auth line names the key the host took (an RSA key, the
// second offered: the first is one the host refuses); and a target whose
// connection fails is reported all the same, with the identity files that
// are missing and a connect item saying why.
func TestDoctorSaysTheResolvedTarget(t *testing.T) {
	t.Parallel()
	target := sshd.Start(t, sshd.Options{})
	bastion := sshd.Start(t, sshd.Options{})
	keys := t.TempDir()
	keygen := func(name, kind string) string {
		f := filepath.Join(keys, name)
		if out, err := exec.Command("ssh-keygen", "-q", "-t", kind, "-N", "", "-f", f).CombinedOutput(); err != nil {
			t.Fatalf("ssh-keygen: %v %s", err, out)
		}
		return f
	}
	refused, rsa := keygen("refused", "ed25519"), keygen("id_rsa", "rsa")
	pub, err := os.ReadFile(rsa + ".pub")
	if err != nil {
		t.Fatal(err)
	}
	ak, err := os.OpenFile(filepath.Join(filepath.Dir(target.KnownHosts), "authorized_keys"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ak.Write(pub); err != nil {
		t.Fatal(err)
	}
	ak.Close()
	block := func(alias string, ids ...string) string {
		lines := []string{"Host " + alias, "  HostName 127.0.0.1", "  Port " + strconv.Itoa(target.Port), "  User " + target.User,
			"  IdentitiesOnly yes", "  UserKnownHostsFile " + target.KnownHosts, "  ProxyJump bastion"}
		for _, f := range ids {
			lines = append(lines, "  IdentityFile "+f)
		}
		return strings.Join(lines, "\n") + "\n"
	}
	cfg := writeConfig(t, block("app", refused, rsa), block("locked-out", refused), hostBlock("bastion", bastion))
	root := filepath.Join(target.Dir, "store")
	c := sshConfigCLI(t, cfg, root)
	doctorJSON := func(args ...string) (doctorReport, run) {
		t.Helper()
		r := c.run(append(args, "--json", "doctor")...)
		return decodeOne[doctorReport](t, "hoist --json doctor", r.stdout), r
	}
	say := func(alias, ids string) string {
		return fmt.Sprintf("hoist: %s: connecting: user %s, host 127.0.0.1, port %d; via ProxyJump bastion; identity files %s; no ssh-agent\n",
			alias, target.User, target.Port, ids)
	}

	rep, r := doctorJSON("-H", "app")
	noneFail(t, rep, c.run("-H", "app", "doctor"))
	if !strings.HasPrefix(r.stderr, say("app", refused+", "+rsa)) {
		t.Errorf("before connecting, want %q on stderr:\n%s", say("app", refused+", "+rsa), r)
	}
	if rep.Target.Jump != "ProxyJump bastion" || rep.Target.Identity != refused+","+rsa || rep.Target.Key != rsa ||
		rep.Target.Host != "127.0.0.1" || rep.Target.Port != strconv.Itoa(target.Port) || rep.Target.User != target.User {
		t.Errorf("target: %+v", rep.Target)
	}
	if s, v, d, _ := rep.check(t, "auth"); s != "ok" || v != "publickey" || d != "public key "+rsa+", accepted by the host" {
		t.Errorf("auth: %s %q %q; want the RSA key named", s, v, d)
	}

	// The host takes none of the keys: the target, then why.
	rep, r = doctorJSON("-H", "locked-out")
	if r.code != 1 || rep.OK || !strings.HasPrefix(r.stderr, say("locked-out", refused)) {
		t.Errorf("want exit 1 and the target said first:\n%s", r)
	}
	if s, _, d, _ := rep.check(t, "target"); s != "ok" || !strings.Contains(d, "via ProxyJump bastion; identity files "+refused) {
		t.Errorf("target: %s %q", s, d)
	}
	if s, _, d, _ := rep.check(t, "connect"); s != "fail" || !strings.Contains(d, "authentication failed for user "+target.User) {
		t.Errorf("connect: %s %q; want the authentication failure", s, d)
	}
	txt := c.run("-H", "locked-out", "doctor")
	for _, want := range []string{"OK    target    locked-out: user " + target.User, "FAIL  connect   authentication failed", "1 ok, 0 warn, 1 fail"} {
		if !strings.Contains(txt.stdout, want) {
			t.Errorf("the text report lacks %q:\n%s", want, txt)
		}
	}

	// An identity file that is not there: named as missing.
	gone := filepath.Join(keys, "gone")
	rep, r = doctorJSON("-H", "app", "-i", gone, "-i", rsa)
	if s, _, d, _ := rep.check(t, "target"); s != "warn" || !strings.Contains(d, "identity files "+gone+" (missing), "+rsa+";") {
		t.Errorf("target: %s %q; want %s named missing\n%s", s, d, gone, r)
	}
	if len(rep.Target.Missing) != 1 || rep.Target.Missing[0] != gone {
		t.Errorf("target: missing %q, want [%s]", rep.Target.Missing, gone)
	}
	if s, _, d, _ := rep.check(t, "connect"); s != "fail" || !strings.Contains(d, gone) {
		t.Errorf("connect: %s %q; want the missing file named", s, d)
	}
}
