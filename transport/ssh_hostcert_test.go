package transport

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/skeema/knownhosts"
	"golang.org/x/crypto/ssh"
)

func newCA(t *testing.T) ssh.Signer {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	must(t, err)
	s, err := ssh.NewSignerFromKey(priv)
	must(t, err)
	return s
}

// withHostCert makes the server offer nothing but a certificate for its
// ed25519 host key, signed by ca: valid for 127.0.0.1 from an hour ago to
// an hour ahead, unless edit changes that. With no plain key to fall back
// on, every handshake that succeeds went through the certificate.
func withHostCert(ca ssh.Signer, edit func(*ssh.Certificate)) testServerOpt {
	return func(ts *testServer) {
		hostKey := ts.hostKeys[0]
		cert := &ssh.Certificate{
			Key:             hostKey.PublicKey(),
			CertType:        ssh.HostCert,
			KeyId:           "test host",
			ValidPrincipals: []string{"127.0.0.1"},
			ValidAfter:      uint64(time.Now().Add(-time.Hour).Unix()),
			ValidBefore:     uint64(time.Now().Add(time.Hour).Unix()),
		}
		if edit != nil {
			edit(cert)
		}
		must(ts.t, cert.SignCert(rand.Reader, ca))
		s, err := ssh.NewCertSigner(cert, hostKey)
		must(ts.t, err)
		ts.plainKey = hostKey.PublicKey()
		ts.hostKeys = []ssh.Signer{s}
	}
}

// certServer starts a server offering only a host certificate and returns
// it with a client config whose known_hosts file does not exist yet.
func certServer(t *testing.T, ca ssh.Signer, edit func(*ssh.Certificate)) (*testServer, SSHConfig) {
	t.Helper()
	ts := newTestServer(t, withHostCert(ca, edit))
	cfg := ts.clientConfig(t)
	cfg.KnownHostsFile = filepath.Join(t.TempDir(), "known_hosts")
	return ts, cfg
}

func caLine(t *testing.T, pattern string, ca ssh.Signer) string {
	t.Helper()
	var b bytes.Buffer
	must(t, knownhosts.WriteKnownHostCA(&b, pattern, ca.PublicKey()))
	return strings.TrimSuffix(b.String(), "\n")
}

func readFile(t *testing.T, file string) string {
	t.Helper()
	b, err := os.ReadFile(file)
	must(t, err)
	return string(b)
}

// The first contact with a host that presents a certificate nobody in
// known_hosts vouches for records the certified plain key, as OpenSSH does,
// and the next contact checks the certificate's key against that record.
func TestSSHDialHostCertFirstContactRecordsPlainKey(t *testing.T) {
	t.Parallel()
	ts, cfg := certServer(t, newCA(t), nil)

	// Without AcceptNewHostKey: an unknown key, described by the plain key
	// that ssh-keygen -l shows for the host's key file.
	err := dialErrFor(t, cfg)
	var hke *HostKeyError
	if !errors.As(err, &hke) || !hke.Unknown || !errors.Is(err, ErrHostKey) {
		t.Fatalf("DialSSH: %v, want an unknown-host-key error", err)
	}
	if hke.KeyType != "ED25519" || hke.Fingerprint != ssh.FingerprintSHA256(ts.plainKey) {
		t.Errorf("offered %s %s, want ED25519 %s", hke.KeyType, hke.Fingerprint, ssh.FingerprintSHA256(ts.plainKey))
	}
	checkMessage(t, err, "127.0.0.1")

	cfg.AcceptNewHostKey = true
	s := dialTest(t, cfg)
	if status, err := s.Run(runCtx(t), Request{Command: "exit 0"}); err != nil || status != 0 {
		t.Fatalf("Run: %d, %v", status, err)
	}
	want := knownhosts.Line([]string{ts.addr}, ts.plainKey) + "\n"
	if got := readFile(t, cfg.KnownHostsFile); got != want {
		t.Fatalf("known_hosts:\n%s\nwant the plain key:\n%s", got, want)
	}

	cfg.AcceptNewHostKey = false
	s = dialTest(t, cfg)
	if status, err := s.Run(runCtx(t), Request{Command: "exit 0"}); err != nil || status != 0 {
		t.Fatalf("Run: %d, %v", status, err)
	}
	if got := readFile(t, cfg.KnownHostsFile); got != want {
		t.Errorf("known_hosts changed on the second contact:\n%s", got)
	}
}

