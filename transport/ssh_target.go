package transport

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/user"
	"strconv"
	"strings"
)

// sshTarget is a parsed "[user@]host[:port]" or "ssh://[user@]host[:port]".
type sshTarget struct {
	user, host, port string
}

// addr is host:port as dialled and as looked up in known_hosts.
func (t sshTarget) addr() string { return net.JoinHostPort(t.host, t.port) }

// parseTarget splits "[user@]host[:port]". IPv6 addresses take brackets
// when a port follows ("[::1]:2222"); a bare IPv6 address ("::1") means
// port 22.
//
// A target that starts with "ssh://" is a URI read the way ssh(1) reads
// its destination argument; see parseSSHURI.
func parseTarget(s string) (sshTarget, error) {
	t, err := parseTargetText(s)
	if err != nil {
		// An error names the target, but never a password someone wrote
		// into it (user:secret@host): the message reaches terminals and
		// logs.
		if r := redactTarget(s); r != s {
			err = errors.New(strings.Replace(err.Error(), strconv.Quote(s), strconv.Quote(r), 1))
		}
	}
	return t, err
}

// RedactTarget is target as messages may show it: what follows a ":" in its
// user part (a password someone wrote into it) is hidden.
func RedactTarget(target string) string { return redactTarget(target) }

// redactTarget hides what follows a ":" in a target's user part.
func redactTarget(s string) string {
	scheme, rest := "", s
	if i := strings.Index(s, "://"); i >= 0 {
		scheme, rest = s[:i+3], s[i+3:]
	}
	at := strings.LastIndex(rest, "@")
	if scheme != "" {
		at = strings.Index(rest, "@")
	}
	if at < 0 {
		return s
	}
	user, host := rest[:at], rest[at:]
	if i := strings.IndexByte(user, ':'); i >= 0 {
		return scheme + user[:i] + ":***" + host
	}
	return s
}

func parseTargetText(s string) (sshTarget, error) {
	if rest, ok := strings.CutPrefix(s, "ssh://"); ok {
		return parseSSHURI(s, rest)
	}
	if scheme, ok := uriScheme(s); ok {
		msg := fmt.Sprintf("%s:// targets are not supported", scheme)
		if strings.EqualFold(scheme, "ssh") {
			msg = fmt.Sprintf("write the scheme as ssh://, in lower case, not %s://", scheme)
		}
		return sshTarget{port: "22"}, fmt.Errorf("target %q: %s; write it as [user@]host[:port] or %s", s, msg, sshURIForm)
	}
	t := sshTarget{port: "22"}
	bad := func(format string, args ...any) (sshTarget, error) {
		return t, fmt.Errorf("target %q: %s; write it as [user@]host[:port]", s, fmt.Sprintf(format, args...))
	}
	hostport := s
	if i := strings.LastIndex(s, "@"); i >= 0 {
		t.user, hostport = s[:i], s[i+1:]
		if t.user == "" {
			return bad("empty user name before @")
		}
	}
	switch {
	case strings.HasPrefix(hostport, "["):
		end := strings.Index(hostport, "]")
		if end < 0 {
			return bad("missing ] after IPv6 address")
		}
		t.host = hostport[1:end]
		rest := hostport[end+1:]
		if rest != "" {
			if !strings.HasPrefix(rest, ":") {
				return bad("unexpected %q after ]", rest)
			}
			t.port = rest[1:]
		}
	case strings.Count(hostport, ":") == 1:
		t.host, t.port, _ = strings.Cut(hostport, ":")
	default:
		t.host = hostport
	}
	if t.host == "" {
		return bad("empty host name")
	}
	if _, ok := portNumber(t.port); !ok {
		return bad("port %q is not a number from 1 to 65535", t.port)
	}
	return t, nil
}

// sshURIForm is what an ssh:// target looks like, for error messages.
const sshURIForm = "ssh://[user@]host[:port]"

// uriScheme reports the scheme of s if s starts like a URI ("scheme://").
func uriScheme(s string) (string, bool) {
	scheme, _, ok := strings.Cut(s, "://")
	if !ok || scheme == "" || !isASCIILetter(scheme[0]) {
		return "", false
	}
	for i := 1; i < len(scheme); i++ {
		if c := scheme[i]; !isASCIILetter(c) && !isASCIIDigit(c) && c != '+' && c != '-' && c != '.' {
			return "", false
		}
	}
	return scheme, true
}

