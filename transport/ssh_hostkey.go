package transport

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/skeema/knownhosts"
	"golang.org/x/crypto/ssh"
	xknownhosts "golang.org/x/crypto/ssh/knownhosts"
)

// defaultGlobalKnownHosts are the system-wide known_hosts files read when
// SSHConfig.GlobalKnownHostsFiles is nil, as in OpenSSH.
var defaultGlobalKnownHosts = []string{"/etc/ssh/ssh_known_hosts", "/etc/ssh/ssh_known_hosts2"}

// knownHostsFiles lists the known_hosts files of cfg in the order they are
// read: KnownHostsFile, KnownHostsFiles, then the global files; each once.
func knownHostsFiles(cfg SSHConfig) []string {
	global := cfg.GlobalKnownHostsFiles
	if global == nil {
		global = defaultGlobalKnownHosts
	}
	var files []string
	for _, f := range slices.Concat([]string{cfg.KnownHostsFile}, cfg.KnownHostsFiles, global) {
		if f != "" && f != "none" && !slices.Contains(files, f) {
			files = append(files, f)
		}
	}
	return files
}

// isGlobalKnownHosts reports whether file is one of cfg's system-wide files
// and no user file: those are skipped, as OpenSSH skips them, when they
// cannot be read or parsed.
func isGlobalKnownHosts(cfg SSHConfig, file string) bool {
	global := cfg.GlobalKnownHostsFiles
	if global == nil {
		global = defaultGlobalKnownHosts
	}
	return slices.Contains(global, file) && file != cfg.KnownHostsFile && !slices.Contains(cfg.KnownHostsFiles, file)
}

// knownHosts is the host key database of one DialSSH: the keys of every
// known_hosts file that exists, user files first.
type knownHosts struct {
	db     *knownhosts.HostKeyDB
	files  []string // the files read, in order
	record string   // where AcceptNewHostKey records keys: SSHConfig.KnownHostsFile
}

// loadKnownHosts reads the known_hosts files of cfg. A missing file holds
// no keys; a user file that cannot be read or parsed is an ErrKnownHosts
// naming it, a system-wide one is skipped (and logged), as OpenSSH does.
func loadKnownHosts(cfg SSHConfig) (*knownHosts, error) {
	kh := &knownHosts{record: cfg.KnownHostsFile}
	for _, file := range knownHostsFiles(cfg) {
		ok, err := knownHostsFileExists(file)
		if err == nil && ok && isGlobalKnownHosts(cfg, file) {
			_, err = knownhosts.NewDB(file)
		}
		if err != nil && isGlobalKnownHosts(cfg, file) {
			if cfg.Logger != nil {
				cfg.Logger.Debug("skipping a system-wide known_hosts file", "file", file, "error", err)
			}
			continue
		}
		if err != nil {
			return nil, err
		}
		if ok {
			kh.files = append(kh.files, file)
		}
	}
	db, err := knownhosts.NewDB(kh.files...)
	if err != nil {
		bad := strings.Join(kh.files, ", ")
		for _, f := range kh.files { // which one?
			if _, ferr := knownhosts.NewDB(f); ferr != nil {
				bad, err = f, ferr
				break
			}
		}
		return nil, dialErr(ErrKnownHosts, err, "cannot read known hosts file %s: %s; fix or remove the bad line",
			bad, causeText(err))
	}
	kh.db = db
	if cfg.Logger != nil {
		cfg.Logger.Debug("known hosts", "read", strings.Join(kh.files, ", "), "record_in", kh.record)
	}
	return kh, nil
}

// knownHostsFileExists reports whether file exists, and fails when it
// exists but cannot be read.
func knownHostsFileExists(file string) (bool, error) {
	f, err := os.Open(file)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err == nil {
		var st fs.FileInfo
		st, err = f.Stat()
		f.Close()
		switch {
		case err == nil && st.IsDir():
			err = &fs.PathError{Op: "read", Path: file, Err: syscall.EISDIR}
		case err == nil:
			return true, nil
		}
	}
	why := err
	var pe *fs.PathError
	if errors.As(err, &pe) {
		why = pe.Err // the path is in the message already
	}
	return false, dialErr(ErrKnownHosts, err, "cannot read known hosts file %s: %s; check the file and its permissions",
		file, causeText(why))
}

