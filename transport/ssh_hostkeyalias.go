package transport

import (
	"bufio"
	"bytes"
	"crypto/hmac"
	"crypto/sha1"
	"encoding/base64"
	"errors"
	"net"
	"os"
	"slices"
	"strings"

	"github.com/skeema/knownhosts"
	"golang.org/x/crypto/ssh"
	xknownhosts "golang.org/x/crypto/ssh/knownhosts"
)

// hostKeyDB is what a host key check asks of known_hosts: the callback
// (nil when the key is known for the host, else x/crypto's *KeyError or
// *RevokedError), the keys for a host, and their algorithms.
// *knownhosts.HostKeyDB is one, for a host:port; aliasDB another.
type hostKeyDB interface {
	HostKeyCallback() ssh.HostKeyCallback
	HostKeys(hostWithPort string) []knownhosts.PublicKey
	HostKeyAlgorithms(hostWithPort string) []string
}

// aliasDB holds the known_hosts lines for one HostKeyAlias, matched as
// OpenSSH matches the alias: verbatim, as one name, against each
// comma-separated pattern of a line (* and ?, ! to negate, letters of
// either case), or hashed (|1|salt|hash of the alias). x/crypto instead
// splits a name into host and port, so that "[web]:2222" would fail to
// parse, "web:2222" would match a line for "[web]:2222", and neither would
// match its own hashed line. The host:port its methods are given is not
// used.
type aliasDB struct {
	alias string
	base  *knownhosts.HostKeyDB // for @revoked lines, which hold whatever the host
	lines []aliasLine           // in the order the files were read
}

type aliasLine struct {
	key        ssh.PublicKey
	cert       bool // @cert-authority
	file       string
	lineNumber int
}

// newAliasDB reads the lines of files (loadKnownHosts has checked that
// they parse) that hold keys for alias.
func newAliasDB(alias string, base *knownhosts.HostKeyDB, files []string) (*aliasDB, error) {
	db := &aliasDB{alias: alias, base: base}
	for _, file := range files {
		f, err := os.Open(file)
		if err != nil {
			return nil, err
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 1<<20)
		for n := 1; sc.Scan(); n++ {
			marker, hosts, key, _, _, err := ssh.ParseKnownHosts(sc.Bytes())
			if err != nil || marker == "revoked" || !matchKnownHost(alias, hosts) {
				continue // blank, a comment, a revocation (see base), another host
			}
			db.lines = append(db.lines, aliasLine{key: key, cert: marker == "cert-authority", file: file, lineNumber: n})
		}
		err = sc.Err()
		f.Close()
		if err != nil {
			return nil, err
		}
	}
	return db, nil
}

// matchKnownHost reports whether name is among the hosts of a known_hosts
// line, as OpenSSH's match_hostname and its hashed entries decide.
func matchKnownHost(name string, hosts []string) bool {
	name = strings.ToLower(name)
	matched := false
	for _, h := range hosts {
		if rest, ok := strings.CutPrefix(h, "|1|"); ok {
			salt64, hash64, _ := strings.Cut(rest, "|")
			salt, err1 := base64.StdEncoding.DecodeString(salt64)
			hash, err2 := base64.StdEncoding.DecodeString(hash64)
			mac := hmac.New(sha1.New, salt)
			mac.Write([]byte(name))
			if err1 == nil && err2 == nil && hmac.Equal(mac.Sum(nil), hash) {
				matched = true
			}
			continue
		}
		pattern, negated := strings.CutPrefix(h, "!")
		if wildcardMatch(strings.ToLower(pattern), name) {
			if negated {
				return false
			}
			matched = true
		}
	}
	return matched
}

// wildcardMatch is OpenSSH's match_pattern: * for any run of characters,
// ? for one.
func wildcardMatch(pattern, s string) bool {
	for len(pattern) > 0 {
		switch pattern[0] {
		case '*':
			for i := 0; i <= len(s); i++ {
				if wildcardMatch(pattern[1:], s[i:]) {
					return true
				}
			}
			return false
		case '?':
			if s == "" {
				return false
			}
		default:
			if s == "" || s[0] != pattern[0] {
				return false
			}
		}
		pattern, s = pattern[1:], s[1:]
	}
	return s == ""
}

func (db *aliasDB) HostKeyCallback() ssh.HostKeyCallback {
	return func(_ string, remote net.Addr, key ssh.PublicKey) error {
		// A @revoked key is refused first, whatever the host, as x/crypto
		// and OpenSSH do.
		var revoked *xknownhosts.RevokedError
		if err := db.base.HostKeyCallback()("revoked.invalid:22", remote, key); errors.As(err, &revoked) {
			return err
		}
		keyErr := &xknownhosts.KeyError{}
		for _, l := range db.lines {
			if bytes.Equal(l.key.Marshal(), key.Marshal()) {
				return nil
			}
			keyErr.Want = append(keyErr.Want, xknownhosts.KnownKey{Key: l.key, Filename: l.file, Line: l.lineNumber})
		}
		return keyErr
	}
}

func (db *aliasDB) HostKeys(string) []knownhosts.PublicKey {
	var keys []knownhosts.PublicKey
	for _, l := range db.lines {
		keys = append(keys, knownhosts.PublicKey{PublicKey: l.key, Cert: l.cert})
	}
	return keys
}

// HostKeyAlgorithms are the algorithms of the alias's keys, as
// knownhosts.HostKeyDB has them for a host.
func (db *aliasDB) HostKeyAlgorithms(string) []string {
	var algos []string
	add := func(a string) {
		if a != "" && !slices.Contains(algos, a) {
			algos = append(algos, a)
		}
	}
	for _, k := range db.HostKeys("") {
		types := []string{k.Type()}
		if k.Type() == ssh.KeyAlgoRSA {
			types = []string{ssh.KeyAlgoRSASHA512, ssh.KeyAlgoRSASHA256, ssh.KeyAlgoRSA}
		}
		for _, t := range types {
			if k.Cert {
				t = certAlgo[t]
			}
			add(t)
		}
	}
	return algos
}

// certAlgo is the certificate algorithm of each key algorithm.
var certAlgo = map[string]string{
	ssh.KeyAlgoRSA:        ssh.CertAlgoRSAv01,
	ssh.KeyAlgoRSASHA256:  ssh.CertAlgoRSASHA256v01,
	ssh.KeyAlgoRSASHA512:  ssh.CertAlgoRSASHA512v01,
	ssh.KeyAlgoECDSA256:   ssh.CertAlgoECDSA256v01,
	ssh.KeyAlgoSKECDSA256: ssh.CertAlgoSKECDSA256v01,
	ssh.KeyAlgoECDSA384:   ssh.CertAlgoECDSA384v01,
	ssh.KeyAlgoECDSA521:   ssh.CertAlgoECDSA521v01,
	ssh.KeyAlgoED25519:    ssh.CertAlgoED25519v01,
	ssh.KeyAlgoSKED25519:  ssh.CertAlgoSKED25519v01,
}
