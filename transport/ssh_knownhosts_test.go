package transport

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha1"
	"encoding/base64"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/skeema/knownhosts"
	"golang.org/x/crypto/ssh"
	xknownhosts "golang.org/x/crypto/ssh/knownhosts"
)

// hermetic returns ts.clientConfig with no global known_hosts files, so
// that the machine's /etc/ssh cannot change the outcome.
func hermetic(t *testing.T, ts *testServer) SSHConfig {
	t.Helper()
	cfg := ts.clientConfig(t)
	cfg.GlobalKnownHostsFiles = []string{}
	return cfg
}

// writeLines writes lines to a new file in a fresh directory and returns
// its path.
func writeLines(t *testing.T, name string, lines ...string) string {
	t.Helper()
	file := filepath.Join(t.TempDir(), name)
	must(t, os.WriteFile(file, []byte(strings.Join(lines, "\n")+"\n"), 0o600))
	return file
}

// keyFields is the "type base64" part of a known_hosts line for k.
func keyFields(k ssh.PublicKey) string {
	return k.Type() + " " + base64.StdEncoding.EncodeToString(k.Marshal())
}

func hashedLine(host string, k ssh.PublicKey) string {
	return xknownhosts.HashHostname(knownhosts.Normalize(host)) + " " + keyFields(k)
}

func revokedLine(k ssh.PublicKey) string { return "@revoked * " + keyFields(k) }

func runOK(t *testing.T, s *SSH) {
	t.Helper()
	if status, err := s.Run(runCtx(t), Request{Command: "exit 0"}); err != nil || status != 0 {
		t.Fatalf("Run: %d, %v", status, err)
	}
}

func hostKeyErr(t *testing.T, err error) *HostKeyError {
	t.Helper()
	var hke *HostKeyError
	if !errors.As(err, &hke) || !errors.Is(err, ErrHostKey) {
		t.Fatalf("DialSSH: %v, want a *HostKeyError", err)
	}
	return hke
}

// recordHandler keeps the records logged to it.
type recordHandler struct {
	mu      sync.Mutex
	records []slog.Record
}

func (h *recordHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h *recordHandler) Handle(_ context.Context, r slog.Record) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.records = append(h.records, r.Clone())
	return nil
}
func (h *recordHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *recordHandler) WithGroup(string) slog.Handler      { return h }

// warnings are the messages logged at level Warn or above, with their
// attributes.
func (h *recordHandler) warnings() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []string
	for _, r := range h.records {
		if r.Level < slog.LevelWarn {
			continue
		}
		s := r.Message
		r.Attrs(func(a slog.Attr) bool {
			s += " " + a.String()
			return true
		})
		out = append(out, s)
	}
	return out
}

