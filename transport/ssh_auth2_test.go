package transport

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/skeema/knownhosts"
	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/agent"
)

// authServer is an in-process SSH server that records the keys offered to
// it, by name, in the order they first came, and accepts the plain keys
// authorized and the user certificates its CA signed for "tester".
type authServer struct {
	addr     string
	keys     *keyNames
	maxTries int

	mu         sync.Mutex
	offered    []string
	authorized map[string]bool
	ca         ssh.PublicKey
	conns      int
}

// keyNames names the keys of a test, for authServer's record.
type keyNames struct {
	mu    sync.Mutex
	names map[string]string
}

func (kn *keyNames) set(pub ssh.PublicKey, name string) {
	kn.mu.Lock()
	defer kn.mu.Unlock()
	kn.names[string(pub.Marshal())] = name
}

func (kn *keyNames) name(pub ssh.PublicKey) string {
	if c, ok := pub.(*ssh.Certificate); ok {
		return kn.name(c.Key) + "-cert"
	}
	kn.mu.Lock()
	defer kn.mu.Unlock()
	if n, ok := kn.names[string(pub.Marshal())]; ok {
		return n
	}
	return ssh.FingerprintSHA256(pub)
}

// newAuthServer starts an authServer that disconnects after maxTries
// failures (x/crypto's count: key queries are free up to that many), and
// returns a config for user tester with nothing to authenticate with.
func newAuthServer(t *testing.T, maxTries int) (*authServer, SSHConfig) {
	t.Helper()
	as := &authServer{keys: &keyNames{names: map[string]string{}}, maxTries: maxTries, authorized: map[string]bool{}}
	_, hostPriv, err := ed25519.GenerateKey(rand.Reader)
	must(t, err)
	hostKey, err := ssh.NewSignerFromKey(hostPriv)
	must(t, err)
	checker := &ssh.CertChecker{IsUserAuthority: func(auth ssh.PublicKey) bool {
		as.mu.Lock()
		defer as.mu.Unlock()
		return as.ca != nil && sameKey(auth, as.ca)
	}}
	config := &ssh.ServerConfig{
		MaxAuthTries: maxTries,
		PublicKeyCallback: func(conn ssh.ConnMetadata, key ssh.PublicKey) (*ssh.Permissions, error) {
			name := as.keys.name(key)
			as.mu.Lock()
			if !slices.Contains(as.offered, name) {
				as.offered = append(as.offered, name)
			}
			ok := as.authorized[string(key.Marshal())]
			as.mu.Unlock()
			if _, isCert := key.(*ssh.Certificate); isCert {
				return checker.Authenticate(conn, key)
			}
			if ok {
				return nil, nil
			}
			return nil, io.ErrUnexpectedEOF
		},
	}
	config.AddHostKey(hostKey)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	must(t, err)
	t.Cleanup(func() { ln.Close() })
	as.addr = ln.Addr().String()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			as.mu.Lock()
			as.conns++
			as.mu.Unlock()
			go func() {
				defer c.Close()
				sc, chans, reqs, err := ssh.NewServerConn(c, config)
				if err != nil {
					return
				}
				go ssh.DiscardRequests(reqs)
				go func() {
					for nc := range chans {
						_ = nc.Reject(ssh.Prohibited, "no sessions here")
					}
				}()
				_ = sc.Wait()
			}()
		}
	}()
	kh := filepath.Join(t.TempDir(), "known_hosts")
	must(t, os.WriteFile(kh, []byte(knownhosts.Line([]string{as.addr}, hostKey.PublicKey())+"\n"), 0o600))
	return as, SSHConfig{Target: "tester@" + as.addr, NoAgent: true, KnownHostsFile: kh, KeepaliveInterval: -1}
}

func (as *authServer) authorize(pub ssh.PublicKey) {
	as.mu.Lock()
	defer as.mu.Unlock()
	as.authorized[string(pub.Marshal())] = true
}

func (as *authServer) trustCA(ca ssh.PublicKey) {
	as.mu.Lock()
	defer as.mu.Unlock()
	as.ca = ca
}

// takeOffered returns the keys offered since the last call.
func (as *authServer) takeOffered() []string {
	as.mu.Lock()
	defer as.mu.Unlock()
	o := as.offered
	as.offered = nil
	return o
}

func (as *authServer) connCount() int {
	as.mu.Lock()
	defer as.mu.Unlock()
	return as.conns
}