// hostKeyCheck is the host key callback of one connection attempt. It
// remembers whether the key was accepted (the handshake got past key
// exchange) and why it was refused.
type hostKeyCheck struct {
	kh        *knownHosts
	db        hostKeyDB
	host      string // what keys are looked up under: host:port (an aliasDB ignores it)
	name      string // the host as known_hosts writes it: host, [host]:port, or the HostKeyAlias
	principal string // what a host certificate must name: the host, or the HostKeyAlias
	accept    bool   // AcceptNewHostKey
	insecure  bool   // InsecureIgnoreHostKey
	hash      bool   // HashKnownHosts
	logger    *slog.Logger

	mu       sync.Mutex
	pinned   ssh.PublicKey // the key accepted in the first key exchange
	refusal  error
	verified bool
}

// newHostKeyCheck checks the host key of a connection to addr
// (host:port) against kh. With a HostKeyAlias, keys are looked up and
// recorded under the alias alone, as written (in lower case), without a
// port, as OpenSSH does; the certificate of a host is then checked against
// the alias too.
func newHostKeyCheck(cfg SSHConfig, kh *knownHosts, addr string) (*hostKeyCheck, error) {
	principal, _, _ := net.SplitHostPort(addr)
	c := &hostKeyCheck{
		kh: kh, db: kh.db, host: addr, name: knownhosts.Normalize(addr), principal: principal,
		accept: cfg.AcceptNewHostKey, insecure: cfg.InsecureIgnoreHostKey, hash: cfg.HashKnownHosts,
		logger: cfg.Logger,
	}
	if cfg.HostKeyAlias != "" {
		alias := strings.ToLower(cfg.HostKeyAlias)
		db, err := newAliasDB(alias, kh.db, kh.files)
		if err != nil {
			return nil, dialErr(ErrKnownHosts, err, "cannot read the known hosts files %s: %s; check them",
				strings.Join(kh.files, ", "), causeText(err))
		}
		c.db, c.name, c.principal = db, alias, alias
	}
	return c, nil
}

// algorithms are the host key algorithms to ask for (hostKeyAlgorithms).
func (c *hostKeyCheck) algorithms() []string { return hostKeyAlgorithms(c.db, c.host) }