func TestKnownHostsFiles(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		cfg  SSHConfig
		want []string
	}{
		{"nil global means OpenSSH's", SSHConfig{KnownHostsFile: "u"},
			[]string{"u", "/etc/ssh/ssh_known_hosts", "/etc/ssh/ssh_known_hosts2"}},
		{"empty global means none", SSHConfig{KnownHostsFile: "u", GlobalKnownHostsFiles: []string{}}, []string{"u"}},
		{"user files first, each once", SSHConfig{KnownHostsFile: "u", KnownHostsFiles: []string{"v", "u", "", "w"},
			GlobalKnownHostsFiles: []string{"g", "v"}}, []string{"u", "v", "w", "g"}},
	} {
		if got := knownHostsFiles(tc.cfg); !slices.Equal(got, tc.want) {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

// A host key found in a further user file or only in a global file is
// accepted, and nothing is recorded even with AcceptNewHostKey.
func TestSSHDialKeyInOtherKnownHostsFile(t *testing.T) {
	t.Parallel()
	for _, where := range []string{"user", "global"} {
		t.Run(where, func(t *testing.T) {
			t.Parallel()
			ts := newTestServer(t)
			cfg := hermetic(t, ts)
			cfg.KnownHostsFile = filepath.Join(t.TempDir(), "missing", "known_hosts")
			cfg.AcceptNewHostKey = true
			other := writeLines(t, "known_hosts", knownhosts.Line([]string{ts.addr}, ts.hostKeys[0].PublicKey()))
			if where == "user" {
				cfg.KnownHostsFiles = []string{filepath.Join(t.TempDir(), "missing2"), other}
			} else {
				cfg.GlobalKnownHostsFiles = []string{filepath.Join(t.TempDir(), "missing2"), other}
			}
			runOK(t, dialTest(t, cfg))
			if _, err := os.Stat(cfg.KnownHostsFile); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("a key known from %s was recorded: %v", other, err)
			}
		})
	}
}

// Several keys for one host, across files and in hashed form: a line with
// another key of the same type does not hide the right one further on.
func TestSSHDialSeveralKeysPerHostAcrossFiles(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	cfg := hermetic(t, ts)
	ed := ts.hostKeys[0].PublicKey()
	writeKnownHosts(t, cfg, knownhosts.Line([]string{ts.addr}, otherKey(t)), hashedLine(ts.addr, otherKey(t)))
	cfg.KnownHostsFiles = []string{writeLines(t, "second", hashedLine("elsewhere:22", ed))}
	cfg.GlobalKnownHostsFiles = []string{writeLines(t, "global", "# comment", hashedLine(ts.addr, ed))}
	runOK(t, dialTest(t, cfg))

	// Without the global file's line the other keys are all there is: a
	// changed key, reported against the first file that has one.
	cfg.GlobalKnownHostsFiles = []string{}
	hke := hostKeyErr(t, dialErrFor(t, cfg))
	if !hke.Changed || hke.KnownHostsFile != cfg.KnownHostsFile {
		t.Errorf("changed %v, file %s; want a changed key in %s", hke.Changed, hke.KnownHostsFile, cfg.KnownHostsFile)
	}
}

// x/crypto reads OpenSSH's hashed entries (ssh-keygen -H) on its own: a
// hashed line is found, in a user or a global file, and a hashed line with
// another key makes a changed key, not an unknown host.
func TestSSHDialHashedEntriesInEveryFile(t *testing.T) {
	t.Parallel()
	for _, where := range []string{"first", "further", "global"} {
		t.Run(where, func(t *testing.T) {
			t.Parallel()
			ts := newTestServer(t)
			cfg := hermetic(t, ts)
			set := func(lines ...string) {
				switch where {
				case "first":
					writeKnownHosts(t, cfg, lines...)
				case "further":
					writeKnownHosts(t, cfg)
					cfg.KnownHostsFiles = []string{writeLines(t, "kh", lines...)}
				case "global":
					writeKnownHosts(t, cfg)
					cfg.GlobalKnownHostsFiles = []string{writeLines(t, "kh", lines...)}
				}
			}
			set(hashedLine(ts.addr, ts.hostKeys[1].PublicKey()))
			dialTest(t, cfg)
			set(hashedLine(ts.addr, otherKey(t)))
			if hke := hostKeyErr(t, dialErrFor(t, cfg)); !hke.Changed {
				t.Errorf("%v: want a changed key", hke)
			}
		})
	}
}

func TestSSHDialAcceptNewRecordsInKnownHostsFileOnly(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	cfg := hermetic(t, ts)
	elsewhere := knownhosts.Line([]string{"elsewhere"}, otherKey(t))
	writeKnownHosts(t, cfg, elsewhere)
	second := writeLines(t, "second", elsewhere)
	global := writeLines(t, "global", elsewhere)
	cfg.KnownHostsFiles, cfg.GlobalKnownHostsFiles = []string{second}, []string{global}
	cfg.AcceptNewHostKey = true
	runOK(t, dialTest(t, cfg))
	lines := strings.Split(strings.TrimSuffix(readFile(t, cfg.KnownHostsFile), "\n"), "\n")
	if len(lines) != 2 || lines[0] != elsewhere || !strings.HasPrefix(lines[1], knownhosts.Normalize(ts.addr)+" ") {
		t.Errorf("%s:\n%s", cfg.KnownHostsFile, strings.Join(lines, "\n"))
	}
	for _, f := range []string{second, global} {
		if got := readFile(t, f); got != elsewhere+"\n" {
			t.Errorf("%s was modified:\n%s", f, got)
		}
	}
	cfg.AcceptNewHostKey = false
	dialTest(t, cfg)
}

func TestSSHDialGlobalKnownHostsFileProblems(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)

	// Missing: no keys, so an unknown host, not a known_hosts error.
	cfg := hermetic(t, ts)
	writeKnownHosts(t, cfg)
	cfg.GlobalKnownHostsFiles = []string{filepath.Join(t.TempDir(), "ssh_known_hosts")}
	if hke := hostKeyErr(t, dialErrFor(t, cfg)); !hke.Unknown || hke.KnownHostsFile != cfg.KnownHostsFile {
		t.Errorf("%v: want an unknown key, to be recorded in %s", hke, cfg.KnownHostsFile)
	}

	bad := writeLines(t, "bad", "this is not a known_hosts line")
	for name, file := range map[string]string{
		"unreadable": t.TempDir(), // a directory: open succeeds, reading does not
		"garbage":    bad,
	} {
		// A system-wide file that cannot be read or parsed is skipped,
		// as OpenSSH skips it: the user file still knows the host.
		cfg := hermetic(t, ts)
		cfg.GlobalKnownHostsFiles = []string{filepath.Join(t.TempDir(), "missing"), file}
		c, err := DialSSH(context.Background(), cfg)
		if err != nil {
			t.Errorf("%s global file: DialSSH: %v, want it skipped", name, err)
			continue
		}
		c.Close()
		// The same file as a user file is an error naming it.
		cfg = hermetic(t, ts)
		cfg.KnownHostsFiles = []string{file}
		err = dialErrFor(t, cfg)
		if !errors.Is(err, ErrKnownHosts) || !strings.Contains(err.Error(), "known hosts file "+file+":") {
			t.Errorf("%s user file: DialSSH: %v, want ErrKnownHosts naming %s", name, err, file)
		}
		checkMessage(t, err, "127.0.0.1")
	}

	// A bad further user file is named the same way.
	cfg = hermetic(t, ts)
	cfg.KnownHostsFiles = []string{bad}
	if err := dialErrFor(t, cfg); !errors.Is(err, ErrKnownHosts) || !strings.Contains(err.Error(), bad) {
		t.Errorf("DialSSH: %v, want ErrKnownHosts naming %s", err, bad)
	}
}

