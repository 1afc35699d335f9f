//go:build linux

package transport

import (
	"net"
	"testing"
)

// Reads from a TCP connection ask for quick acknowledgements; other
// connections have nothing to ask.
func TestActivityConnQuickAcks(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	must(t, err)
	defer ln.Close()
	go func() {
		c, err := ln.Accept()
		if err == nil {
			_, _ = c.Write([]byte("hello"))
			c.Close()
		}
	}()
	raw, err := net.Dial("tcp", ln.Addr().String())
	must(t, err)
	defer raw.Close()
	c := newActivityConn(raw)
	if c.ack == nil {
		t.Fatal("no quick acknowledgements on a TCP connection")
	}
	acks := 0
	inner := c.ack
	c.ack = func() { acks++; inner() }
	buf := make([]byte, 16)
	for {
		n, err := c.Read(buf)
		if err != nil {
			break
		}
		if n == 0 {
			t.Fatal("empty read")
		}
	}
	if acks == 0 || c.received.Load() != 5 {
		t.Errorf("%d acknowledgements asked for, %d bytes counted; want some, and 5", acks, c.received.Load())
	}
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	if newActivityConn(a).ack != nil {
		t.Error("quick acknowledgements asked for on a pipe")
	}
}
