package transport

import (
	"errors"
	"fmt"
)

// Errors that [DialSSH] returns, each matchable with errors.Is. Their
// messages, like those of [DialError] and [HostKeyError], never name the
// host: callers put the target in front.
var (
	// ErrUnreachable: no TCP connection could be made (refused, no route,
	// host name not found, dial timeout). Nothing reached sshd.
	ErrUnreachable = errors.New("host unreachable")
	// ErrHandshakeTimeout: the TCP connection was made but the SSH
	// handshake (banner, key exchange, authentication) did not finish in
	// time.
	ErrHandshakeTimeout = errors.New("ssh handshake timed out")
	// ErrHandshake: the SSH handshake failed for a reason other than a
	// timeout, authentication or the host key, for example the peer closed
	// the connection or does not speak SSH.
	ErrHandshake = errors.New("ssh handshake failed")
	// ErrAuth: the host refused every key offered.
	ErrAuth = errors.New("ssh authentication failed")
	// ErrHostKey: the host key is unknown, changed or revoked, or its
	// certificate is not valid; the error is a [*HostKeyError].
	ErrHostKey = errors.New("host key not accepted")
	// ErrIdentity: an identity file given in SSHConfig.IdentityFiles is
	// missing or unusable. Returned before any connection is made.
	ErrIdentity = errors.New("identity file unusable")
	// ErrKnownHosts: the known_hosts file exists but cannot be read or
	// parsed, or a new host key could not be recorded in it.
	ErrKnownHosts = errors.New("known_hosts file unusable")
)

// DialError is the error [DialSSH] returns for every failure except host
// key problems. Kind is one of the Err* values above; errors.Is matches both
// Kind and the underlying cause.
type DialError struct {
	Kind error
	// Msg is the whole message: one lowercase line, "<what happened>; <what
	// to do>".
	Msg string
	// Err is the underlying cause, if any.
	Err error
}

func (e *DialError) Error() string { return e.Msg }

func (e *DialError) Unwrap() []error {
	if e.Err == nil {
		return []error{e.Kind}
	}
	return []error{e.Kind, e.Err}
}

func dialErr(kind, cause error, format string, args ...any) *DialError {
	return &DialError{Kind: kind, Msg: fmt.Sprintf(format, args...), Err: cause}
}

// HostKeyError reports a host key that known_hosts does not vouch for.
// Exactly one of Unknown, Changed, Revoked and InvalidCert is true. It
// matches errors.Is(err, ErrHostKey).
//
// A host that offers a certificate no @cert-authority line vouches for is
// judged by the plain key inside the certificate, as OpenSSH does: Unknown,
// Changed and Revoked then describe that key, and AcceptNewHostKey records
// it rather than the certificate.
type HostKeyError struct {
	// Unknown: known_hosts has no key for the host. Rerunning with
	// SSHConfig.AcceptNewHostKey records it.
	Unknown bool
	// Changed: known_hosts has keys for the host, none of them the one
	// offered. Refused even with AcceptNewHostKey.
	Changed bool
	// Revoked: the offered key is marked @revoked in known_hosts, or, with
	// CA, the key of the CA that signed the offered certificate is.
	Revoked bool
	// InvalidCert: the host offered a certificate, known_hosts knows the
	// host only through @cert-authority lines (and has no plain key that
	// matches the certificate's), and the certificate is not one they
	// vouch for: signed by another CA, expired, not yet valid, issued for
	// other names, or not a host certificate. CertProblem says which.
	// Refused even with AcceptNewHostKey: a host its CA vouches for is not
	// a new host.
	InvalidCert bool
	// CertProblem says what is wrong with the certificate when InvalidCert.
	CertProblem string
	// CA: with Revoked, KeyType and Fingerprint describe the CA key that
	// signed the offered certificate rather than the host's own key.
	CA bool
	// Host is the host as written in known_hosts ("web1", "[web1]:2222").
	Host string
	// KeyType names the offered key the way OpenSSH prints it: "ED25519",
	// "ECDSA", "RSA"; "ED25519-CERT" and so on when InvalidCert.
	KeyType string
	// Fingerprint is the offered key's ssh.FingerprintSHA256; for a
	// certificate, that of the plain key inside it, as ssh-keygen -l shows.
	Fingerprint string
	// KnownHostsFile is the file that holds the old, revoked or CA key; for
	// an unknown key, the file a new key would be recorded in.
	KnownHostsFile string
	// Err is the error from the known_hosts check.
	Err error
}

func (e *HostKeyError) Error() string {
	key := e.KeyType + " " + e.Fingerprint
	switch {
	case e.Changed:
		return fmt.Sprintf("HOST KEY CHANGED: the host offered %s but %s has a different key for it; "+
			"refusing (possible man-in-the-middle); if the host was reinstalled, "+
			"remove the old entry with ssh-keygen -R '%s' -f %s",
			key, e.KnownHostsFile, e.Host, e.KnownHostsFile)
	case e.Revoked && e.CA:
		return fmt.Sprintf("the host's certificate is signed by CA key %s, which is marked @revoked in %s; refusing; "+
			"ask the host's administrator for a certificate from a current CA", key, e.KnownHostsFile)
	case e.Revoked:
		return fmt.Sprintf("host key %s is marked @revoked in %s; refusing; "+
			"ask the host's administrator for its current key", key, e.KnownHostsFile)
	case e.InvalidCert:
		return fmt.Sprintf("host certificate %s is not valid: %s; refusing, as %s knows the host only through "+
			"its @cert-authority lines; ask the host's administrator for a valid certificate",
			key, e.CertProblem, e.KnownHostsFile)
	default:
		return fmt.Sprintf("unknown host key %s (not in %s); "+
			"check the fingerprint, then rerun with --accept-new-host-key to record it",
			key, e.KnownHostsFile)
	}
}

func (e *HostKeyError) Unwrap() []error {
	if e.Err == nil {
		return []error{ErrHostKey}
	}
	return []error{ErrHostKey, e.Err}
}