// key writes a fresh ed25519 key (encrypted when passphrase is not empty)
// to dir/name and names it name.
func (as *authServer) key(t *testing.T, dir, name, passphrase string) (string, ssh.PublicKey) {
	t.Helper()
	file, pub := writeKey(t, dir, name, passphrase)
	as.keys.set(pub, name)
	return file, pub
}

// legacyKey writes a fresh ECDSA key in the legacy PEM format, encrypted
// with passphrase (which, unlike OpenSSH's format, is quick to decrypt and
// carries no public key), with its public key beside it in name.pub.
func (as *authServer) legacyKey(t *testing.T, dir, name, passphrase string) (string, ssh.PublicKey) {
	t.Helper()
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	must(t, err)
	der, err := x509.MarshalECPrivateKey(priv)
	must(t, err)
	//lint:ignore SA1019 the legacy format is what some keys on disk still use
	block, err := x509.EncryptPEMBlock(rand.Reader, "EC PRIVATE KEY", der, []byte(passphrase), x509.PEMCipherAES128)
	must(t, err)
	file := filepath.Join(dir, name)
	must(t, os.WriteFile(file, pem.EncodeToMemory(block), 0o600))
	pub, err := ssh.NewPublicKey(&priv.PublicKey)
	must(t, err)
	must(t, os.WriteFile(file+".pub", ssh.MarshalAuthorizedKey(pub), 0o644))
	as.keys.set(pub, name)
	return file, pub
}

// agentKeys fills keyring with n fresh keys the server does not accept,
// named other1...otherN.
func (as *authServer) agentKeys(t *testing.T, keyring agent.Agent, n int) {
	t.Helper()
	dir := t.TempDir()
	for i := 1; i <= n; i++ {
		file, _ := as.key(t, dir, "other"+string(rune('0'+i/10))+string(rune('0'+i%10)), "")
		addToAgent(t, keyring, file, "")
	}
}

