package transport

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"time"
)

// Control is what the OpenSSH configuration says about sharing one
// connection between commands (ControlPath, ControlMaster, ControlPersist;
// set by Resolved.Apply). DialShared reads it; DialSSH ignores it.
type Control struct {
	// Path is ControlPath as ssh -G prints it, tokens expanded; "" for
	// none. hoist's master listens at Path with ".hoist" appended
	// (Control.Socket).
	Path string
	// Start: ControlMaster auto, autoask or yes, which let a command start
	// a master when none is live.
	Start bool
	// Persist is ControlPersist: how long a master with no client stays;
	// 0 for no (no master is started: it would end with its first
	// command), negative for yes (until stopped).
	Persist time.Duration
}

// Socket is where hoist's master for c listens: ControlPath with ".hoist"
// appended, next to OpenSSH's own master's socket, never in its place.
func (c Control) Socket() string {
	if c.Path == "" {
		return ""
	}
	return c.Path + ".hoist"
}

// mayStart: a command may start a master for c.
func (c Control) mayStart() bool { return c.Path != "" && c.Start && c.Persist != 0 }

// controlFrom reads the connection sharing keywords of ssh -G.
func controlFrom(r Resolved) Control {
	var c Control
	if p := r.Get("controlpath"); p != "" && p != "none" {
		c.Path = p
	}
	switch r.Get("controlmaster") {
	case "auto", "autoask", "true", "yes":
		c.Start = true
	}
	switch p := r.Get("controlpersist"); p {
	case "", "no", "false":
	case "yes", "true", "0":
		c.Persist = -1
	default:
		if n, err := strconv.Atoi(p); err == nil && n > 0 {
			c.Persist = time.Duration(n) * time.Second
		}
	}
	return c
}

// maxSocketPath is the longest path a Unix socket can be bound to here,
// less the suffix of the master's temporary name (".hoist" is in the
// path already).
const maxSocketPath = sunPathLen - 1 - len(".XXXXXXXXXXXXXXXX")

// socketRefusal is why a master's socket is not trusted.
type socketRefusal struct{ why string }

func (r *socketRefusal) Error() string { return r.why }

func refuse(format string, args ...any) error {
	return &socketRefusal{fmt.Sprintf(format, args...)}
}

// checkSocketDir checks that nobody but the user (and root) can put a
// socket at a name in dir: dir, with symlinks resolved, is owned by the
// user or root and writable by neither group nor others, and so is every
// directory above it, unless it is sticky (nobody can rename what others
// put in it).
func checkSocketDir(dir string) error {
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return refuse("the socket's directory %s: %v", dir, causeText(err))
	}
	uid := uint32(os.Getuid())
	for d, first := real, true; ; d, first = filepath.Dir(d), false {
		fi, err := os.Lstat(d)
		if err != nil {
			return refuse("the socket's directory %s: %v", d, causeText(err))
		}
		owner, _ := FileOwner(fi)
		switch mode := fi.Mode(); {
		case !fi.IsDir():
			return refuse("%s is not a directory", d)
		case owner != uid && owner != 0:
			return refuse("the directory %s is owned by uid %d, not by you or root", d, owner)
		case mode.Perm()&0o022 != 0 && (first || mode&fs.ModeSticky == 0):
			return refuse("the directory %s can be written by others (mode %04o); "+
				"keep ControlPath in a directory only you can write", d, mode.Perm()|stickyBit(mode))
		}
		if d == filepath.Dir(d) {
			return nil
		}
	}
}

func stickyBit(m fs.FileMode) fs.FileMode {
	if m&fs.ModeSticky != 0 {
		return 0o1000
	}
	return 0
}

// checkSocket looks at a master's socket path before connecting: nothing
// there (nil info, nil error), a socket the user may trust (its info), or
// a refusal.
func checkSocket(path string) (fs.FileInfo, error) {
	if len(path) > maxSocketPath {
		return nil, refuse("the socket path %s is %d bytes, longer than a Unix socket takes here (%d)",
			path, len(path), maxSocketPath)
	}
	if err := checkSocketDir(filepath.Dir(path)); err != nil {
		return nil, err
	}
	fi, err := os.Lstat(path)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, refuse("the socket %s: %v", path, causeText(err))
	}
	owner, _ := FileOwner(fi)
	switch {
	case fi.Mode().Type() != fs.ModeSocket:
		return nil, refuse("%s is not a socket (%s)", path, fi.Mode().Type())
	case owner != uint32(os.Getuid()):
		return nil, refuse("the socket %s is owned by uid %d, not by you", path, owner)
	case fi.Mode().Perm()&0o077 != 0:
		return nil, refuse("the socket %s has mode %04o: others may use it", path, fi.Mode().Perm())
	}
	return fi, nil
}

// removeIfSame removes path if it is still the file fi describes (same
// device and inode): never a socket that replaced it meanwhile.
func removeIfSame(path string, fi fs.FileInfo) {
	now, err := os.Lstat(path)
	if err == nil && sameFile(now, fi) {
		_ = os.Remove(path)
	}
}

func sameFile(a, b fs.FileInfo) bool {
	sa, ok1 := a.Sys().(*syscall.Stat_t)
	sb, ok2 := b.Sys().(*syscall.Stat_t)
	return ok1 && ok2 && sa.Dev == sb.Dev && sa.Ino == sb.Ino
}