// portNumber reads a port from 1 to 65535 written in decimal.
func portNumber(s string) (int, bool) {
	n, err := strconv.Atoi(s)
	return n, err == nil && n >= 1 && n <= 65535
}

// parseSSHURI reads rest, the part of target s after "ssh://", as
// OpenSSH's ssh(1) reads a destination URI "ssh://[user@]host[:port]"
// (parse_uri in OpenSSH's misc.c):
//
//   - The user is everything before the first @. A ";" in it starts
//     connection parameters (";fingerprint=..."), which are ignored, as
//     ssh(1) ignores them. The user is percent-decoded ("%40" is "@") and
//     "+" means a space, so a literal "+" is written "%2B".
//   - The host is not decoded. A name must start with a letter or digit
//     and hold only letters, digits, ".", "-" and "_", with no empty
//     label; one trailing "." is dropped. It may stand in brackets.
//   - An empty port ("host:") means port 22.
//   - A trailing "/" is an empty path and allowed; any other path, a query
//     or a fragment is refused: ssh:// names a host, nothing on it.
//
// Where hoist differs from OpenSSH 9.2, it refuses what ssh(1) would take
// in a way hoist finds risky or ambiguous, never reading a target as a
// different user, host or port:
//
//   - The URI's authority ends at the first "/", "?" or "#", as in RFC
//     3986; ssh(1) looks for the @ past them ("ssh://h/x@y" is user "h/x"
//     on host "y" to ssh(1), a path to hoist). Write them as %2F, %3F, %23
//     in a user name.
//   - A ":" in the user part is refused rather than taken into the user
//     name: "user:password@" would send the password as a user name.
//     Write a ":" in a user name as %3A.
//   - The port is decimal; ssh(1) also takes service names from
//     /etc/services ("ssh://host:ssh").
//   - A user name with a NUL (%00) or another control character is
//     refused, as newer ssh(1) releases refuse it.
//
// And it takes one thing ssh(1) 9.2 refuses though its manual shows it: an
// IPv6 address in brackets, "ssh://user@[::1]:2222", with any zone written
// "%25" as RFC 6874 has it: "ssh://[fe80::1%25eth0]".
func parseSSHURI(s, rest string) (sshTarget, error) {
	t := sshTarget{port: "22"}
	bad := func(format string, args ...any) (sshTarget, error) {
		return t, fmt.Errorf("target %q: %s; write it as %s", s, fmt.Sprintf(format, args...), sshURIForm)
	}

	authority, tail := rest, ""
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		authority, tail = rest[:i], rest[i:]
	}

	hostport := authority
	if at := strings.IndexByte(authority, '@'); at >= 0 {
		info := authority[:at]
		hostport = authority[at+1:]
		name, _, _ := strings.Cut(info, ";") // connection parameters: ignored, as by ssh(1)
		if name == "" {
			return bad("empty user name before @")
		}
		if strings.Contains(name, ":") {
			return bad("a password (user:password@) is not taken in a target; write a : in a user name as %%3A")
		}
		user, err := decodeURIUser(name)
		if err != nil {
			return bad("user name %q: %v", name, err)
		}
		t.user = user
	}

	var host, port string
	bracketed := strings.HasPrefix(hostport, "[")
	if bracketed {
		end := strings.IndexByte(hostport, ']')
		if end < 0 {
			return bad("missing ] after [")
		}
		host = hostport[1:end]
		switch after := hostport[end+1:]; {
		case after == "":
		case after[0] == ':':
			port = after[1:]
		default:
			return bad("unexpected %q after ]", after)
		}
	} else {
		if _, err := netip.ParseAddr(hostport); err == nil || strings.Contains(hostport, "::") {
			return bad("an IPv6 address must stand in brackets, as in ssh://[::1]:2222")
		}
		host, port, _ = strings.Cut(hostport, ":")
	}

	switch {
	case host == "":
		return bad("empty host name")
	case bracketed && strings.Contains(host, ":"):
		h, err := uriIPv6(host)
		if err != nil {
			return bad("%v", err)
		}
		t.host = h
	default:
		h, err := validDomain(host)
		if err != nil {
			return bad("%v", err)
		}
		t.host = h
	}

	if port != "" { // "host:" means the default port, as to ssh(1)
		n, ok := portNumber(port)
		if !ok {
			return bad("port %q is not a number from 1 to 65535", port)
		}
		t.port = strconv.Itoa(n)
	}

	switch after := strings.TrimPrefix(tail, "/"); {
	case after == "": // nothing, or an empty path "/"
	case after[0] == '?':
		return bad("a query (%q) is not allowed in an ssh:// target", after)
	case after[0] == '#':
		return bad("a fragment (%q) is not allowed in an ssh:// target", after)
	case strings.Contains(tail, "@"):
		return bad("a path (%q) is not allowed in an ssh:// target; write a / in a user name as %%2F", tail)
	default:
		return bad("a path (%q) is not allowed in an ssh:// target", tail)
	}
	return t, nil
}

