package lock

import (
	"errors"
	"os"
	"os/user"
	"strings"
)

var errorsIs = errors.Is

func cut(s string) (before, after string, found bool) { return strings.Cut(s, " ") }

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if s == "" {
		return "no output"
	}
	return s
}

// whoAmI is user@host of this client, for the owner record.
func whoAmI() string {
	name := os.Getenv("USER")
	if u, err := user.Current(); err == nil && u.Username != "" {
		name = u.Username
	}
	host, _ := os.Hostname()
	return name + "@" + host
}
