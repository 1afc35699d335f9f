package transport

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/agent"
)

func TestSSHDialAuthFailureIsErrAuthAndNotRetried(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	cfg := ts.clientConfig(t)
	stranger, _ := writeKey(t, t.TempDir(), "id_stranger", "") // not authorized
	cfg.IdentityFiles = []string{stranger}
	cfg.Target = "bob@" + ts.addr
	err := dialErrFor(t, cfg)
	var de *DialError
	if !errors.Is(err, ErrAuth) || !errors.As(err, &de) {
		t.Fatalf("DialSSH: %v, want ErrAuth", err)
	}
	want := "authentication failed for user bob (tried: " + stranger + "); check the user name and -i FILE"
	if !strings.HasPrefix(err.Error(), want) {
		t.Errorf("message %q, want prefix %q", err, want)
	}
	if n := ts.acceptedCount(); n != 1 {
		t.Errorf("server accepted %d connections, want 1", n)
	}
	checkMessage(t, err, "127.0.0.1")
}

func TestSSHDialUserOverridesTarget(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	cfg := ts.clientConfig(t)
	cfg.User = "alice"
	s := dialTest(t, cfg)
	if want := "alice@" + ts.addr; s.Target() != want {
		t.Errorf("Target %q, want %q", s.Target(), want)
	}
}

func TestSSHDialPassphraseProtectedKeyIsNamedInAuthError(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	cfg := ts.clientConfig(t)
	locked, pub := writeKey(t, t.TempDir(), "id_locked", "secret")
	ts.authorize(pub) // would work, if only we could use it
	cfg.IdentityFiles = []string{locked}
	err := dialErrFor(t, cfg)
	if !errors.Is(err, ErrAuth) {
		t.Fatalf("DialSSH: %v, want ErrAuth", err)
	}
	if !strings.Contains(err.Error(), locked+" is passphrase-protected; add it to ssh-agent") {
		t.Errorf("message %q does not explain the locked key", err)
	}
	checkMessage(t, err, "127.0.0.1")
}

func TestSSHDialMissingIdentityFileIsAnError(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	cfg := ts.clientConfig(t)
	missing := filepath.Join(t.TempDir(), "nope")
	cfg.IdentityFiles = append(cfg.IdentityFiles, missing)
	err := dialErrFor(t, cfg)
	if !errors.Is(err, ErrIdentity) || !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("DialSSH: %v, want ErrIdentity", err)
	}
	if want := "identity file " + missing + ": no such file; check -i"; err.Error() != want {
		t.Errorf("message %q, want %q", err, want)
	}
	if n := ts.acceptedCount(); n != 0 {
		t.Errorf("connected %d times before checking the identity files", n)
	}
}

// serveAgent runs an in-process ssh-agent holding keys and points
// SSH_AUTH_SOCK at it.
func serveAgent(t *testing.T, keyring agent.Agent) {
	t.Setenv("SSH_AUTH_SOCK", agentAt(t, keyring))
}

func addToAgent(t *testing.T, keyring agent.Agent, file, passphrase string) {
	raw, err := os.ReadFile(file)
	must(t, err)
	var priv any
	if passphrase == "" {
		priv, err = ssh.ParseRawPrivateKey(raw)
	} else {
		priv, err = ssh.ParseRawPrivateKeyWithPassphrase(raw, []byte(passphrase))
	}
	must(t, err)
	must(t, keyring.Add(agent.AddedKey{PrivateKey: priv}))
}

// Not parallel: it sets HOME and SSH_AUTH_SOCK.
func TestSSHDialUsesAgentAndDefaultKeys(t *testing.T) {
	ts := newTestServer(t)
	cfg := ts.clientConfig(t)
	cfg.IdentityFiles, cfg.NoAgent = nil, false
	home := t.TempDir()
	dotSSH := filepath.Join(home, ".ssh")
	must(t, os.Mkdir(dotSSH, 0o700))
	t.Setenv("HOME", home)
	t.Setenv("SSH_AUTH_SOCK", "")

	// No -i: a default key is found and used.
	defaultKey, pub := writeKey(t, dotSSH, "id_ecdsa", "")
	ts.authorize(pub)
	dialTest(t, cfg)
	must(t, os.Remove(defaultKey))

	// An agent with a key the host does not (yet) accept, and a locked
	// default key: the failure names both.
	keyring := agent.NewKeyring()
	serveAgent(t, keyring)
	agentKey, agentPub := writeKey(t, t.TempDir(), "agent_key", "")
	addToAgent(t, keyring, agentKey, "")
	lockedKey, _ := writeKey(t, dotSSH, "id_ed25519", "secret")
	err := dialErrFor(t, cfg)
	want := "authentication failed for user tester (tried: ssh-agent) and " + lockedKey +
		" is passphrase-protected; add it to ssh-agent"
	if !errors.Is(err, ErrAuth) || !strings.HasPrefix(err.Error(), want) {
		t.Fatalf("DialSSH: %v\nwant ErrAuth starting %q", err, want)
	}

	// Once the agent holds the locked key, there is nothing to say about it.
	addToAgent(t, keyring, lockedKey, "secret")
	err = dialErrFor(t, cfg)
	if !errors.Is(err, ErrAuth) || strings.Contains(err.Error(), "passphrase") {
		t.Fatalf("DialSSH: %v, want ErrAuth without a passphrase note", err)
	}

	ts.authorize(agentPub)
	dialTest(t, cfg)

	cfg.NoAgent = true
	if err := dialErrFor(t, cfg); !errors.Is(err, ErrAuth) || !strings.Contains(err.Error(), "(tried: no keys") {
		t.Errorf("DialSSH with NoAgent: %v, want ErrAuth having tried no keys", err)
	}
}
