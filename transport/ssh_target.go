package transport

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/user"
	"strconv"
	"strings"
)

// sshTarget is a parsed "[user@]host[:port]".
type sshTarget struct {
	user, host, port string
}

// addr is host:port as dialled and as looked up in known_hosts.
func (t sshTarget) addr() string { return net.JoinHostPort(t.host, t.port) }

// parseTarget splits "[user@]host[:port]". IPv6 addresses take brackets
// when a port follows ("[::1]:2222"); a bare IPv6 address ("::1") means
// port 22.
func parseTarget(s string) (sshTarget, error) {
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
	if n, err := strconv.Atoi(t.port); err != nil || n < 1 || n > 65535 {
		return bad("port %q is not a number from 1 to 65535", t.port)
	}
	return t, nil
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
