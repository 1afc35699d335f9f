//go:build linux

package transport

import (
	"net"

	"golang.org/x/sys/unix"
)

// sunPathLen is the size of a Unix socket address's path, its NUL
// included.
const sunPathLen = 108

// peerUID is the uid of the process at the other end of c, as the kernel
// recorded it when the connection was made (SO_PEERCRED).
func peerUID(c *net.UnixConn) (uint32, int, error) {
	rc, err := c.SyscallConn()
	if err != nil {
		return 0, 0, err
	}
	var cred *unix.Ucred
	var serr error
	if err := rc.Control(func(fd uintptr) {
		cred, serr = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED)
	}); err != nil {
		return 0, 0, err
	}
	if serr != nil {
		return 0, 0, serr
	}
	return cred.Uid, int(cred.Pid), nil
}
