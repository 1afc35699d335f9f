package transport

import (
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"regexp"
	"strconv"
	"strings"
	"sync"
)

// The %-tokens, ${VAR} and ~ of ssh_config(5), expanded where and as
// OpenSSH expands them.
//
// ssh -G prints some keywords expanded already: HostName, User (in newer
// releases), UserKnownHostsFile, IdentityAgent, ControlPath and
// RemoteCommand. Those are used as printed; expanding them again would turn
// a %% that ssh made a % into a token. The others ssh expands only when it
// connects, and so does hoist, each with what OpenSSH gives that keyword:
//
//   - IdentityFile and CertificateFile: a leading ~ or ~user, then %%, %C,
//     %d, %h, %i, %k, %L, %l, %n, %p, %r, %u (and %j where the installed
//     OpenSSH knows it, 9.6 and later) and ${VAR};
//   - ProxyCommand and ProxyJump: %%, %h, %k, %n, %p and %r, nothing else
//     (a shell runs the command: it expands what it expands);
//   - GlobalKnownHostsFile, and UserKnownHostsFile once more: a leading ~.
//
// An unknown token, a % at the end, an unset environment variable or an
// unknown ~user is an error, as ssh refuses to connect then.

// Token sets: the letters each keyword takes.
const (
	fileTokens  = "CdhijkLlnpru" // IdentityFile, CertificateFile (j only where ssh knows it)
	proxyTokens = "hknpr"        // ProxyCommand, ProxyJump
)

// tokens are the values of the tokens for one host, as ssh sets them up
// before it connects (its ssh_conn_info), worked out when first needed.
type tokens struct {
	r        Resolved
	original string // the host name as given, before HostName applies
}

// value is the value of token c, and whether the installed ssh knows it.
func (t tokens) value(c byte) (string, bool, error) {
	switch c {
	case 'h':
		return t.r.Get("hostname"), true, nil
	case 'p':
		return t.r.Get("port"), true, nil
	case 'r':
		return t.r.Get("user"), true, nil
	case 'n':
		return t.original, true, nil
	case 'k':
		if a, ok := t.r["hostkeyalias"]; ok && len(a) > 0 {
			return a[0], true, nil
		}
		return t.original, true, nil
	case 'd', 'u':
		u, err := user.Current()
		if err != nil {
			return "", true, fmt.Errorf("cannot tell the local user, for %%%c: %w", c, err)
		}
		if c == 'd' {
			return u.HomeDir, true, nil
		}
		return u.Username, true, nil
	case 'i':
		return strconv.Itoa(os.Getuid()), true, nil
	case 'L', 'l':
		long, err := os.Hostname()
		if err != nil {
			return "", true, fmt.Errorf("cannot tell the local host name, for %%%c: %w", c, err)
		}
		if c == 'L' {
			long, _, _ = strings.Cut(long, ".")
		}
		return long, true, nil
	case 'j': // the host of ProxyJump's last hop, OpenSSH 9.6 and later
		return jumpHost(t.r.Get("proxyjump")), opensshAtLeast(9, 6), nil
	case 'C': // a hash of %l%h%p%r, and %j where ssh knows it
		var hash strings.Builder
		for _, k := range []byte("lhprj") {
			v, known, err := t.value(k)
			if err != nil {
				return "", true, err
			}
			if known {
				hash.WriteString(v)
			}
		}
		sum := sha1.Sum([]byte(hash.String()))
		return hex.EncodeToString(sum[:]), true, nil
	}
	return "", false, nil
}

// jumpHost is the host of the last hop of a ProxyJump as ssh -G prints it,
// without brackets; "" for none.
func jumpHost(chain string) string {
	if chain == "" || chain == "none" {
		return ""
	}
	t, err := parseTarget(chain[strings.LastIndexByte(chain, ',')+1:])
	if err != nil {
		return ""
	}
	return t.host
}

// expand expands s as OpenSSH's percent_dollar_expand does: each %x whose
// letter is in allowed (and %%) and, with dollar, each ${VAR}.
func (t tokens) expand(s, allowed string, dollar bool) (string, error) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if dollar && c == '$' && i+1 < len(s) && s[i+1] == '{' {
			end := strings.IndexByte(s[i+2:], '}')
			if end < 0 {
				return "", errors.New("${ without a closing }")
			}
			name := s[i+2 : i+2+end]
			if name == "" {
				return "", errors.New("an empty ${}")
			}
			val, ok := os.LookupEnv(name)
			if !ok {
				return "", fmt.Errorf("the environment variable %s is not set", name)
			}
			b.WriteString(val)
			i += 2 + end
			continue
		}
		if c != '%' {
			b.WriteByte(c)
			continue
		}
		if i++; i == len(s) {
			return "", errors.New("it ends in a % (write a literal % as %%)")
		}
		if s[i] == '%' {
			b.WriteByte('%')
			continue
		}
		v, known, err := t.value(s[i])
		switch {
		case err != nil:
			return "", err
		case !known || strings.IndexByte(allowed, s[i]) < 0:
			return "", fmt.Errorf("%%%c is not a token it takes", s[i])
		}
		b.WriteString(v)
	}
	return b.String(), nil
}

// tildeExpand expands a leading ~ or ~user as OpenSSH's tilde_expand does:
// the home directory from the password database, with a slash after it.
func tildeExpand(s string) (string, error) {
	rest, ok := strings.CutPrefix(s, "~")
	if !ok {
		return s, nil
	}
	name, path := "", strings.TrimLeft(rest, "/")
	if rest != "" && rest[0] != '/' {
		name, path, _ = strings.Cut(rest, "/")
		path = strings.TrimLeft(path, "/")
	}
	var u *user.User
	var err error
	if name == "" {
		u, err = user.Current()
	} else {
		u, err = user.Lookup(name)
	}
	if err != nil {
		if name == "" {
			return "", fmt.Errorf("cannot find the home directory for ~: %w", err)
		}
		return "", fmt.Errorf("~%s: no such user", name)
	}
	dir := u.HomeDir
	if !strings.HasSuffix(dir, "/") {
		dir += "/"
	}
	return dir + path, nil
}

// expandFile expands the value of keyword (IdentityFile, CertificateFile)
// as ssh does before it reads the file.
func (t tokens) expandFile(keyword, raw string) (string, error) {
	s, err := tildeExpand(raw)
	if err == nil {
		s, err = t.expand(s, fileTokens, true)
	}
	if err != nil {
		return "", configError(keyword, raw, err)
	}
	return s, nil
}

// configError is an error in a value of the OpenSSH configuration that ssh
// too would refuse.
func configError(keyword, raw string, err error) error {
	return fmt.Errorf("%s %q in the OpenSSH configuration: %v; fix it there (ssh refuses it too)", keyword, raw, err)
}

var (
	versionOnce sync.Once
	version     [2]int // major, minor of the installed ssh; 0, 0 when unknown
)

var versionRE = regexp.MustCompile(`OpenSSH_(\d+)\.(\d+)`)

// opensshAtLeast reports whether the installed ssh is OpenSSH major.minor
// or newer. An ssh whose version cannot be told counts as old.
func opensshAtLeast(major, minor int) bool {
	versionOnce.Do(func() {
		out, err := exec.Command("ssh", "-V").CombinedOutput()
		if m := versionRE.FindSubmatch(out); err == nil && m != nil {
			version[0], _ = strconv.Atoi(string(m[1]))
			version[1], _ = strconv.Atoi(string(m[2]))
		}
	})
	return version[0] > major || version[0] == major && version[1] >= minor
}
