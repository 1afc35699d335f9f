package transport

import (
	"bytes"
	"crypto/x509"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/agent"
)

// defaultIdentityNames are tried, in this order, when no -i is given.
var defaultIdentityNames = []string{"id_ed25519", "id_ecdsa", "id_rsa"}

// identities are the keys DialSSH offers, and what to say about them should
// the host refuse them all.
//
// The order of the keys matters, for sshd counts every key offered against
// its MaxAuthTries: first the identity files the agent holds, then the
// other identity files, then (without IdentitiesOnly) the agent's other
// keys. Each key's certificates go right before it.
type identities struct {
	signers []ssh.Signer
	labels  []string // what each signer is: a file, or "ssh-agent"
	used    accepted // the one the host accepted
	tried   []string // files and "ssh-agent", as listed in the ErrAuth message
	locked  []string // passphrase-protected files the agent does not hold
	notes   []string // files and keys skipped for other reasons
	agent   net.Conn // open until the handshake is over: agent keys sign through it
	only    bool     // IdentitiesOnly
}

// IdentityFilesToTry are the identity files DialSSH tries, in order:
// IdentityFiles, else ConfigIdentityFiles (without "none"), else the
// default names (~/.ssh/id_ed25519, id_ecdsa, id_rsa), found or not.
func (c SSHConfig) IdentityFilesToTry() []string {
	files, _ := c.identityFiles()
	return files
}

// identityFiles are IdentityFilesToTry and where they come from.
func (c SSHConfig) identityFiles() ([]string, int) {
	switch {
	case len(c.IdentityFiles) > 0:
		return c.IdentityFiles, fromFlag
	case len(c.ConfigIdentityFiles) > 0:
		// IdentityFile none stands for no file.
		return slices.DeleteFunc(slices.Clone(c.ConfigIdentityFiles), func(f string) bool { return f == "none" }), fromConfig
	}
	var files []string
	if home, err := os.UserHomeDir(); err == nil {
		for _, name := range defaultIdentityNames {
			files = append(files, filepath.Join(home, ".ssh", name))
		}
	}
	return files, fromDefault
}

// Where identity files come from: -i (each must be usable), the OpenSSH
// configuration (an unusable one is skipped and noted, as ssh skips it),
// or the default names (an absent one is passed over in silence).
const (
	fromFlag = iota
	fromConfig
	fromDefault
)

// identity is one identity file that can be offered.
type identity struct {
	file   string
	pub    ssh.PublicKey // the plain public key
	signer ssh.Signer    // from the file; nil when only the agent can sign
	agent  ssh.Signer    // the agent's, when it holds the key
	certs  []*userCert   // "<file>-cert.pub"
}

// userCert is an OpenSSH user certificate from a file.
type userCert struct {
	file string
	cert *ssh.Certificate
	used bool
}

// setDeadline bounds the agent's signing by the handshake deadline, which
// the TCP connection's deadline alone would not.
func (ids *identities) setDeadline(t time.Time) {
	if ids.agent != nil {
		_ = ids.agent.SetDeadline(t)
	}
}

func (ids *identities) close() {
	if ids.agent != nil {
		ids.agent.Close()
	}
}