// A certificate is no way around a changed key: the key inside it is
// checked like any host key.
func TestSSHDialHostCertWithChangedPlainKeyIsRefused(t *testing.T) {
	t.Parallel()
	ts, cfg := certServer(t, newCA(t), nil)
	writeKnownHosts(t, cfg, knownhosts.Line([]string{ts.addr}, otherKey(t)))
	before := readFile(t, cfg.KnownHostsFile)
	cfg.AcceptNewHostKey = true
	err := dialErrFor(t, cfg)
	var hke *HostKeyError
	if !errors.As(err, &hke) || !hke.Changed || hke.Unknown || !errors.Is(err, ErrHostKey) {
		t.Fatalf("DialSSH: %v, want a changed-host-key error", err)
	}
	fp := ssh.FingerprintSHA256(ts.plainKey)
	want := "HOST KEY CHANGED: the host offered ED25519 " + fp + " but " + cfg.KnownHostsFile +
		" has a different key for it; refusing (possible man-in-the-middle); if the host was reinstalled, " +
		"remove the old entry with ssh-keygen -R '" + hke.Host + "' -f " + cfg.KnownHostsFile
	if err.Error() != want {
		t.Errorf("message\n%q, want\n%q", err, want)
	}
	checkMessage(t, err, "")
	if after := readFile(t, cfg.KnownHostsFile); after != before {
		t.Errorf("known_hosts was modified:\n%s", after)
	}
}

// A plain key that known_hosts marks @revoked stays refused when it comes
// inside a certificate, and so does a certificate signed by a revoked CA.
func TestSSHDialHostCertRevoked(t *testing.T) {
	t.Parallel()
	revoked := func(k ssh.PublicKey) string {
		return "@revoked * " + strings.SplitN(knownhosts.Line([]string{"x"}, k), " ", 2)[1]
	}
	t.Run("key", func(t *testing.T) {
		t.Parallel()
		ts, cfg := certServer(t, newCA(t), nil)
		writeKnownHosts(t, cfg, knownhosts.Line([]string{ts.addr}, ts.plainKey), revoked(ts.plainKey))
		var hke *HostKeyError
		if err := dialErrFor(t, cfg); !errors.As(err, &hke) || !hke.Revoked {
			t.Fatalf("DialSSH: %v, want a revoked-host-key error", err)
		}
		if hke.Fingerprint != ssh.FingerprintSHA256(ts.plainKey) {
			t.Errorf("fingerprint %s, want the revoked key's %s", hke.Fingerprint, ssh.FingerprintSHA256(ts.plainKey))
		}
		checkMessage(t, hke, "127.0.0.1")
	})
	t.Run("ca", func(t *testing.T) {
		t.Parallel()
		ca := newCA(t)
		ts, cfg := certServer(t, ca, nil)
		writeKnownHosts(t, cfg, knownhosts.Line([]string{ts.addr}, ts.plainKey), revoked(ca.PublicKey()))
		var hke *HostKeyError
		err := dialErrFor(t, cfg)
		if !errors.As(err, &hke) || !hke.Revoked {
			t.Fatalf("DialSSH: %v, want a revoked-host-key error", err)
		}
		if hke.Fingerprint != ssh.FingerprintSHA256(ca.PublicKey()) || !strings.Contains(err.Error(), "CA") {
			t.Errorf("%v: want the revoked CA named, %s", err, ssh.FingerprintSHA256(ca.PublicKey()))
		}
		checkMessage(t, err, "127.0.0.1")
	})
}

// A @cert-authority line vouches for every host its pattern matches: a
// host never seen before connects with a certificate that CA signed, and
// nothing is recorded.
func TestSSHDialHostCertTrustedCA(t *testing.T) {
	t.Parallel()
	for name, pattern := range map[string]func(addr string) string{
		"exact": knownhosts.Normalize,
		// A pattern without a port matches any port (skeema/knownhosts),
		// as in OpenSSH.
		"wildcard": func(string) string { return "127.0.0.*" },
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ca := newCA(t)
			ts, cfg := certServer(t, ca, nil)
			writeKnownHosts(t, cfg, caLine(t, pattern(ts.addr), ca))
			before := readFile(t, cfg.KnownHostsFile)
			cfg.AcceptNewHostKey = true // must not record anything: the host is known through its CA
			s := dialTest(t, cfg)
			if status, err := s.Run(runCtx(t), Request{Command: "exit 0"}); err != nil || status != 0 {
				t.Fatalf("Run: %d, %v", status, err)
			}
			if after := readFile(t, cfg.KnownHostsFile); after != before {
				t.Errorf("known_hosts was modified:\n%s", after)
			}
		})
	}
}

