package transport

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/skeema/knownhosts"
	"golang.org/x/crypto/ssh"
)

// pattern is n bytes that reveal truncation and reordering.
func pattern(n int, tag byte) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = tag + byte(i%7)
	}
	return b
}

// expect waits for the next event and checks it.
func (ts *testServer) expect(t *testing.T, want string) {
	t.Helper()
	select {
	case got := <-ts.events:
		if got != want {
			t.Fatalf("server event %q, want %q", got, want)
		}
	case <-time.After(5 * time.Second):
		t.Fatalf("server event %q did not come", want)
	}
}

// expectNone checks that no event comes within d.
func (ts *testServer) expectNone(t *testing.T, d time.Duration) {
	t.Helper()
	select {
	case got := <-ts.events:
		t.Fatalf("unexpected server event %q", got)
	case <-time.After(d):
	}
}

// writeKey writes a fresh ed25519 private key to dir/name, encrypted when
// passphrase is not empty, and returns its path and public key.
func writeKey(t *testing.T, dir, name, passphrase string) (string, ssh.PublicKey) {
	t.Helper()
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	must(t, err)
	var block *pem.Block
	if passphrase == "" {
		block, err = ssh.MarshalPrivateKey(priv, "test")
	} else {
		block, err = ssh.MarshalPrivateKeyWithPassphrase(priv, "test", []byte(passphrase))
	}
	must(t, err)
	file := filepath.Join(dir, name)
	must(t, os.WriteFile(file, pem.EncodeToMemory(block), 0o600))
	sshPub, err := ssh.NewPublicKey(pub)
	must(t, err)
	return file, sshPub
}

// clientConfig returns a config that trusts all of the server's host keys
// and authenticates with a key the server accepts.
func (ts *testServer) clientConfig(t *testing.T) SSHConfig {
	t.Helper()
	dir := t.TempDir()
	keyFile, pub := writeKey(t, dir, "id_ed25519", "")
	ts.authorize(pub)
	kh := filepath.Join(dir, "known_hosts")
	var lines bytes.Buffer
	for _, k := range ts.hostKeys {
		lines.WriteString(knownhosts.Line([]string{ts.addr}, k.PublicKey()) + "\n")
	}
	must(t, os.WriteFile(kh, lines.Bytes(), 0o600))
	return SSHConfig{
		Target:         "tester@" + ts.addr,
		IdentityFiles:  []string{keyFile},
		NoAgent:        true,
		KnownHostsFile: kh,
	}
}

func dialTest(t *testing.T, cfg SSHConfig) *SSH {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := DialSSH(ctx, cfg)
	if err != nil {
		t.Fatalf("DialSSH: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