// loadIdentities reads the identity and certificate files, asking
// cfg.Passphrase for the passphrases it needs, and asks the agent for its
// keys. Only an unusable file named in cfg.IdentityFiles or
// cfg.CertificateFiles, a passphrase that cannot be read and a wrong
// passphrase are errors; an unusable one of the configuration's files is
// skipped, as ssh skips it, and noted with the reason.
func loadIdentities(cfg SSHConfig) (*identities, error) {
	ids := &identities{only: cfg.IdentitiesOnly}
	var agentKeys []ssh.Signer
	agentLabel := ""
	if sock := agentSocket(cfg); sock != "" {
		agentKeys, agentLabel = ids.askAgent(sock, cfg.IdentityAgent != "" && cfg.IdentityAgent != "SSH_AUTH_SOCK")
	}
	fail := func(err error) (*identities, error) {
		ids.close()
		return nil, err
	}

	var extraCerts []*userCert
	for i, file := range slices.Concat(cfg.CertificateFiles, cfg.ConfigCertificateFiles) {
		c, err := readUserCert(file)
		switch {
		case errors.Is(err, errExpired) || err != nil && i >= len(cfg.CertificateFiles):
			ids.notes = append(ids.notes, file+" ("+err.Error()+")")
		case err != nil:
			return fail(dialErr(ErrIdentity, errors.Unwrap(err), "certificate file %s: %v; check CertificateFile", file, err))
		default:
			extraCerts = append(extraCerts, c)
		}
	}

	files, from := cfg.identityFiles()
	var held, own []*identity
	for _, file := range files {
		id, err := ids.readIdentity(file, agentKeys, cfg)
		var de *DialError
		switch {
		case err == nil && id == nil: // locked, but the agent presumably holds it
		case err == nil && id.agent != nil:
			held = append(held, id)
		case err == nil:
			own = append(own, id)
		case errors.Is(err, errLocked):
			ids.locked = append(ids.locked, file)
		case errors.As(err, &de): // about the passphrase: whether explicit or not
			return fail(err)
		case from == fromFlag:
			return fail(dialErr(ErrIdentity, errors.Unwrap(err), "identity file %s: %v; check -i", file, err))
		case from == fromDefault && errors.Is(err, fs.ErrNotExist):
			// Absent default keys are the normal case.
		default:
			ids.notes = append(ids.notes, file+" ("+err.Error()+")")
		}
	}

	// Keys the agent holds need no passphrase and go first, then the other
	// identity files, and the agent's other keys last, so that a key chosen
	// with -i is offered before sshd's MaxAuthTries runs out on unrelated
	// agent keys.
	for _, id := range append(held, own...) {
		s := id.signer
		if s == nil {
			s = id.agent
		}
		ids.offer(s, id.file, append(id.certs, extraCerts...), agentKeys)
	}
	// Of the agent's other keys, those with a certificate in
	// cfg.CertificateFiles come first.
	skipped := 0
	for _, certified := range []bool{true, false} {
		for _, k := range agentKeys {
			if _, isCert := k.PublicKey().(*ssh.Certificate); isCert || containsKey(ids.signers, k.PublicKey()) ||
				certified != slices.ContainsFunc(extraCerts, func(c *userCert) bool { return sameKey(c.cert.Key, k.PublicKey()) }) {
				continue
			}
			if ids.only {
				skipped++
				continue
			}
			ids.offer(k, "ssh-agent", extraCerts, agentKeys)
		}
	}
	for _, k := range agentKeys { // certificates whose plain key the agent does not list
		if _, isCert := k.PublicKey().(*ssh.Certificate); isCert && !ids.only {
			ids.add(k, "ssh-agent")
		}
	}
	if agentLabel != "" {
		ids.tried = append(ids.tried, agentLabel)
	}
	if skipped > 0 {
		ids.notes = append(ids.notes, plural(skipped, "ssh-agent key")+" not among the identity files (IdentitiesOnly)")
	}
	for _, c := range extraCerts {
		if !c.used {
			ids.notes = append(ids.notes, c.file+" (the key it certifies is not one offered)")
		}
	}
	return ids, nil
}

// offer adds the key of s, after the certificates for it among certs and
// those the agent holds.
func (ids *identities) offer(s ssh.Signer, label string, certs []*userCert, agentKeys []ssh.Signer) {
	pub := s.PublicKey()
	for _, c := range certs {
		if !sameKey(c.cert.Key, pub) {
			continue
		}
		if cs, err := ssh.NewCertSigner(c.cert, s); err == nil {
			c.used = true
			ids.add(cs, c.file)
		}
	}
	for _, k := range agentKeys {
		if c, ok := k.PublicKey().(*ssh.Certificate); ok && sameKey(c.Key, pub) {
			ids.add(k, label)
		}
	}
	ids.add(s, label)
}

// add appends s, unless its key is there already, and lists label among
// the things tried.
func (ids *identities) add(s ssh.Signer, label string) {
	if containsKey(ids.signers, s.PublicKey()) {
		return
	}
	ids.signers = append(ids.signers, s)
	ids.labels = append(ids.labels, label)
	for _, l := range ids.tried {
		if l == label {
			return
		}
	}
	ids.tried = append(ids.tried, label)
}

// agentSocket is the agent socket to use, "" for none, read from
// cfg.IdentityAgent as ssh reads IdentityAgent once it has expanded it:
// "none", "SSH_AUTH_SOCK", "$VAR" for the path an environment variable
// holds, or a path.
func agentSocket(cfg SSHConfig) string {
	a := cfg.IdentityAgent
	switch {
	case cfg.NoAgent || a == "none":
		return ""
	case a == "" || a == "SSH_AUTH_SOCK":
		return os.Getenv("SSH_AUTH_SOCK")
	case strings.HasPrefix(a, "$") && !strings.HasPrefix(a, "${"):
		return os.Getenv(a[1:])
	}
	return a
}