// A changed key names the file that holds the old one, whichever it is,
// in the message and in the ssh-keygen -R line.
func TestSSHDialChangedKeyNamesTheFileHoldingIt(t *testing.T) {
	t.Parallel()
	for _, where := range []string{"further", "global"} {
		t.Run(where, func(t *testing.T) {
			t.Parallel()
			ts := newTestServer(t)
			cfg := hermetic(t, ts)
			ca := newCA(t)
			// The first file has only a CA line for the host: the old plain
			// key is elsewhere, and that is the file to remove it from.
			writeKnownHosts(t, cfg, caLine(t, knownhosts.Normalize(ts.addr), ca))
			old := writeLines(t, "old", "# the old key", knownhosts.Line([]string{ts.addr}, otherKey(t)))
			if where == "further" {
				cfg.KnownHostsFiles = []string{old}
			} else {
				cfg.GlobalKnownHostsFiles = []string{old}
			}
			cfg.AcceptNewHostKey = true
			err := dialErrFor(t, cfg)
			hke := hostKeyErr(t, err)
			if !hke.Changed || hke.KnownHostsFile != old {
				t.Fatalf("%v: want a changed key held in %s", err, old)
			}
			if !strings.Contains(err.Error(), " but "+old+" has a different key") ||
				!strings.HasSuffix(err.Error(), "ssh-keygen -R '"+knownhosts.Normalize(ts.addr)+"' -f "+old) {
				t.Errorf("message %q", err)
			}
			checkMessage(t, err, "")
		})
	}
}

