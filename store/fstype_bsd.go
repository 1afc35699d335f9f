//go:build darwin || freebsd

package store

import "syscall"

// changeTimeKept reports whether the file system that holds p keeps a
// change time hoist trusts (keepsChangeTimeNamed); where it cannot tell,
// it does not.
func changeTimeKept(p string) bool {
	var fs syscall.Statfs_t
	if syscall.Statfs(p, &fs) != nil {
		return false
	}
	name := make([]byte, 0, len(fs.Fstypename))
	for _, c := range fs.Fstypename {
		if c == 0 {
			break
		}
		name = append(name, byte(c))
	}
	return keepsChangeTimeNamed(string(name))
}
