package e2e

import (
	"context"
	"crypto"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/agent"

	"github.com/hoistdev/hoist/e2e/sshd"
	"github.com/hoistdev/hoist/transport"
)

// authAgent runs an in-process ssh-agent holding keyring's keys and returns
// its socket, for SSHConfig.IdentityAgent.
func authAgent(t *testing.T, keyring agent.Agent) string {
	t.Helper()
	sock := filepath.Join(t.TempDir(), "agent.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { _ = agent.ServeAgent(keyring, c); c.Close() }()
		}
	}()
	return sock
}

// authKey is the private key in file (unencrypted, OpenSSH's format).
func authKey(t *testing.T, file string) crypto.PrivateKey {
	t.Helper()
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	k, err := ssh.ParseRawPrivateKey(raw)
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	if p, ok := k.(*ed25519.PrivateKey); ok {
		return *p
	}
	return k
}

// authWriteKey writes key to dir/name in OpenSSH's format, encrypted when
// passphrase is not empty.
func authWriteKey(t *testing.T, dir, name string, key crypto.PrivateKey, passphrase string) string {
	t.Helper()
	var block *pem.Block
	var err error
	if passphrase == "" {
		block, err = ssh.MarshalPrivateKey(key, "hoist-e2e")
	} else {
		block, err = ssh.MarshalPrivateKeyWithPassphrase(key, "hoist-e2e", []byte(passphrase))
	}
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, name)
	if err := os.WriteFile(file, pem.EncodeToMemory(block), 0o600); err != nil {
		t.Fatal(err)
	}
	return file
}

func authNewKey(t *testing.T) ed25519.PrivateKey {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return priv
}

func authPub(t *testing.T, key crypto.PrivateKey) ssh.PublicKey {
	t.Helper()
	s, err := ssh.NewSignerFromKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return s.PublicKey()
}

func authDialErr(t *testing.T, cfg transport.SSHConfig) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	tr, err := transport.DialSSH(ctx, cfg)
	if err == nil {
		tr.Close()
		t.Fatalf("dial %s succeeded, want an error", cfg.Target)
	}
	return err
}

// TestAuthIdentitiesOnlyWithinMaxAuthTries: sshd allows 6 authentication
// attempts and the agent holds 10 keys the host does not accept before the
// one it does. With IdentitiesOnly and that key's file, only that key is
// offered and the login works, and with another key's file the agent's keys
// are not offered at all; offering what the agent has instead makes sshd
// hang up, and the error says what to do: IdentitiesOnly. A key named with
// -i goes before the agent's other keys even without IdentitiesOnly, and
// even when only the agent can use it (its file is passphrase-protected).
//
// Not parallel: it sets HOME, so that no default key of whoever runs the
// tests takes part.
func TestAuthIdentitiesOnlyWithinMaxAuthTries(t *testing.T) {
	h := sshd.Start(t, sshd.Options{})
	h.Configure(t, "MaxAuthTries 6")
	t.Setenv("HOME", t.TempDir())

	keyring := agent.NewKeyring()
	for i := 0; i < 10; i++ {
		if err := keyring.Add(agent.AddedKey{PrivateKey: authNewKey(t)}); err != nil {
			t.Fatal(err)
		}
	}
	right := authKey(t, h.KeyFile)
	if err := keyring.Add(agent.AddedKey{PrivateKey: right}); err != nil {
		t.Fatal(err)
	}
	base := sshConfig(h)
	base.NoAgent, base.IdentityAgent = false, authAgent(t, keyring)

	t.Run("IdentitiesOnly", func(t *testing.T) {
		cfg := base
		cfg.IdentitiesOnly = true
		tr := dial(t, cfg)
		if got := tr.Target(); got != h.Target() {
			t.Errorf("Target %q, want %q", got, h.Target())
		}
	})

	t.Run("IdentitiesOnly leaves the agent's other keys out", func(t *testing.T) {
		cfg := base
		cfg.IdentitiesOnly = true
		stranger := authWriteKey(t, t.TempDir(), "id_stranger", authNewKey(t), "")
		cfg.IdentityFiles = []string{stranger}
		err := authDialErr(t, cfg)
		want := "authentication failed for user " + h.User + " (tried: " + stranger +
			"), skipped 11 ssh-agent keys not among the identity files (IdentitiesOnly);"
		if !errors.Is(err, transport.ErrAuth) || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("dial: %v\nwant ErrAuth starting %q", err, want)
		}
	})

	t.Run("agent keys", func(t *testing.T) {
		cfg := base
		cfg.IdentityFiles = nil // the empty HOME has no default keys
		err := authDialErr(t, cfg)
		var de *transport.DialError
		if !errors.Is(err, transport.ErrAuth) || !errors.As(err, &de) {
			t.Fatalf("dial: %v, want ErrAuth", err)
		}
		t.Logf("the error: %v", err)
		for _, want := range []string{
			"authentication failed for user " + h.User + ": the host disconnected after too many authentication failures, with 11 keys to offer (tried: ssh-agent);",
			"set IdentitiesOnly (-o IdentitiesOnly=yes, or IdentitiesOnly yes in ~/.ssh/config) and name the key the host accepts with -i FILE or IdentityFile",
		} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("message %q\ndoes not contain %q", err, want)
			}
		}
		if strings.Contains(err.Error(), h.Addr) || strings.Contains(err.Error(), "127.0.0.1") {
			t.Errorf("message %q names the host, which callers put in front", err)
		}
	})

	t.Run("locked -i held by the agent", func(t *testing.T) {
		cfg := base
		cfg.IdentityFiles = []string{authWriteKey(t, t.TempDir(), "id_locked", right, "secret")}
		dial(t, cfg)
	})
}