// A @revoked line refuses the key in whichever file it is, even when
// another file allows the key, and the error leads to that line.
func TestSSHDialRevokedAcrossFiles(t *testing.T) {
	t.Parallel()
	for _, where := range []string{"revoked in global", "revoked in user"} {
		t.Run(where, func(t *testing.T) {
			t.Parallel()
			ts := newTestServer(t)
			cfg := hermetic(t, ts)
			ed := ts.hostKeys[0].PublicKey()
			allow := knownhosts.Line([]string{ts.addr}, ed)
			var revokedIn string
			if where == "revoked in global" {
				writeKnownHosts(t, cfg, allow)
				revokedIn = writeLines(t, "global", "# revoked", revokedLine(ed))
				cfg.GlobalKnownHostsFiles = []string{revokedIn}
			} else {
				writeKnownHosts(t, cfg, "# revoked", revokedLine(ed))
				revokedIn = cfg.KnownHostsFile
				cfg.GlobalKnownHostsFiles = []string{writeLines(t, "global", allow)}
			}
			for _, insecure := range []bool{false, true} {
				cfg.InsecureIgnoreHostKey = insecure
				err := dialErrFor(t, cfg)
				hke := hostKeyErr(t, err)
				var rev *xknownhosts.RevokedError
				if !hke.Revoked || hke.KnownHostsFile != revokedIn || !errors.As(err, &rev) ||
					rev.Revoked.Filename != revokedIn || rev.Revoked.Line != 2 {
					t.Fatalf("insecure %v: %v (%+v), want a revoked key at %s:2", insecure, err, rev, revokedIn)
				}
				if !strings.Contains(err.Error(), "marked @revoked in "+revokedIn+";") {
					t.Errorf("message %q does not name %s", err, revokedIn)
				}
				checkMessage(t, err, "127.0.0.1")
			}
		})
	}
}

// @cert-authority lines count in every file, global ones included.
func TestSSHDialCertAuthorityInGlobalFile(t *testing.T) {
	t.Parallel()
	ca := newCA(t)
	_, cfg := certServer(t, ca, nil)
	global := writeLines(t, "global", caLine(t, "127.0.0.*", ca))
	cfg.GlobalKnownHostsFiles = []string{global}
	cfg.AcceptNewHostKey = true
	runOK(t, dialTest(t, cfg))
	if _, err := os.Stat(cfg.KnownHostsFile); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a host known through its CA was recorded: %v", err)
	}

	// A certificate from another CA is refused, naming the file with the
	// host's CA line.
	cfg.GlobalKnownHostsFiles = []string{writeLines(t, "global", caLine(t, "127.0.0.*", newCA(t)))}
	hke := hostKeyErr(t, dialErrFor(t, cfg))
	if !hke.InvalidCert || hke.KnownHostsFile != cfg.GlobalKnownHostsFiles[0] {
		t.Errorf("%v: want an invalid certificate, from the CA line's file", hke)
	}
}