// askAgent returns the agent's keys and, when it has none to offer, how to
// list it among the things tried.
func (ids *identities) askAgent(sock string, named bool) ([]ssh.Signer, string) {
	label := "ssh-agent"
	if named {
		label += " at " + sock
	}
	conn, err := net.DialTimeout("unix", sock, 5*time.Second)
	if err != nil {
		return nil, label + " (unreachable)"
	}
	_ = conn.SetDeadline(time.Now().Add(5 * time.Second)) // a wedged agent must not hang DialSSH
	keys, err := agent.NewClient(conn).Signers()
	if err != nil {
		conn.Close()
		return nil, label + " (unreachable)"
	}
	ids.agent = conn
	if len(keys) == 0 {
		return nil, label + " (no keys)"
	}
	return keys, ""
}

// errLocked marks a passphrase-protected key the agent cannot stand in for.
var errLocked = errors.New("passphrase-protected")

// badIdentity says, in a few lowercase words, why a key file is unusable.
type badIdentity struct {
	why string
	err error
}

func (b *badIdentity) Error() string { return b.why }

// unreadable is a key or certificate file that could not be read, said
// briefly: the caller names the file.
func unreadable(err error) *badIdentity {
	why := causeText(err)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		why = "no such file"
	case errors.Is(err, fs.ErrPermission):
		why = "permission denied"
	}
	return &badIdentity{why, err}
}
func (b *badIdentity) Unwrap() error { return b.err }

// readIdentity reads one identity file: a private key, or a public key
// whose private key the agent holds. It returns (nil, nil) for a
// passphrase-protected key whose public key is unknown while the agent
// holds keys (it may hold this one), errLocked for one that cannot be
// used, and a *DialError when cfg.Passphrase fails or is wrong.
func (ids *identities) readIdentity(file string, agentKeys []ssh.Signer, cfg SSHConfig) (*identity, error) {
	pem, err := os.ReadFile(file)
	if err != nil {
		return nil, unreadable(err)
	}
	id := &identity{file: file}
	certFile := strings.TrimSuffix(file, ".pub") + "-cert.pub"
	cert, certErr := readUserCert(certFile)
	signer, err := ssh.ParsePrivateKey(pem)
	var locked *ssh.PassphraseMissingError
	switch {
	case err == nil:
		id.signer, id.pub = signer, signer.PublicKey()
	case errors.As(err, &locked):
		// The public key, to find the key in the agent without asking for
		// the passphrase: in the file (OpenSSH's format), beside it, or in
		// its certificate.
		id.pub = locked.PublicKey
		if id.pub == nil {
			id.pub = readPublicKey(file + ".pub")
		}
		if id.pub == nil && certErr == nil {
			id.pub = cert.cert.Key
		}
		if id.pub != nil && agentSigner(agentKeys, id.pub) != nil {
			break // the agent signs: no passphrase needed
		}
		if cfg.Passphrase != nil {
			if id.signer, err = decrypt(file, pem, cfg.Passphrase); err != nil {
				return nil, err
			}
			id.pub = id.signer.PublicKey()
			break
		}
		if id.pub == nil && len(agentKeys) > 0 && !cfg.IdentitiesOnly {
			return nil, nil
		}
		return nil, errLocked
	default:
		pub, _, _, _, perr := ssh.ParseAuthorizedKey(pem)
		if _, isCert := pub.(*ssh.Certificate); perr == nil && !isCert {
			if agentSigner(agentKeys, pub) == nil {
				return nil, &badIdentity{"a public key, and the ssh-agent does not hold its private key", nil}
			}
			id.pub = pub
			break
		}
		why := "not a usable private key (" + causeText(err) + ")"
		return nil, &badIdentity{why, err}
	}
	id.agent = agentSigner(agentKeys, id.pub)

	switch {
	case errors.Is(certErr, fs.ErrNotExist): // the usual case: no certificate
	case certErr != nil:
		ids.notes = append(ids.notes, certFile+" ("+certErr.Error()+")")
	case !sameKey(cert.cert.Key, id.pub):
		ids.notes = append(ids.notes, certFile+" (certifies another key than "+file+")")
	default:
		id.certs = append(id.certs, cert)
	}
	return id, nil
}

// decrypt asks for the passphrase of an encrypted key file and decrypts
// it. An empty passphrase skips the key (errLocked).
func decrypt(file string, pem []byte, ask func(string) ([]byte, error)) (ssh.Signer, error) {
	pass, err := ask(file)
	if err != nil {
		return nil, dialErr(ErrIdentity, err, "identity file %s is passphrase-protected and its passphrase could not be read: %s; "+
			"add the key to ssh-agent (ssh-add) instead", file, causeText(err))
	}
	if len(pass) == 0 {
		return nil, errLocked
	}
	signer, err := ssh.ParsePrivateKeyWithPassphrase(pem, pass)
	switch {
	case err == nil:
		return signer, nil
	case errors.Is(err, x509.IncorrectPasswordError):
		return nil, dialErr(ErrIdentity, err, "identity file %s: wrong passphrase; try again with the right one, "+
			"or add the key to ssh-agent (ssh-add)", file)
	default:
		return nil, dialErr(ErrIdentity, err, "identity file %s: not a usable private key (%s); check -i", file, causeText(err))
	}
}

