package transport

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/skeema/knownhosts"
	"golang.org/x/crypto/ssh"
	xknownhosts "golang.org/x/crypto/ssh/knownhosts"
)

// loadKnownHosts reads file; a missing file holds no keys.
func loadKnownHosts(file string) (*knownhosts.HostKeyDB, error) {
	_, err := os.Stat(file)
	if errors.Is(err, fs.ErrNotExist) {
		return knownhosts.NewDB()
	}
	db, err := knownhosts.NewDB(file)
	if err != nil {
		return nil, dialErr(ErrKnownHosts, err, "cannot read known hosts file %s: %s; fix or remove the bad line",
			file, causeText(err))
	}
	return db, nil
}

// hostKeyAlgorithms puts the algorithms of the keys known_hosts has for
// addr first, so that the host proves the key we know rather than, say, an
// ECDSA key x/crypto would prefer (golang/go#29286). The other algorithms
// follow so that a host that no longer has any known key type is reported
// as a changed key, not as a failed algorithm negotiation. nil when addr is
// unknown: then x/crypto's defaults apply.
func hostKeyAlgorithms(db *knownhosts.HostKeyDB, addr string) []string {
	known := db.HostKeyAlgorithms(addr)
	if len(known) == 0 {
		return nil
	}
	algos := slices.Clone(known)
	for _, a := range ssh.SupportedAlgorithms().HostKeys {
		if !slices.Contains(algos, a) {
			algos = append(algos, a)
		}
	}
	return algos
}

// hostKeyCheck is the host key callback of one connection attempt. It
// remembers whether the key was accepted (the handshake got past key
// exchange) and why it was refused.
type hostKeyCheck struct {
	db     *knownhosts.HostKeyDB
	file   string
	accept bool

	mu       sync.Mutex
	pinned   ssh.PublicKey // the key accepted in the first key exchange
	refusal  error
	verified bool
}

func (c *hostKeyCheck) callback(hostname string, remote net.Addr, key ssh.PublicKey) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	// A re-key must present the very key the connection began with.
	if c.pinned != nil {
		if !bytes.Equal(c.pinned.Marshal(), key.Marshal()) {
			return fmt.Errorf("host key changed during the connection, from %s to %s",
				ssh.FingerprintSHA256(c.pinned), ssh.FingerprintSHA256(key))
		}
		return nil
	}
	err := c.check(hostname, remote, key)
	if err != nil {
		c.refusal = err
		return err
	}
	c.pinned, c.verified = key, true
	return nil
}

func (c *hostKeyCheck) check(hostname string, remote net.Addr, key ssh.PublicKey) error {
	err := c.db.HostKeyCallback()(hostname, remote, key)
	if err == nil {
		return nil
	}
	hke := &HostKeyError{
		Host:           knownhosts.Normalize(hostname),
		KeyType:        keyTypeName(key.Type()),
		Fingerprint:    ssh.FingerprintSHA256(key),
		KnownHostsFile: c.file,
		Err:            err,
	}
	var revoked *xknownhosts.RevokedError
	switch {
	case errors.As(err, &revoked):
		hke.Revoked = true
	case knownhosts.IsHostKeyChanged(err):
		hke.Changed = true
	case knownhosts.IsHostUnknown(err):
		if !c.accept {
			hke.Unknown = true
			return hke
		}
		return appendKnownHost(c.file, hostname, key)
	default:
		return dialErr(ErrKnownHosts, err, "cannot check the host key against %s: %s; check the file", c.file, causeText(err))
	}
	return hke
}

func (c *hostKeyCheck) result() (verified bool, refusal error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.verified, c.refusal
}

// appendKnownHost records key for hostname. The line goes out in one write
// to a file opened O_APPEND, so concurrent dials recording keys cannot
// interleave within a line.
func appendKnownHost(file, hostname string, key ssh.PublicKey) error {
	fail := func(err error) error {
		return dialErr(ErrKnownHosts, err, "cannot record the host key in %s: %s; check the file's permissions", file, causeText(err))
	}
	if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
		return fail(err)
	}
	f, err := os.OpenFile(file, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return fail(err)
	}
	line := knownhosts.Line([]string{knownhosts.Normalize(hostname)}, key) + "\n"
	if !endsWithNewline(file) {
		line = "\n" + line // do not glue our line onto an unterminated last line
	}
	if _, err := f.Write([]byte(line)); err != nil {
		f.Close()
		return fail(err)
	}
	if err := f.Close(); err != nil {
		return fail(err)
	}
	return nil
}

// endsWithNewline reports whether file is empty or ends in a newline.
func endsWithNewline(file string) bool {
	f, err := os.Open(file)
	if err != nil {
		return true
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || st.Size() == 0 {
		return true
	}
	last := make([]byte, 1)
	if _, err := f.ReadAt(last, st.Size()-1); err != nil {
		return true
	}
	return last[0] == '\n'
}

// keyTypeName names a key type the way OpenSSH prints it.
func keyTypeName(t string) string {
	cert := strings.HasSuffix(t, "-cert-v01@openssh.com")
	t = strings.TrimSuffix(strings.TrimSuffix(t, "-cert-v01@openssh.com"), "@openssh.com")
	var name string
	switch {
	case t == ssh.KeyAlgoED25519:
		name = "ED25519"
	case t == "sk-ssh-ed25519":
		name = "ED25519-SK"
	case strings.HasPrefix(t, "sk-ecdsa-"):
		name = "ECDSA-SK"
	case strings.HasPrefix(t, "ecdsa-sha2-"):
		name = "ECDSA"
	case t == ssh.KeyAlgoRSA || strings.HasPrefix(t, "rsa-sha2-"):
		name = "RSA"
	case t == "ssh-dss":
		name = "DSA"
	default:
		name = strings.ToUpper(t)
	}
	if cert {
		name += "-CERT"
	}
	return name
}