// With HostKeyAlias keys are looked up and recorded under the alias alone,
// without the port, as in OpenSSH; entries for the real address are not
// consulted.
func TestSSHDialHostKeyAlias(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	cfg := hermetic(t, ts)
	cfg.HostKeyAlias = "web-alias"
	ed := ts.hostKeys[0].PublicKey()

	// The real address's entries (clientConfig's) do not count.
	if hke := hostKeyErr(t, dialErrFor(t, cfg)); !hke.Unknown || hke.Host != "web-alias" {
		t.Errorf("%v (host %q): want an unknown key for web-alias", hke, hke.Host)
	}

	writeKnownHosts(t, cfg, "web-alias "+keyFields(ed))
	runOK(t, dialTest(t, cfg))
	writeKnownHosts(t, cfg, "[web-alias]:"+strings.Split(ts.addr, ":")[1]+" "+keyFields(ed))
	if hke := hostKeyErr(t, dialErrFor(t, cfg)); !hke.Unknown {
		t.Errorf("%v: an entry with the port must not match the alias", hke)
	}

	// A changed key is reported, and to be removed, under the alias.
	writeKnownHosts(t, cfg, "web-alias "+keyFields(otherKey(t)))
	err := dialErrFor(t, cfg)
	if hke := hostKeyErr(t, err); !hke.Changed || !strings.Contains(err.Error(), "ssh-keygen -R 'web-alias' -f ") {
		t.Errorf("%v: want a changed key under web-alias", err)
	}

	// Accept-new records the alias, plain and hashed.
	for _, hash := range []bool{false, true} {
		cfg.KnownHostsFile = filepath.Join(t.TempDir(), "known_hosts")
		cfg.AcceptNewHostKey, cfg.HashKnownHosts = true, hash
		dialTest(t, cfg)
		got := strings.TrimSuffix(readFile(t, cfg.KnownHostsFile), "\n")
		if hash {
			checkHashed(t, got, "web-alias")
		} else if !strings.HasPrefix(got, "web-alias ") {
			t.Errorf("recorded %q, want it under web-alias", got)
		}
		cfg.AcceptNewHostKey = false
		dialTest(t, cfg)
	}
}

// With HostKeyAlias a host certificate must name the alias, as in OpenSSH,
// and the @cert-authority lines are those for the alias.
func TestSSHDialHostKeyAliasWithCertificate(t *testing.T) {
	t.Parallel()
	ca := newCA(t)
	_, cfg := certServer(t, ca, func(c *ssh.Certificate) { c.ValidPrincipals = []string{"web-alias"} })
	cfg.GlobalKnownHostsFiles = []string{}
	cfg.HostKeyAlias = "web-alias"
	writeKnownHosts(t, cfg, caLine(t, "web-*", ca))
	runOK(t, dialTest(t, cfg))

	_, cfg2 := certServer(t, ca, nil) // issued for 127.0.0.1
	cfg2.GlobalKnownHostsFiles, cfg2.HostKeyAlias = []string{}, "web-alias"
	writeKnownHosts(t, cfg2, caLine(t, "web-*", ca))
	hke := hostKeyErr(t, dialErrFor(t, cfg2))
	if !hke.InvalidCert || !strings.Contains(hke.CertProblem, "not for this host") {
		t.Errorf("%v: want a certificate not issued for the alias", hke)
	}
}

// checkHashed checks that line is an OpenSSH hashed entry (|1|salt|hash,
// HMAC-SHA1 of the name keyed with the salt) for name.
func checkHashed(t *testing.T, line, name string) {
	t.Helper()
	host, _, _ := strings.Cut(line, " ")
	parts := strings.Split(host, "|")
	if len(parts) != 4 || parts[0] != "" || parts[1] != "1" {
		t.Fatalf("recorded %q, want a |1|salt|hash entry", line)
	}
	salt, err1 := base64.StdEncoding.DecodeString(parts[2])
	sum, err2 := base64.StdEncoding.DecodeString(parts[3])
	mac := hmac.New(sha1.New, salt)
	mac.Write([]byte(name))
	if err1 != nil || err2 != nil || !bytes.Equal(mac.Sum(nil), sum) {
		t.Errorf("recorded %q: not the hash of %q", line, name)
	}
	if strings.Contains(line, "127.0.0.1") {
		t.Errorf("recorded %q names the host", line)
	}
}

