package transport

import (
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skeema/knownhosts"
	"golang.org/x/crypto/ssh"
	xknownhosts "golang.org/x/crypto/ssh/knownhosts"
)

// writeKnownHosts replaces the config's known_hosts with lines.
func writeKnownHosts(t *testing.T, cfg SSHConfig, lines ...string) {
	t.Helper()
	must(t, os.WriteFile(cfg.KnownHostsFile, []byte(strings.Join(lines, "\n")+"\n"), 0o600))
}

func otherKey(t *testing.T) ssh.PublicKey {
	pub, _, err := ed25519.GenerateKey(rand.Reader)
	must(t, err)
	k, err := ssh.NewPublicKey(pub)
	must(t, err)
	return k
}

func (ts *testServer) fingerprints() []string {
	var fps []string
	for _, k := range ts.hostKeys {
		fps = append(fps, ssh.FingerprintSHA256(k.PublicKey()))
	}
	return fps
}

func TestSSHDialUnknownHostKeyIsRefused(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	cfg := ts.clientConfig(t)
	cfg.KnownHostsFile = filepath.Join(t.TempDir(), "missing", "known_hosts")
	err := dialErrFor(t, cfg)
	var hke *HostKeyError
	if !errors.Is(err, ErrHostKey) || !errors.As(err, &hke) || !hke.Unknown || hke.Changed {
		t.Fatalf("DialSSH: %v, want an unknown-host-key error", err)
	}
	if hke.Host != "["+strings.Replace(ts.addr, ":", "]:", 1) || hke.KnownHostsFile != cfg.KnownHostsFile {
		t.Errorf("Host %q, KnownHostsFile %q", hke.Host, hke.KnownHostsFile)
	}
	fp := hke.Fingerprint
	if fp != ts.fingerprints()[0] && fp != ts.fingerprints()[1] {
		t.Errorf("fingerprint %s is not one of the server's %v", fp, ts.fingerprints())
	}
	want := "unknown host key " + hke.KeyType + " " + fp + " (not in " + cfg.KnownHostsFile + "); " +
		"check the fingerprint, then rerun with --accept-new-host-key to record it"
	if err.Error() != want {
		t.Errorf("message\n%q, want\n%q", err, want)
	}
	checkMessage(t, err, "127.0.0.1")
	if _, err := os.Stat(cfg.KnownHostsFile); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("known_hosts was created without AcceptNewHostKey: %v", err)
	}
}

func TestSSHDialAcceptNewHostKeyRecordsIt(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	cfg := ts.clientConfig(t)
	dir := filepath.Join(t.TempDir(), "new")
	cfg.KnownHostsFile = filepath.Join(dir, "known_hosts")
	cfg.AcceptNewHostKey = true
	s := dialTest(t, cfg)
	if status, err := s.Run(runCtx(t), Request{Command: "exit 0"}); err != nil || status != 0 {
		t.Fatalf("Run: %d, %v", status, err)
	}
	for path, want := range map[string]os.FileMode{dir: 0o700 | os.ModeDir, cfg.KnownHostsFile: 0o600} {
		if st, err := os.Stat(path); err != nil || st.Mode() != want {
			t.Errorf("%s: mode %v, %v; want %v", path, st.Mode(), err, want)
		}
	}

	cfg.AcceptNewHostKey = false
	dialTest(t, cfg)
	b, err := os.ReadFile(cfg.KnownHostsFile)
	must(t, err)
	if n := strings.Count(string(b), "\n"); n != 1 {
		t.Errorf("known_hosts has %d lines, want 1:\n%s", n, b)
	}
}

func TestSSHDialAcceptNewHostKeyKeepsUnterminatedLastLine(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	cfg := ts.clientConfig(t)
	other := knownhosts.Line([]string{"elsewhere"}, otherKey(t))
	must(t, os.WriteFile(cfg.KnownHostsFile, []byte(other), 0o600)) // no final newline
	cfg.AcceptNewHostKey = true
	dialTest(t, cfg)
	cfg.AcceptNewHostKey = false
	dialTest(t, cfg)
	b, err := os.ReadFile(cfg.KnownHostsFile)
	must(t, err)
	if lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n"); len(lines) != 2 || lines[0] != other {
		t.Errorf("known_hosts:\n%s", b)
	}
}

