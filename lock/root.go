package lock

import (
	"errors"
	"strings"
)

// Root is the directory that holds a host's store, either absolute or
// relative to the login's home directory on that host.
type Root struct {
	// Home says that Path is relative to the host's $HOME.
	Home bool
	// Path is absolute when Home is false; otherwise relative, possibly empty.
	Path string
}

// DefaultRoot is ~/.hoist.
var DefaultRoot = Root{Home: true, Path: ".hoist"}

// ErrBadRoot reports a --root value that is neither absolute nor ~/-relative.
var ErrBadRoot = errors.New("root must be an absolute path or start with ~/ (quote it, so that the local shell does not expand ~)")

// ParseRoot accepts "/abs/path", "~" and "~/rel/path". Every other character
// is kept literally: a root is data, never shell syntax.
func ParseRoot(s string) (Root, error) {
	switch {
	case strings.ContainsRune(s, 0):
		return Root{}, ErrBadRoot
	case s == "~":
		return Root{Home: true}, nil
	case strings.HasPrefix(s, "~/"):
		return Root{Home: true, Path: strings.TrimRight(strings.TrimLeft(s[2:], "/"), "/")}, nil
	case strings.HasPrefix(s, "/"):
		if p := strings.TrimRight(s, "/"); p != "" {
			return Root{Path: p}, nil
		}
		return Root{Path: "/"}, nil
	}
	return Root{}, ErrBadRoot
}

// String gives the root as a user would write it.
func (r Root) String() string {
	if !r.Home {
		return r.Path
	}
	if r.Path == "" {
		return "~"
	}
	return "~/" + r.Path
}
