//go:build linux

package transport

import (
	"net"
	"syscall"
)

// quickAcker returns what asks Linux to acknowledge at once the bytes just
// read from conn, or nil when conn is not a TCP connection of this host.
// OpenSSH's sshd leaves Nagle's algorithm on for sessions without a
// terminal, so an answer it writes while a small packet of its own is not
// yet acknowledged waits for that acknowledgement, which Linux delays by up
// to 40 ms: right after authentication (sshd announces its host keys), the
// first request on every new connection waited 40 ms. Linux turns quick
// acknowledgements off again by itself, so they are asked for after every
// read.
func quickAcker(conn net.Conn) func() {
	tc, ok := conn.(*net.TCPConn)
	if !ok {
		return nil
	}
	rc, err := tc.SyscallConn()
	if err != nil {
		return nil
	}
	return func() {
		_ = rc.Control(func(fd uintptr) {
			_ = syscall.SetsockoptInt(int(fd), syscall.IPPROTO_TCP, syscall.TCP_QUICKACK, 1)
		})
	}
}
