//go:build !linux

package transport

import "net"

// quickAcker is nil where the kernel has no TCP_QUICKACK.
func quickAcker(net.Conn) func() { return nil }