// agentAt runs an in-process ssh-agent holding keyring's keys and returns
// its socket, leaving SSH_AUTH_SOCK alone.
func agentAt(t *testing.T, keyring agent.Agent) string {
	t.Helper()
	sock := filepath.Join(t.TempDir(), "agent.sock")
	ln, err := net.Listen("unix", sock)
	must(t, err)
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

// writeUserCert signs a user certificate for pub with ca, for principal
// tester and valid from an hour ago for validFor, and writes it to file.
func writeUserCert(t *testing.T, ca ssh.Signer, pub ssh.PublicKey, file string, validFor time.Duration) {
	t.Helper()
	cert := &ssh.Certificate{
		Key:             pub,
		CertType:        ssh.UserCert,
		KeyId:           "test user",
		ValidPrincipals: []string{"tester"},
		ValidAfter:      uint64(time.Now().Add(-time.Hour).Unix()),
		ValidBefore:     uint64(time.Now().Add(-time.Hour + validFor).Unix()),
	}
	must(t, cert.SignCert(rand.Reader, ca))
	must(t, os.WriteFile(file, ssh.MarshalAuthorizedKey(cert), 0o644))
}

func wantOffered(t *testing.T, as *authServer, want ...string) {
	t.Helper()
	if got := as.takeOffered(); !slices.Equal(got, want) {
		t.Errorf("keys offered %q, want %q", got, want)
	}
}

// Not parallel: it sets HOME, SSH_AUTH_SOCK and MY_AGENT.
func TestSSHAgentSocketChoice(t *testing.T) {
	t.Setenv("HOME", "/home/someone")
	t.Setenv("SSH_AUTH_SOCK", "/run/env.sock")
	t.Setenv("MY_AGENT", "/run/my.sock")
	for _, c := range []struct {
		agent   string
		noAgent bool
		want    string
	}{
		{"", false, "/run/env.sock"},
		{"SSH_AUTH_SOCK", false, "/run/env.sock"},
		{"none", false, ""},
		{"/run/other.sock", false, "/run/other.sock"},
		{"$MY_AGENT", false, "/run/my.sock"},
		// ssh -G has expanded ~ and ${VAR} already: what is left is a path.
		{"~/.1password/agent.sock", false, "~/.1password/agent.sock"},
		{"/run/${MY_AGENT}", false, "/run/${MY_AGENT}"},
		{"/run/other.sock", true, ""},
		{"", true, ""},
	} {
		if got := agentSocket(SSHConfig{IdentityAgent: c.agent, NoAgent: c.noAgent}); got != c.want {
			t.Errorf("IdentityAgent %q, NoAgent %v: socket %q, want %q", c.agent, c.noAgent, got, c.want)
		}
	}
}

// IdentityAgent picks the agent regardless of SSH_AUTH_SOCK, and "none"
// turns it off.
func TestSSHDialIdentityAgent(t *testing.T) {
	t.Parallel()
	as, cfg := newAuthServer(t, 6)
	keyring := agent.NewKeyring()
	right, pub := as.key(t, t.TempDir(), "right", "")
	as.authorize(pub)
	addToAgent(t, keyring, right, "")
	stranger, _ := as.key(t, t.TempDir(), "stranger", "")
	cfg.IdentityFiles, cfg.NoAgent = []string{stranger}, false

	cfg.IdentityAgent = agentAt(t, keyring)
	dialTest(t, cfg)
	wantOffered(t, as, "stranger", "right")

	cfg.IdentityAgent = "none"
	err := dialErrFor(t, cfg)
	if want := "(tried: " + stranger + ");"; !errors.Is(err, ErrAuth) || !strings.Contains(err.Error(), want) {
		t.Errorf("DialSSH with IdentityAgent none: %v, want ErrAuth containing %q", err, want)
	}

	cfg.IdentityAgent = filepath.Join(t.TempDir(), "gone.sock")
	err = dialErrFor(t, cfg)
	if want := "ssh-agent at " + cfg.IdentityAgent + " (unreachable)"; !errors.Is(err, ErrAuth) || !strings.Contains(err.Error(), want) {
		t.Errorf("DialSSH with a dead IdentityAgent: %v, want ErrAuth containing %q", err, want)
	}
}

// The order keys are offered in: identity files the agent holds, the other
// identity files, then the agent's other keys; IdentitiesOnly leaves those
// out.
func TestSSHDialIdentitiesOnlyOffersOnlyIdentityFiles(t *testing.T) {
	t.Parallel()
	as, cfg := newAuthServer(t, 100)
	keyring := agent.NewKeyring()
	as.agentKeys(t, keyring, 3)
	dir := t.TempDir()
	own, _ := as.key(t, dir, "own", "")               // a file the agent does not hold
	held, _ := as.legacyKey(t, dir, "held", "secret") // locked, but the agent holds it
	addToAgent(t, keyring, held, "secret")
	cfg.IdentityFiles, cfg.NoAgent, cfg.IdentityAgent = []string{own, held}, false, agentAt(t, keyring)

	err := dialErrFor(t, cfg)
	wantOffered(t, as, "held", "own", "other01", "other02", "other03")
	if want := "(tried: " + held + ", " + own + ", ssh-agent);"; !strings.Contains(err.Error(), want) {
		t.Errorf("message %q, want it to contain %q", err, want)
	}

	cfg.IdentitiesOnly = true
	err = dialErrFor(t, cfg)
	wantOffered(t, as, "held", "own")
	want := "(tried: " + held + ", " + own + "), skipped 3 ssh-agent keys not among the identity files (IdentitiesOnly);"
	if !errors.Is(err, ErrAuth) || !strings.Contains(err.Error(), want) {
		t.Errorf("DialSSH: %v, want ErrAuth containing %q", err, want)
	}
}

// The agent holds the key, the host counts failures: only IdentitiesOnly
// gets the right key offered before the host gives up, and the error
// without it says so.
func TestSSHDialTooManyAuthFailuresSuggestsIdentitiesOnly(t *testing.T) {
	t.Parallel()
	as, cfg := newAuthServer(t, 3) // x/crypto: 3 free queries, then 3 failures
	keyring := agent.NewKeyring()
	as.agentKeys(t, keyring, 10)
	right, pub := as.key(t, t.TempDir(), "right", "")
	as.authorize(pub)
	addToAgent(t, keyring, right, "")
	stranger, _ := as.key(t, t.TempDir(), "stranger", "")
	cfg.NoAgent, cfg.IdentityAgent = false, agentAt(t, keyring)

	cfg.IdentityFiles = []string{stranger}
	err := dialErrFor(t, cfg)
	if !errors.Is(err, ErrAuth) {
		t.Fatalf("DialSSH: %v, want ErrAuth", err)
	}
	for _, want := range []string{
		"authentication failed for user tester: the host disconnected after too many authentication failures, with 12 keys to offer (tried: " + stranger + ", ssh-agent)",
		"; the host counts every key offered against its MaxAuthTries: set IdentitiesOnly (-o IdentitiesOnly=yes",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("message %q\ndoes not contain %q", err, want)
		}
	}
	checkMessage(t, err, "127.0.0.1")
	if got := as.takeOffered(); len(got) != 6 || slices.Contains(got, "right") {
		t.Errorf("keys offered %q, want 6 without the right one", got)
	}

	cfg.IdentityFiles, cfg.IdentitiesOnly = []string{right}, true
	dialTest(t, cfg)
	wantOffered(t, as, "right")
}