// TestAuthUserCertificate: sshd trusts a user CA and has no authorized key
// for the user's key; the certificate beside the key file, or named in
// CertificateFiles for a key only the agent holds, logs in.
func TestAuthUserCertificate(t *testing.T) {
	t.Parallel()
	h := sshd.Start(t, sshd.Options{})
	ca := authNewKey(t)
	caFile := filepath.Join(t.TempDir(), "user_ca.pub")
	if err := os.WriteFile(caFile, ssh.MarshalAuthorizedKey(authPub(t, ca)), 0o644); err != nil {
		t.Fatal(err)
	}
	h.Configure(t, "TrustedUserCAKeys "+caFile)
	caSigner, err := ssh.NewSignerFromKey(ca)
	if err != nil {
		t.Fatal(err)
	}
	writeCert := func(key crypto.PrivateKey, file string) {
		t.Helper()
		cert := &ssh.Certificate{
			Key:             authPub(t, key),
			CertType:        ssh.UserCert,
			KeyId:           "hoist e2e",
			ValidPrincipals: []string{h.User},
			ValidAfter:      uint64(time.Now().Add(-time.Hour).Unix()),
			ValidBefore:     uint64(time.Now().Add(time.Hour).Unix()),
			Permissions:     ssh.Permissions{Extensions: map[string]string{"permit-pty": ""}},
		}
		if err := cert.SignCert(rand.Reader, caSigner); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(file, ssh.MarshalAuthorizedKey(cert), 0o644); err != nil {
			t.Fatal(err)
		}
	}

	t.Run("beside the key", func(t *testing.T) {
		key := authNewKey(t)
		file := authWriteKey(t, t.TempDir(), "id_ed25519", key, "")
		cfg := sshConfig(h)
		cfg.IdentityFiles = []string{file}
		if err := authDialErr(t, cfg); !errors.Is(err, transport.ErrAuth) {
			t.Fatalf("dial without the certificate: %v, want ErrAuth", err)
		}
		writeCert(key, file+"-cert.pub")
		dial(t, cfg)
	})

	t.Run("CertificateFiles with an agent key", func(t *testing.T) {
		key := authNewKey(t)
		keyring := agent.NewKeyring()
		if err := keyring.Add(agent.AddedKey{PrivateKey: key}); err != nil {
			t.Fatal(err)
		}
		cert := filepath.Join(t.TempDir(), "agent-key-cert.pub")
		writeCert(key, cert)
		cfg := sshConfig(h)
		cfg.IdentityFiles = []string{authWriteKey(t, t.TempDir(), "id_stranger", authNewKey(t), "")}
		cfg.NoAgent, cfg.IdentityAgent = false, authAgent(t, keyring)
		if err := authDialErr(t, cfg); !errors.Is(err, transport.ErrAuth) {
			t.Fatalf("dial without the certificate: %v, want ErrAuth", err)
		}
		cfg.CertificateFiles = []string{cert}
		dial(t, cfg)
	})
}