// errExpired marks a certificate that is no longer valid, skipped rather
// than offered in vain.
var errExpired = errors.New("certificate expired")

// readUserCert reads an OpenSSH user certificate ("<key>-cert.pub").
func readUserCert(file string) (*userCert, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, unreadable(err)
	}
	pub, _, _, _, err := ssh.ParseAuthorizedKey(b)
	if err != nil {
		return nil, &badIdentity{"not an ssh certificate (" + causeText(err) + ")", err}
	}
	cert, ok := pub.(*ssh.Certificate)
	switch {
	case !ok:
		return nil, &badIdentity{"a plain public key, not a certificate", nil}
	case cert.CertType != ssh.UserCert:
		return nil, &badIdentity{"a host certificate, not a user certificate", nil}
	case cert.ValidBefore != ssh.CertTimeInfinity && time.Now().Unix() >= int64(cert.ValidBefore):
		return nil, &badIdentity{"certificate expired " + time.Unix(int64(cert.ValidBefore), 0).Format(time.RFC3339), errExpired}
	}
	return &userCert{file: file, cert: cert}, nil
}

func readPublicKey(file string) ssh.PublicKey {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil
	}
	pub, _, _, _, err := ssh.ParseAuthorizedKey(b)
	if err != nil {
		return nil
	}
	return pub
}

// agentSigner is the agent's signer for the plain key pub, nil if it does
// not hold it.
func agentSigner(agentKeys []ssh.Signer, pub ssh.PublicKey) ssh.Signer {
	for _, k := range agentKeys {
		if sameKey(k.PublicKey(), pub) {
			return k
		}
	}
	return nil
}

func sameKey(a, b ssh.PublicKey) bool {
	return bytes.Equal(a.Marshal(), b.Marshal())
}

func containsKey(signers []ssh.Signer, pub ssh.PublicKey) bool {
	return agentSigner(signers, pub) != nil
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return strconv.Itoa(n) + " " + what + "s"
}

// authError builds the ErrAuth message: what was offered, what was left
// out, and what to do.
func (ids *identities) authError(user string, cause error) error {
	tried := "no keys: no identity files and no ssh-agent"
	if ids.agent != nil { // whose keys IdentitiesOnly left out
		tried = "no keys: no identity files"
	}
	if len(ids.tried) > 0 {
		tried = strings.Join(ids.tried, ", ")
	}
	var msg strings.Builder
	msg.WriteString("authentication failed for user " + user)
	tooMany := strings.Contains(strings.ToLower(cause.Error()), "too many authentication failures")
	if tooMany {
		fmt.Fprintf(&msg, ": the host disconnected after too many authentication failures, with %s to offer",
			plural(len(ids.signers), "key"))
	}
	msg.WriteString(" (tried: " + tried + ")")
	for _, n := range ids.notes {
		msg.WriteString(", skipped " + n)
	}
	todo := "check the user name and -i FILE (or IdentityFile), or add the key to the host's authorized_keys"
	if len(ids.locked) > 0 {
		verb := " is"
		if len(ids.locked) > 1 {
			verb = " are"
		}
		msg.WriteString(" and " + strings.Join(ids.locked, ", ") + verb + " passphrase-protected")
		todo = "add it to ssh-agent (ssh-add), or " + todo
	}
	switch {
	case tooMany && !ids.only:
		todo = "the host counts every key offered against its MaxAuthTries: set IdentitiesOnly " +
			"(-o IdentitiesOnly=yes, or IdentitiesOnly yes in ~/.ssh/config) and name the key the host accepts " +
			"with -i FILE or IdentityFile, so that no other ssh-agent key is offered"
	case tooMany:
		todo = "the host counts every key offered against its MaxAuthTries: name fewer identity files, " +
			"or the one the host accepts first"
	}
	return dialErr(ErrAuth, cause, "%s; %s", msg.String(), todo)
}

func (ids *identities) authMethods() []ssh.AuthMethod {
	if len(ids.signers) == 0 {
		return nil
	}
	signers := make([]ssh.Signer, len(ids.signers))
	for i, s := range ids.signers {
		signers[i] = noting(s, ids.labels[i], &ids.used)
	}
	return []ssh.AuthMethod{ssh.PublicKeys(signers...)}
}