// With IdentitiesOnly an identity file selects the agent's key by its
// public key, wherever that comes from, without asking for a passphrase.
func TestSSHDialIdentitiesOnlyFindsAgentKeyByPublicKey(t *testing.T) {
	t.Parallel()
	ca := newCA(t)
	for _, form := range []string{"openssh-encrypted", "pem-encrypted+pub", "pem-encrypted+cert", "public-key-file"} {
		t.Run(form, func(t *testing.T) {
			t.Parallel()
			as, cfg := newAuthServer(t, 100)
			keyring := agent.NewKeyring()
			as.agentKeys(t, keyring, 2)
			dir := t.TempDir()
			priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
			must(t, err)
			must(t, keyring.Add(agent.AddedKey{PrivateKey: priv}))
			pub, err := ssh.NewPublicKey(&priv.PublicKey)
			must(t, err)
			as.keys.set(pub, "right")
			as.authorize(pub)
			file := filepath.Join(dir, "id_ecdsa")
			var block *pem.Block
			switch form {
			case "openssh-encrypted":
				block, err = ssh.MarshalPrivateKeyWithPassphrase(priv, "", []byte("secret"))
			case "pem-encrypted+pub", "pem-encrypted+cert":
				der, derr := x509.MarshalECPrivateKey(priv)
				must(t, derr)
				//lint:ignore SA1019 legacy encrypted PEM keys carry no public key, which is the point
				block, err = x509.EncryptPEMBlock(rand.Reader, "EC PRIVATE KEY", der, []byte("secret"), x509.PEMCipherAES128)
			case "public-key-file":
				file += ".pub"
				block = &pem.Block{}
			}
			must(t, err)
			if form == "public-key-file" {
				must(t, os.WriteFile(file, ssh.MarshalAuthorizedKey(pub), 0o644))
			} else {
				must(t, os.WriteFile(file, pem.EncodeToMemory(block), 0o600))
			}
			switch form {
			case "pem-encrypted+pub":
				must(t, os.WriteFile(file+".pub", ssh.MarshalAuthorizedKey(pub), 0o644))
			case "pem-encrypted+cert":
				writeUserCert(t, ca, pub, file+"-cert.pub", 2*time.Hour)
				as.trustCA(ca.PublicKey())
			}
			cfg.IdentityFiles, cfg.IdentitiesOnly = []string{file}, true
			cfg.NoAgent, cfg.IdentityAgent = false, agentAt(t, keyring)
			cfg.Passphrase = func(string) ([]byte, error) {
				t.Errorf("asked for the passphrase of a key the agent holds")
				return nil, errors.New("no")
			}
			dialTest(t, cfg)
			if form == "pem-encrypted+cert" {
				wantOffered(t, as, "right-cert")
			} else {
				wantOffered(t, as, "right")
			}
		})
	}
}

// An identity file given as a public key needs the agent to hold its
// private key.
func TestSSHDialPublicKeyIdentityFileNeedsTheAgent(t *testing.T) {
	t.Parallel()
	as, cfg := newAuthServer(t, 6)
	_, pub := as.key(t, t.TempDir(), "right", "")
	file := filepath.Join(t.TempDir(), "right.pub")
	must(t, os.WriteFile(file, ssh.MarshalAuthorizedKey(pub), 0o644))
	cfg.IdentityFiles = []string{file}
	err := dialErrFor(t, cfg)
	want := "identity file " + file + ": a public key, and the ssh-agent does not hold its private key; check -i"
	if !errors.Is(err, ErrIdentity) || err.Error() != want {
		t.Errorf("DialSSH: %v, want ErrIdentity %q", err, want)
	}
	if n := as.connCount(); n != 0 {
		t.Errorf("connected %d times", n)
	}
}