// decodeURIUser decodes the user part of an ssh:// URI as OpenSSH's
// urldecode does: "%XX" is the byte XX and "+" is a space. A "%" not
// followed by two hex digits is an error, and so, as in newer OpenSSH
// releases, is a NUL or other control character.
func decodeURIUser(s string) (string, error) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '+':
			b.WriteByte(' ')
		case '%':
			if i+2 >= len(s) || !isHex(s[i+1]) || !isHex(s[i+2]) {
				esc := s[i:min(i+3, len(s))]
				return "", fmt.Errorf("%q is not an escape (%% takes two hex digits, as in %%40 for @)", esc)
			}
			b.WriteByte(unhex(s[i+1])<<4 | unhex(s[i+2]))
			i += 2
		default:
			b.WriteByte(c)
		}
	}
	user := b.String()
	for i := 0; i < len(user); i++ {
		if c := user[i]; c < 0x20 || c == 0x7f {
			return "", fmt.Errorf("control character %q is not allowed", string(c))
		}
	}
	return user, nil
}

// validDomain checks a host name from an ssh:// URI as OpenSSH's
// valid_domain does, and drops one trailing ".", as it does.
func validDomain(name string) (string, error) {
	if strings.Contains(name, "@") {
		return "", fmt.Errorf("more than one @; write an @ in a user name as %%40")
	}
	if !isASCIILetter(name[0]) && !isASCIIDigit(name[0]) {
		return "", fmt.Errorf("host name %q must start with a letter or digit", name)
	}
	for i := 0; i < len(name); i++ {
		switch c := name[i]; {
		case c == '.' && i > 0 && name[i-1] == '.':
			return "", fmt.Errorf("host name %q has an empty part (..)", name)
		case c == '.' || c == '-' || c == '_' || isASCIILetter(c) || isASCIIDigit(c):
		default:
			return "", fmt.Errorf("%q is not allowed in host name %q (a host takes letters, digits, '.', '-', '_', or an IPv6 address in brackets)", string(c), name)
		}
	}
	return strings.TrimSuffix(name, "."), nil
}

// uriIPv6 checks the IPv6 address between the brackets of an ssh:// URI.
// A zone is written "%25zone" (RFC 6874) and comes back as "%zone".
func uriIPv6(s string) (string, error) {
	addr, zone, hasZone := strings.Cut(s, "%")
	if hasZone {
		z, ok := strings.CutPrefix(zone, "25")
		if !ok || z == "" {
			return "", fmt.Errorf("write the zone of IPv6 address %q as %%25zone, as in ssh://[fe80::1%%25eth0]", s)
		}
		zone = z
	}
	ip, err := netip.ParseAddr(addr)
	if err != nil || !ip.Is6() || strings.Contains(zone, "%") {
		return "", fmt.Errorf("%q is not an IPv6 address", s)
	}
	if hasZone {
		return addr + "%" + zone, nil
	}
	return addr, nil
}

func isASCIILetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }
func isASCIIDigit(c byte) bool  { return '0' <= c && c <= '9' }
func isHex(c byte) bool {
	return isASCIIDigit(c) || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case c >= 'a':
		return c - 'a' + 10
	case c >= 'A':
		return c - 'A' + 10
	}
	return c - '0'
}

// currentUser is the login name OpenSSH would use by default.
func currentUser() (string, error) {
	if u, err := user.Current(); err == nil && u.Username != "" {
		return u.Username, nil
	}
	if name := os.Getenv("USER"); name != "" {
		return name, nil
	}
	return "", errors.New("cannot tell the current user name; give the user as user@host")
}