// A certificate from the trusted CA that is not valid for this host and
// time is refused, even with AcceptNewHostKey: known_hosts vouches for the
// host through its CA, so the host is not new and its plain key is not
// recorded instead.
func TestSSHDialHostCertInvalidWithTrustedCAIsRefused(t *testing.T) {
	t.Parallel()
	past := uint64(time.Now().Add(-2 * time.Hour).Unix())
	future := uint64(time.Now().Add(2 * time.Hour).Unix())
	for name, tc := range map[string]struct {
		edit func(*ssh.Certificate)
		why  string
	}{
		"expired":       {func(c *ssh.Certificate) { c.ValidAfter, c.ValidBefore = past-3600, past }, "it expired at "},
		"not yet valid": {func(c *ssh.Certificate) { c.ValidAfter, c.ValidBefore = future, future+3600 }, "it is not valid before "},
		"principal": {func(c *ssh.Certificate) { c.ValidPrincipals = []string{"elsewhere.example", "other"} },
			"it is issued for elsewhere.example,other, not for this host"},
		"user cert": {func(c *ssh.Certificate) { c.CertType = ssh.UserCert }, "it is a user certificate, not a host certificate"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ca := newCA(t)
			ts, cfg := certServer(t, ca, tc.edit)
			writeKnownHosts(t, cfg, caLine(t, knownhosts.Normalize(ts.addr), ca))
			before := readFile(t, cfg.KnownHostsFile)
			for _, accept := range []bool{false, true} {
				cfg.AcceptNewHostKey = accept
				err := dialErrFor(t, cfg)
				var hke *HostKeyError
				if !errors.As(err, &hke) || !hke.InvalidCert || hke.Unknown || hke.Changed || hke.Revoked ||
					!errors.Is(err, ErrHostKey) {
					t.Fatalf("accept-new %v: DialSSH: %v, want an invalid-certificate error", accept, err)
				}
				if hke.KeyType != "ED25519-CERT" || hke.Fingerprint != ssh.FingerprintSHA256(ts.plainKey) {
					t.Errorf("offered %s %s, want ED25519-CERT %s", hke.KeyType, hke.Fingerprint, ssh.FingerprintSHA256(ts.plainKey))
				}
				if !strings.Contains(err.Error(), tc.why) {
					t.Errorf("message %q does not say %q", err, tc.why)
				}
				checkMessage(t, err, "127.0.0.1")
			}
			if after := readFile(t, cfg.KnownHostsFile); after != before {
				t.Errorf("known_hosts was modified:\n%s", after)
			}
		})
	}
}

// A certificate that no @cert-authority line vouches for, from a host that
// known_hosts knows only through another CA, is refused: it is not a new
// host.
func TestSSHDialHostCertFromUntrustedCAIsRefused(t *testing.T) {
	t.Parallel()
	ts, cfg := certServer(t, newCA(t), nil)
	writeKnownHosts(t, cfg, caLine(t, knownhosts.Normalize(ts.addr), newCA(t)))
	before := readFile(t, cfg.KnownHostsFile)
	cfg.AcceptNewHostKey = true
	err := dialErrFor(t, cfg)
	var hke *HostKeyError
	if !errors.As(err, &hke) || !hke.InvalidCert {
		t.Fatalf("DialSSH: %v, want an invalid-certificate error", err)
	}
	if !strings.Contains(err.Error(), "no @cert-authority line for the host holds the CA that signed it") {
		t.Errorf("message %q does not say the CA is not trusted", err)
	}
	checkMessage(t, err, "127.0.0.1")
	if after := readFile(t, cfg.KnownHostsFile); after != before {
		t.Errorf("known_hosts was modified:\n%s", after)
	}
}

// A host known by its plain key as well as through its CA is judged by
// that key when its certificate does not pass (as in OpenSSH): an expired
// certificate does not stop it, a different key inside it is a changed key.
func TestSSHDialHostCertInvalidButPlainKeyRecorded(t *testing.T) {
	t.Parallel()
	ca := newCA(t)
	past := uint64(time.Now().Add(-time.Hour).Unix())
	ts, cfg := certServer(t, ca, func(c *ssh.Certificate) { c.ValidAfter, c.ValidBefore = past-3600, past })
	writeKnownHosts(t, cfg, caLine(t, knownhosts.Normalize(ts.addr), ca), knownhosts.Line([]string{ts.addr}, ts.plainKey))
	dialTest(t, cfg)

	writeKnownHosts(t, cfg, caLine(t, knownhosts.Normalize(ts.addr), ca), knownhosts.Line([]string{ts.addr}, otherKey(t)))
	var hke *HostKeyError
	if err := dialErrFor(t, cfg); !errors.As(err, &hke) || !hke.Changed || hke.Fingerprint != ssh.FingerprintSHA256(ts.plainKey) {
		t.Errorf("DialSSH: %v, want a changed-host-key error for the key inside the certificate", err)
	}
}