// A key's "-cert.pub" goes before the key itself, and a host that trusts
// only the CA accepts it.
func TestSSHDialOffersUserCertificateBesideKey(t *testing.T) {
	t.Parallel()
	ca := newCA(t)
	as, cfg := newAuthServer(t, 6)
	as.trustCA(ca.PublicKey())
	file, pub := as.key(t, t.TempDir(), "mine", "")
	cfg.IdentityFiles = []string{file}

	err := dialErrFor(t, cfg) // no certificate yet
	if !errors.Is(err, ErrAuth) {
		t.Fatalf("DialSSH without a certificate: %v, want ErrAuth", err)
	}
	wantOffered(t, as, "mine")

	writeUserCert(t, ca, pub, file+"-cert.pub", 2*time.Hour)
	dialTest(t, cfg)
	wantOffered(t, as, "mine-cert")

	// An expired certificate is left out, and said so.
	writeUserCert(t, ca, pub, file+"-cert.pub", 30*time.Minute)
	err = dialErrFor(t, cfg)
	want := "(tried: " + file + "), skipped " + file + "-cert.pub (certificate expired "
	if !errors.Is(err, ErrAuth) || !strings.Contains(err.Error(), want) {
		t.Errorf("DialSSH with an expired certificate: %v, want ErrAuth containing %q", err, want)
	}
	wantOffered(t, as, "mine")

	// One for another key is left out too.
	_, other := as.key(t, t.TempDir(), "other", "")
	writeUserCert(t, ca, other, file+"-cert.pub", 2*time.Hour)
	err = dialErrFor(t, cfg)
	want = "skipped " + file + "-cert.pub (certifies another key than " + file + ")"
	if !errors.Is(err, ErrAuth) || !strings.Contains(err.Error(), want) {
		t.Errorf("DialSSH with another key's certificate: %v, want ErrAuth containing %q", err, want)
	}
}

// CertificateFiles pair with keys from files or the agent by public key.
func TestSSHDialCertificateFiles(t *testing.T) {
	t.Parallel()
	ca := newCA(t)
	as, cfg := newAuthServer(t, 100)
	as.trustCA(ca.PublicKey())
	keyring := agent.NewKeyring()
	as.agentKeys(t, keyring, 1)
	dir := t.TempDir()
	agentKey, agentPub := as.key(t, dir, "agentkey", "")
	addToAgent(t, keyring, agentKey, "")
	must(t, os.Remove(agentKey)) // only in the agent
	fileKey, filePub := as.key(t, dir, "filekey", "")
	certDir := t.TempDir()
	agentCert, fileCert := filepath.Join(certDir, "a-cert.pub"), filepath.Join(certDir, "f-cert.pub")
	writeUserCert(t, ca, agentPub, agentCert, 2*time.Hour)
	writeUserCert(t, ca, filePub, fileCert, 2*time.Hour)
	cfg.NoAgent, cfg.IdentityAgent = false, agentAt(t, keyring)

	// The agent's key, with its certificate.
	cfg.CertificateFiles = []string{agentCert}
	dialTest(t, cfg)
	wantOffered(t, as, "agentkey-cert")

	// A file's key, with its certificate, ahead of the agent's keys.
	cfg.CertificateFiles = []string{agentCert, fileCert}
	cfg.IdentityFiles = []string{fileKey}
	dialTest(t, cfg)
	wantOffered(t, as, "filekey-cert")

	// IdentitiesOnly: the agent's key is not an identity file, so neither
	// it nor its certificate is offered.
	as.trustCA(nil)
	cfg.IdentitiesOnly = true
	err := dialErrFor(t, cfg)
	wantOffered(t, as, "filekey-cert", "filekey")
	want := "skipped " + agentCert + " (the key it certifies is not one offered)"
	if !errors.Is(err, ErrAuth) || !strings.Contains(err.Error(), want) {
		t.Errorf("DialSSH: %v, want ErrAuth containing %q", err, want)
	}
}

func TestSSHDialUnusableCertificateFileIsAnError(t *testing.T) {
	t.Parallel()
	as, cfg := newAuthServer(t, 6)
	file, pub := as.key(t, t.TempDir(), "k", "")
	cfg.IdentityFiles = []string{file}
	dir := t.TempDir()
	plain := filepath.Join(dir, "plain.pub")
	must(t, os.WriteFile(plain, ssh.MarshalAuthorizedKey(pub), 0o644))
	hostCert := filepath.Join(dir, "host-cert.pub")
	c := &ssh.Certificate{Key: pub, CertType: ssh.HostCert, ValidPrincipals: []string{"tester"}, ValidBefore: ssh.CertTimeInfinity}
	must(t, c.SignCert(rand.Reader, newCA(t)))
	must(t, os.WriteFile(hostCert, ssh.MarshalAuthorizedKey(c), 0o644))
	missing := filepath.Join(dir, "missing-cert.pub")
	for file, why := range map[string]string{
		missing:  "no such file",
		plain:    "a plain public key, not a certificate",
		hostCert: "a host certificate, not a user certificate",
	} {
		cfg.CertificateFiles = []string{file}
		err := dialErrFor(t, cfg)
		if want := "certificate file " + file + ": " + why + "; check CertificateFile"; !errors.Is(err, ErrIdentity) || err.Error() != want {
			t.Errorf("DialSSH: %v, want ErrIdentity %q", err, want)
		}
	}
	if n := as.connCount(); n != 0 {
		t.Errorf("connected %d times", n)
	}
}