// TestAuthPassphrase: a passphrase-protected key file logs in with its
// passphrase; a wrong one is an identity error naming the file.
func TestAuthPassphrase(t *testing.T) {
	t.Parallel()
	h := sshd.Start(t, sshd.Options{})
	locked := authWriteKey(t, t.TempDir(), "id_locked", authKey(t, h.KeyFile), "secret")
	cfg := sshConfig(h)
	cfg.IdentityFiles = []string{locked}
	var asked []string
	cfg.Passphrase = func(file string) ([]byte, error) {
		asked = append(asked, file)
		return []byte("secret"), nil
	}
	dial(t, cfg)
	if len(asked) != 1 || asked[0] != locked {
		t.Errorf("asked for the passphrases of %q, want %q", asked, locked)
	}

	cfg.Passphrase = func(string) ([]byte, error) { return []byte("not it"), nil }
	err := authDialErr(t, cfg)
	if !errors.Is(err, transport.ErrIdentity) || !errors.Is(err, x509.IncorrectPasswordError) ||
		!strings.HasPrefix(err.Error(), "identity file "+locked+": wrong passphrase;") {
		t.Errorf("dial with a wrong passphrase: %v, want ErrIdentity naming %s", err, locked)
	}

	// Without Passphrase the key is skipped and named.
	cfg.Passphrase = nil
	err = authDialErr(t, cfg)
	if !errors.Is(err, transport.ErrAuth) || !strings.Contains(err.Error(), locked+" is passphrase-protected") {
		t.Errorf("dial without Passphrase: %v, want ErrAuth naming %s", err, locked)
	}
}

// TestDialErrorsSayTheirOwnRemedy: only a connection that could not be made
// suggests checking that sshd is running. A key the host refuses and a host
// key not in known_hosts come from a running sshd, so their errors name the
// key or the host key to check instead, on one line.
func TestDialErrorsSayTheirOwnRemedy(t *testing.T) {
	t.Parallel()
	h := sshd.Start(t, sshd.Options{})
	dir := t.TempDir()

	wrongKey := sshConfig(h)
	wrongKey.IdentityFiles = []string{authWriteKey(t, dir, "other", authNewKey(t), "")}
	wrongKey.IdentitiesOnly = true

	unknownHost := sshConfig(h)
	unknownHost.KnownHostsFile = filepath.Join(dir, "known_hosts")
	if err := os.WriteFile(unknownHost.KnownHostsFile, nil, 0o600); err != nil {
		t.Fatal(err)
	}

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ln.Addr().String()
	ln.Close()
	noServer := sshConfig(h)
	noServer.Target = h.User + "@" + closed

	for _, tc := range []struct {
		name string
		cfg  transport.SSHConfig
		kind error
		want string
	}{
		{"key refused", wrongKey, transport.ErrAuth, "other"},
		{"host key unknown", unknownHost, transport.ErrHostKey, "known_hosts"},
		{"nothing listening", noServer, transport.ErrUnreachable, "sshd is running"},
	} {
		err := authDialErr(t, tc.cfg)
		msg := err.Error()
		t.Logf("%s: %s", tc.name, msg)
		if !errors.Is(err, tc.kind) {
			t.Errorf("%s: error is not %v: %s", tc.name, tc.kind, msg)
		}
		if !strings.Contains(msg, tc.want) {
			t.Errorf("%s: error does not name %q: %s", tc.name, tc.want, msg)
		}
		if tc.kind != transport.ErrUnreachable && strings.Contains(msg, "sshd is running") {
			t.Errorf("%s: a running sshd answered, yet the error suggests checking it runs: %s", tc.name, msg)
		}
		if strings.Contains(msg, "\n") {
			t.Errorf("%s: error is more than one line: %q", tc.name, msg)
		}
	}
}