func TestSSHDialChangedHostKeyIsRefusedEvenWithAcceptNew(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	cfg := ts.clientConfig(t)
	writeKnownHosts(t, cfg, knownhosts.Line([]string{ts.addr}, otherKey(t)))
	before, err := os.ReadFile(cfg.KnownHostsFile)
	must(t, err)
	cfg.AcceptNewHostKey = true
	err = dialErrFor(t, cfg)
	var hke *HostKeyError
	if !errors.Is(err, ErrHostKey) || !errors.As(err, &hke) || !hke.Changed || hke.Unknown {
		t.Fatalf("DialSSH: %v, want a changed-host-key error", err)
	}
	// The known key is ED25519, so that is what the host had to prove.
	if hke.KeyType != "ED25519" || hke.Fingerprint != ts.fingerprints()[0] {
		t.Errorf("offered %s %s, want the server's ED25519 key %s", hke.KeyType, hke.Fingerprint, ts.fingerprints()[0])
	}
	want := "HOST KEY CHANGED: the host offered ED25519 " + hke.Fingerprint + " but " + cfg.KnownHostsFile +
		" has a different key for it; refusing (possible man-in-the-middle); if the host was reinstalled, " +
		"remove the old entry with ssh-keygen -R '" + hke.Host + "' -f " + cfg.KnownHostsFile
	if err.Error() != want {
		t.Errorf("message\n%q, want\n%q", err, want)
	}
	checkMessage(t, err, "")
	after, err := os.ReadFile(cfg.KnownHostsFile)
	must(t, err)
	if string(after) != string(before) {
		t.Errorf("known_hosts was modified:\n%s", after)
	}
}

// x/crypto prefers ECDSA host keys; with only the ED25519 key in
// known_hosts it would report a mismatch (golang/go#29286) unless the
// algorithms are steered by known_hosts.
func TestSSHDialKnownHostsListingOnlyED25519(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	cfg := ts.clientConfig(t)
	writeKnownHosts(t, cfg, knownhosts.Line([]string{ts.addr}, ts.hostKeys[0].PublicKey()))
	s := dialTest(t, cfg)
	if status, err := s.Run(runCtx(t), Request{Command: "exit 0"}); err != nil || status != 0 {
		t.Errorf("Run: %d, %v", status, err)
	}
}

func TestSSHDialKnownHostsListingOnlyECDSA(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	cfg := ts.clientConfig(t)
	writeKnownHosts(t, cfg, knownhosts.Line([]string{ts.addr}, ts.hostKeys[1].PublicKey()))
	dialTest(t, cfg)
}

func TestSSHDialHashedKnownHostsEntry(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	cfg := ts.clientConfig(t)
	hashed := func(k ssh.PublicKey) string {
		return xknownhosts.HashHostname(knownhosts.Normalize(ts.addr)) + " " +
			strings.SplitN(knownhosts.Line([]string{ts.addr}, k), " ", 2)[1]
	}
	writeKnownHosts(t, cfg, hashed(ts.hostKeys[0].PublicKey()))
	dialTest(t, cfg)

	// The hashed entry is really consulted: a different hashed key is a
	// change, not an unknown host.
	writeKnownHosts(t, cfg, hashed(otherKey(t)))
	var hke *HostKeyError
	if err := dialErrFor(t, cfg); !errors.As(err, &hke) || !hke.Changed {
		t.Errorf("DialSSH: %v, want a changed-host-key error", err)
	}
}

func TestSSHDialRevokedHostKeyIsRefused(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	cfg := ts.clientConfig(t)
	ecdsaKey := ts.hostKeys[1].PublicKey()
	revoked := "@revoked * " + strings.SplitN(knownhosts.Line([]string{"x"}, ecdsaKey), " ", 2)[1]
	writeKnownHosts(t, cfg, knownhosts.Line([]string{ts.addr}, ecdsaKey), revoked)
	var hke *HostKeyError
	if err := dialErrFor(t, cfg); !errors.As(err, &hke) || !hke.Revoked || !errors.Is(err, ErrHostKey) {
		t.Errorf("DialSSH: %v, want a revoked-host-key error", err)
	}
}

func TestSSHDialBadKnownHostsFile(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	cfg := ts.clientConfig(t)
	writeKnownHosts(t, cfg, "this is not a known_hosts line")
	err := dialErrFor(t, cfg)
	if !errors.Is(err, ErrKnownHosts) {
		t.Fatalf("DialSSH: %v, want ErrKnownHosts", err)
	}
	checkMessage(t, err, "")
}

func TestKeyTypeName(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		ssh.KeyAlgoED25519:                    "ED25519",
		ssh.KeyAlgoECDSA256:                   "ECDSA",
		ssh.KeyAlgoECDSA521:                   "ECDSA",
		ssh.KeyAlgoRSA:                        "RSA",
		ssh.KeyAlgoSKED25519:                  "ED25519-SK",
		ssh.KeyAlgoSKECDSA256:                 "ECDSA-SK",
		ssh.CertAlgoED25519v01:                "ED25519-CERT",
		"sk-ssh-ed25519-cert-v01@openssh.com": "ED25519-SK-CERT",
	} {
		if got := keyTypeName(in); got != want {
			t.Errorf("keyTypeName(%q) = %q, want %q", in, got, want)
		}
	}
}