func TestSSHDialPassphrase(t *testing.T) {
	t.Parallel()
	locked, pub := writeKey(t, t.TempDir(), "locked", "secret")
	setup := func(t *testing.T) (*authServer, SSHConfig) {
		as, cfg := newAuthServer(t, 6)
		as.keys.set(pub, "locked")
		as.authorize(pub)
		cfg.IdentityFiles = []string{locked}
		return as, cfg
	}
	// Each decryption takes seconds with -race: in parallel.
	t.Run("right", func(t *testing.T) {
		t.Parallel()
		as, cfg := setup(t)
		var asked []string
		cfg.Passphrase = func(file string) ([]byte, error) {
			asked = append(asked, file)
			return []byte("secret"), nil
		}
		dialTest(t, cfg)
		if !slices.Equal(asked, []string{locked}) {
			t.Errorf("asked for the passphrases of %q, want %q", asked, locked)
		}
		wantOffered(t, as, "locked")
	})
	t.Run("wrong", func(t *testing.T) {
		t.Parallel()
		as, cfg := setup(t)
		cfg.Passphrase = func(string) ([]byte, error) { return []byte("wrong"), nil }
		err := dialErrFor(t, cfg)
		want := "identity file " + locked + ": wrong passphrase; try again with the right one, or add the key to ssh-agent (ssh-add)"
		if !errors.Is(err, ErrIdentity) || !errors.Is(err, x509.IncorrectPasswordError) || err.Error() != want {
			t.Errorf("DialSSH with a wrong passphrase: %v, want ErrIdentity %q", err, want)
		}
		if n := as.connCount(); n != 0 {
			t.Errorf("connected %d times before checking the passphrase", n)
		}
	})
	t.Run("unreadable", func(t *testing.T) {
		t.Parallel()
		as, cfg := setup(t)
		errNoTTY := errors.New("no terminal")
		cfg.Passphrase = func(string) ([]byte, error) { return nil, errNoTTY }
		err := dialErrFor(t, cfg)
		want := "identity file " + locked + " is passphrase-protected and its passphrase could not be read: no terminal; add the key to ssh-agent (ssh-add) instead"
		if !errors.Is(err, ErrIdentity) || !errors.Is(err, errNoTTY) || err.Error() != want {
			t.Errorf("DialSSH with a failing Passphrase: %v, want ErrIdentity %q", err, want)
		}
		if n := as.connCount(); n != 0 {
			t.Errorf("connected %d times without a passphrase", n)
		}
	})
	t.Run("empty", func(t *testing.T) {
		// An empty passphrase skips the key, as if Passphrase were not set.
		t.Parallel()
		_, cfg := setup(t)
		cfg.Passphrase = func(string) ([]byte, error) { return []byte{}, nil }
		err := dialErrFor(t, cfg)
		if !errors.Is(err, ErrAuth) || !strings.Contains(err.Error(), locked+" is passphrase-protected; add it to ssh-agent") {
			t.Errorf("DialSSH with an empty passphrase: %v, want ErrAuth naming the locked key", err)
		}
	})
}

// The passphrase of a key the agent holds is not asked for.
func TestSSHDialPassphraseNotAskedForAgentKey(t *testing.T) {
	t.Parallel()
	as, cfg := newAuthServer(t, 6)
	locked, pub := as.legacyKey(t, t.TempDir(), "locked", "secret")
	as.authorize(pub)
	keyring := agent.NewKeyring()
	addToAgent(t, keyring, locked, "secret")
	cfg.IdentityFiles, cfg.NoAgent, cfg.IdentityAgent = []string{locked}, false, agentAt(t, keyring)
	cfg.Passphrase = func(file string) ([]byte, error) {
		t.Errorf("asked for the passphrase of %s, held by the agent", file)
		return []byte("secret"), nil
	}
	dialTest(t, cfg)
	wantOffered(t, as, "locked")
}