func TestSSHDialHashKnownHostsRecordsHashedName(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	cfg := hermetic(t, ts)
	cfg.KnownHostsFile = filepath.Join(t.TempDir(), "known_hosts")
	cfg.AcceptNewHostKey, cfg.HashKnownHosts = true, true
	runOK(t, dialTest(t, cfg))
	recorded := readFile(t, cfg.KnownHostsFile)
	lines := strings.Split(strings.TrimSuffix(recorded, "\n"), "\n")
	if len(lines) != 1 {
		t.Fatalf("known_hosts:\n%s", recorded)
	}
	checkHashed(t, lines[0], knownhosts.Normalize(ts.addr)) // "[127.0.0.1]:port", as OpenSSH hashes it

	// Found again, without recording anything more; and a different key
	// under the hashed name is a change.
	cfg.AcceptNewHostKey = false
	runOK(t, dialTest(t, cfg))
	if got := readFile(t, cfg.KnownHostsFile); got != recorded {
		t.Errorf("known_hosts changed:\n%s", got)
	}
	host := strings.Fields(recorded)[0]
	writeKnownHosts(t, cfg, host+" "+keyFields(otherKey(t)))
	if hke := hostKeyErr(t, dialErrFor(t, cfg)); !hke.Changed {
		t.Errorf("%v: want a changed key", hke)
	}
}

// InsecureIgnoreHostKey (StrictHostKeyChecking no) connects to a host with
// an unknown key, records nothing and warns; a key that contradicts a
// record is refused all the same.
func TestSSHDialInsecureIgnoreHostKey(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	cfg := hermetic(t, ts)
	cfg.KnownHostsFile = filepath.Join(t.TempDir(), "known_hosts")
	cfg.InsecureIgnoreHostKey = true
	h := &recordHandler{}
	cfg.Logger = slog.New(h)
	runOK(t, dialTest(t, cfg))
	if _, err := os.Stat(cfg.KnownHostsFile); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the key was recorded: %v", err)
	}
	warnings := h.warnings()
	if len(warnings) != 1 || !strings.Contains(warnings[0], "HOST KEY NOT VERIFIED") ||
		!strings.Contains(warnings[0], knownhosts.Normalize(ts.addr)) ||
		!slices.ContainsFunc(ts.fingerprints(), func(fp string) bool { return strings.Contains(warnings[0], fp) }) {
		t.Errorf("warnings %q, want one naming the host and the key", warnings)
	}

	cfg.Logger = nil // still connects, silently
	dialTest(t, cfg)

	// A changed key is refused, with the usual message.
	writeKnownHosts(t, cfg, knownhosts.Line([]string{ts.addr}, otherKey(t)))
	err := dialErrFor(t, cfg)
	if hke := hostKeyErr(t, err); !hke.Changed || !strings.Contains(err.Error(), "ssh-keygen -R '"+hke.Host+"' -f "+cfg.KnownHostsFile) {
		t.Errorf("%v: want a changed key", err)
	}
}

// With InsecureIgnoreHostKey a host known only through its CA whose
// certificate does not pass is refused: the CA line is a record it
// contradicts.
func TestSSHDialInsecureIgnoreHostKeyRefusesInvalidCert(t *testing.T) {
	t.Parallel()
	ca := newCA(t)
	ts, cfg := certServer(t, ca, func(c *ssh.Certificate) { c.ValidPrincipals = []string{"elsewhere"} })
	cfg.GlobalKnownHostsFiles = []string{}
	cfg.InsecureIgnoreHostKey = true
	writeKnownHosts(t, cfg, caLine(t, knownhosts.Normalize(ts.addr), ca))
	if hke := hostKeyErr(t, dialErrFor(t, cfg)); !hke.InvalidCert {
		t.Errorf("%v: want an invalid certificate", hke)
	}
	// Unknown to known_hosts altogether: accepted.
	writeKnownHosts(t, cfg)
	dialTest(t, cfg)
}