// hostKeyAlgorithms puts the algorithms of the keys known_hosts has for
// addr first, so that the host proves the key we know rather than, say, an
// ECDSA key x/crypto would prefer (golang/go#29286). The other algorithms
// follow so that a host that no longer has any known key type is reported
// as a changed key, not as a failed algorithm negotiation. nil when addr is
// unknown: then x/crypto's defaults apply, certificates first, and a host
// with a certificate presents it (checkCert says how it is judged).
func hostKeyAlgorithms(db hostKeyDB, addr string) []string {
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

// callback is the ssh.HostKeyCallback. The name the host was dialed by is
// not used: keys are looked up under c.host.
func (c *hostKeyCheck) callback(_ string, remote net.Addr, key ssh.PublicKey) error {
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
	// x/crypto parses the remote address even though it looks up c.host;
	// a proxy's connection need not have one it can parse.
	if remote == nil {
		remote = &net.TCPAddr{IP: net.IPv4zero}
	} else if _, _, err := net.SplitHostPort(remote.String()); err != nil {
		remote = &net.TCPAddr{IP: net.IPv4zero}
	}
	err := c.check(remote, key)
	if err != nil {
		c.refusal = err
		return err
	}
	c.pinned, c.verified = key, true
	return nil
}

func (c *hostKeyCheck) check(remote net.Addr, key ssh.PublicKey) error {
	if cert, ok := key.(*ssh.Certificate); ok {
		return c.checkCert(remote, cert)
	}
	return c.checkKey(remote, key, nil)
}

// checkKey checks a plain host key against known_hosts and records it
// when it is new and that is allowed. cert is the certificate key came
// in, if any: a host that known_hosts knows only through @cert-authority
// lines is then refused as InvalidCert rather than as a changed key.
func (c *hostKeyCheck) checkKey(remote net.Addr, key ssh.PublicKey, cert *ssh.Certificate) error {
	hostname := c.host
	err := c.db.HostKeyCallback()(hostname, remote, key)
	if err == nil {
		return nil
	}
	hke := c.hostKeyError(key, err)
	var revoked *xknownhosts.RevokedError
	switch {
	case errors.As(err, &revoked):
		hke.Revoked = true
	case knownhosts.IsHostKeyChanged(err) && cert != nil && c.knownOnlyByCA(hostname):
		// x/crypto counts @cert-authority lines among the host's keys, so
		// a certificate none of them signed would read as a changed key,
		// and the ssh-keygen -R we suggest for that leaves CA lines alone.
		hke.InvalidCert, hke.CertProblem = true, "no @cert-authority line for the host holds the CA that signed it"
		hke.KeyType = keyTypeName(cert.Type())
	case knownhosts.IsHostKeyChanged(err):
		hke.Changed = true
	case knownhosts.IsHostUnknown(err):
		switch {
		case c.accept:
			return appendKnownHost(c.kh.record, c.name, key, c.hash)
		case c.insecure:
			if c.logger != nil {
				c.logger.Warn("HOST KEY NOT VERIFIED: accepting an unknown host key without recording it "+
					"(StrictHostKeyChecking no); the connection may be intercepted",
					"host", hke.Host, "key", hke.KeyType+" "+hke.Fingerprint,
					"known_hosts", strings.Join(c.kh.files, ", "))
			}
			return nil
		}
		hke.Unknown = true
		return hke
	default:
		return dialErr(ErrKnownHosts, err, "cannot check the host key against %s: %s; check the file",
			c.kh.record, causeText(err))
	}
	return hke
}

// checkCert checks a host certificate the way OpenSSH does. A
// certificate signed by a CA that a @cert-authority line trusts for the
// host is accepted when valid (ssh.CertChecker checks it is a host
// certificate, names the host among its principals, is within its
// validity window and carries the CA's signature). Any other certificate
// is judged by the plain key inside it, as an ordinary host key: known,
// changed, or unknown and then recorded with AcceptNewHostKey. That plain
// key is what the host proved in the key exchange, so checking it is as
// sound as checking a host that offered no certificate.
//
// The other way out, offering certificate algorithms only to hosts with a
// @cert-authority line, would still leave hosts that offer nothing but
// certificates unreachable, and x/crypto's default offers certificates
// first to hosts known_hosts does not know (hostKeyAlgorithms leaves the
// defaults alone then).
func (c *hostKeyCheck) checkCert(remote net.Addr, cert *ssh.Certificate) error {
	hostname := c.host
	// x/crypto's database reports a @revoked key first, whatever the host
	// and the other lines; OpenSSH refuses a certificate whose key or CA is
	// revoked without looking further.
	for i, k := range []ssh.PublicKey{cert.Key, cert.SignatureKey} {
		var revoked *xknownhosts.RevokedError
		if err := c.db.HostKeyCallback()(hostname, remote, k); errors.As(err, &revoked) {
			hke := c.hostKeyError(k, err)
			hke.Revoked, hke.CA = true, i == 1
			return hke
		}
	}
	if !c.isHostAuthority(cert.SignatureKey, hostname) {
		return c.checkKey(remote, cert.Key, cert)
	}
	now := time.Now()
	checker := ssh.CertChecker{IsHostAuthority: c.isHostAuthority, Clock: func() time.Time { return now }}
	certErr := checker.CheckCert(c.principal, cert)
	if cert.CertType != ssh.HostCert {
		certErr = fmt.Errorf("ssh: certificate presented as a host key has type %d", cert.CertType)
	}
	if certErr == nil {
		return nil
	}
	// A plain key recorded for the host vouches for it by itself, whatever
	// the certificate it comes in (OpenSSH falls back to it too); a
	// different one is a changed key.
	if !c.knownOnlyByCA(hostname) {
		return c.checkKey(remote, cert.Key, cert)
	}
	// The host is known only through its CA and the certificate does not
	// pass: refused, never recorded as a new key.
	hke := c.hostKeyError(cert.Key, certErr)
	// The file of the CA lines: a plain key is not among them.
	hke.KnownHostsFile = c.fileOf(c.db.HostKeyCallback()(hostname, remote, cert.Key))
	hke.InvalidCert, hke.CertProblem = true, certProblem(cert, c.principal, now, certErr)
	hke.KeyType = keyTypeName(cert.Type())
	return hke
}

// isHostAuthority reports whether a @cert-authority line for address
// (host:port) holds ca. It looks through HostKeyDB, which, unlike
// x/crypto's own IsHostAuthority, lets a wildcard pattern without a port
// match any port, as OpenSSH does.
func (c *hostKeyCheck) isHostAuthority(ca ssh.PublicKey, address string) bool {
	return slices.ContainsFunc(c.db.HostKeys(address), func(k knownhosts.PublicKey) bool {
		return k.Cert && bytes.Equal(k.Marshal(), ca.Marshal())
	})
}

// knownOnlyByCA reports whether known_hosts has lines for address and all
// of them are @cert-authority lines.
func (c *hostKeyCheck) knownOnlyByCA(address string) bool {
	keys := c.db.HostKeys(address)
	return len(keys) > 0 && !slices.ContainsFunc(keys, func(k knownhosts.PublicKey) bool { return !k.Cert })
}

// hostKeyError describes the refusal of key for err, a result of the
// known_hosts callback.
func (c *hostKeyCheck) hostKeyError(key ssh.PublicKey, err error) *HostKeyError {
	return &HostKeyError{
		Host:           c.name,
		KeyType:        keyTypeName(key.Type()),
		Fingerprint:    ssh.FingerprintSHA256(key),
		KnownHostsFile: c.fileOf(err),
		Err:            err,
	}
}

// fileOf names the known_hosts file behind err, a result of the
// known_hosts callback: the one with the @revoked line; else the first one
// with a key for the host, preferring plain keys to @cert-authority lines
// (it is the file to remove a changed key from); else, for an unknown host,
// the file a new key is recorded in.
func (c *hostKeyCheck) fileOf(err error) string {
	var revoked *xknownhosts.RevokedError
	if errors.As(err, &revoked) {
		return revoked.Revoked.Filename
	}
	var keyErr *xknownhosts.KeyError
	if !errors.As(err, &keyErr) || len(keyErr.Want) == 0 {
		return c.kh.record
	}
	// HostKeys tells CA lines apart but not their files; Want (in the
	// order the files were read) has the files. A key that is both a CA
	// and a plain host key counts as plain.
	plain := map[string]bool{}
	for _, k := range c.db.HostKeys(c.host) {
		if !k.Cert {
			plain[string(k.Marshal())] = true
		}
	}
	for _, k := range keyErr.Want {
		if plain[string(k.Key.Marshal())] {
			return k.Filename
		}
	}
	return keyErr.Want[0].Filename
}

// certProblem says why ssh.CertChecker refused cert for host, in words
// that do not name the host (callers put the target in front; the
// checker's own message for a wrong principal names it). The decision is
// the checker's: this only explains it, and falls back to its error.
func certProblem(cert *ssh.Certificate, host string, now time.Time, err error) string {
	stamp := func(t uint64) string { return time.Unix(int64(t), 0).UTC().Format(time.RFC3339) }
	switch {
	case cert.CertType == ssh.UserCert:
		return "it is a user certificate, not a host certificate"
	case cert.CertType != ssh.HostCert:
		return "it is not a host certificate"
	case !slices.Contains(cert.ValidPrincipals, host):
		return "it is issued for " + strings.Join(cert.ValidPrincipals, ",") + ", not for this host"
	case int64(cert.ValidAfter) >= 0 && now.Unix() < int64(cert.ValidAfter):
		return "it is not valid before " + stamp(cert.ValidAfter)
	case cert.ValidBefore != ssh.CertTimeInfinity && int64(cert.ValidBefore) >= 0 && now.Unix() >= int64(cert.ValidBefore):
		return "it expired at " + stamp(cert.ValidBefore)
	}
	return causeText(err)
}

func (c *hostKeyCheck) result() (verified bool, refusal error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.verified, c.refusal
}

// appendKnownHost records key for name, the host as known_hosts writes it
// ("web", "[web]:2222", or a HostKeyAlias as it is), hashed (the
// |1|salt|hash form of OpenSSH's HashKnownHosts) when hash is set. The
// line goes out in one write to a file opened O_APPEND, so concurrent
// dials recording keys cannot interleave within a line.
func appendKnownHost(file, name string, key ssh.PublicKey, hash bool) error {
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
	entry := name
	if hash {
		entry = xknownhosts.HashHostname(name)
	}
	line := entry + " " + key.Type() + " " + base64.StdEncoding.EncodeToString(key.Marshal()) + "\n"
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
