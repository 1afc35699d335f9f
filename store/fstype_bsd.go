//go:build darwin || freebsd

package store

import (
	"strings"
	"syscall"
)

// changeTimeKept reports whether the file system that holds p keeps a real
// change time; where it cannot tell, it does not. Those that keep none
// report the modification time in its place: FAT (msdos), exFAT, every
// FUSE file system (macFUSE, FreeBSD's fusefs: what each reports is up to
// its daemon), and WebDAV.
func changeTimeKept(p string) bool {
	var fs syscall.Statfs_t
	if syscall.Statfs(p, &fs) != nil {
		return false
	}
	var b strings.Builder
	for _, c := range fs.Fstypename {
		if c == 0 {
			break
		}
		b.WriteByte(byte(c))
	}
	switch name := b.String(); {
	case name == "msdos", name == "exfat", name == "webdav", strings.Contains(name, "fuse"):
		return false
	}
	return true
}
