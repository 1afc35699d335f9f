package transport

import (
	"context"
	"net"
)

// HostDialer is a transport that opens TCP connections to an address as its
// host sees it ("127.0.0.1:8080" is the host's own loopback): over SSH a
// direct-tcpip channel of the connection, for [Local] a plain dial. The
// host's sshd makes the connection, so the host needs no client program;
// a server that forbids forwarding (AllowTcpForwarding no) refuses it.
// Health checks dialled from the workstation use it (docs/rollout.md).
type HostDialer interface {
	DialHost(ctx context.Context, addr string) (net.Conn, error)
}

// DialHost opens a direct-tcpip channel to addr on the connection (one
// round trip).
func (s *SSH) DialHost(ctx context.Context, addr string) (net.Conn, error) {
	return s.client.DialContext(ctx, "tcp", addr)
}

// DialHost dials addr from this machine.
func (l *Local) DialHost(ctx context.Context, addr string) (net.Conn, error) {
	var d net.Dialer
	return d.DialContext(ctx, "tcp", addr)
}
