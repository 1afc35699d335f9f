package transport

import (
	"testing"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/agent"
)

// TestReachedNamesTheAcceptedKey: of the identities offered, Reached names
// the one the host took: not the first offered, not all of them; a key only
// the agent holds by its fingerprint.
//
// Not parallel: it sets SSH_AUTH_SOCK.
func TestReachedNamesTheAcceptedKey(t *testing.T) {
	ts := newTestServer(t)
	cfg := ts.clientConfig(t) // authorizes cfg.IdentityFiles[0]
	dir := t.TempDir()
	refused, _ := writeKey(t, dir, "id_refused", "")
	taken := cfg.IdentityFiles[0]
	cfg.IdentityFiles = []string{refused, taken}
	if got := dialTest(t, cfg).Reached().Key; got != taken {
		t.Errorf("Reached().Key = %q, want %q (the key the host took)", got, taken)
	}

	keyring := agent.NewKeyring()
	serveAgent(t, keyring)
	agentKey, agentPub := writeKey(t, dir, "agent_only", "")
	addToAgent(t, keyring, agentKey, "")
	ts.authorize(agentPub)
	cfg.IdentityFiles, cfg.NoAgent = []string{refused}, false
	want := "ssh-agent key " + ssh.FingerprintSHA256(agentPub)
	if got := dialTest(t, cfg).Reached().Key; got != want {
		t.Errorf("Reached().Key = %q, want %q", got, want)
	}
}
