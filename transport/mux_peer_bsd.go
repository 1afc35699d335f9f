//go:build darwin || freebsd

package transport

import (
	"net"

	"golang.org/x/sys/unix"
)

// sunPathLen is the size of a Unix socket address's path, its NUL
// included.
const sunPathLen = 104

// peerUID is the uid of the process at the other end of c, as the kernel
// recorded it when the connection was made (LOCAL_PEERCRED); the pid is
// not told (0).
func peerUID(c *net.UnixConn) (uint32, int, error) {
	rc, err := c.SyscallConn()
	if err != nil {
		return 0, 0, err
	}
	var cred *unix.Xucred
	var serr error
	if err := rc.Control(func(fd uintptr) {
		cred, serr = unix.GetsockoptXucred(int(fd), unix.SOL_LOCAL, unix.LOCAL_PEERCRED)
	}); err != nil {
		return 0, 0, err
	}
	if serr != nil {
		return 0, 0, serr
	}
	return cred.Uid, 0, nil
}
