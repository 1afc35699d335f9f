package sshd

import (
	"crypto/rand"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
)

// keygen writes an unencrypted ed25519 key pair to path and path.pub and
// returns the public key line without its comment.
func keygen(bin, path string) (string, error) {
	out, err := exec.Command(bin, "-q", "-t", "ed25519", "-N", "", "-C", "hoist-e2e", "-f", path).CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("ssh-keygen -f %s: %v: %s", path, err, strings.TrimSpace(string(out)))
	}
	pub, err := os.ReadFile(path + ".pub")
	if err != nil {
		return "", err
	}
	fields := strings.Fields(string(pub))
	if len(fields) < 2 {
		return "", fmt.Errorf("ssh-keygen wrote a malformed %s.pub: %q", path, pub)
	}
	return fields[0] + " " + fields[1], nil
}

// knownHostsLine is the known_hosts entry of hostKey for addr (host:port).
func knownHostsLine(addr, hostKey string) (string, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", err
	}
	pattern := host
	if port != "22" {
		pattern = "[" + host + "]:" + port
	}
	return pattern + " " + hostKey + "\n", nil
}

func writeKnownHosts(path, addr, hostKey string) error {
	line, err := knownHostsLine(addr, hostKey)
	if err != nil {
		return err
	}
	return os.WriteFile(path, []byte(line), 0o644)
}

// newBootID returns a random version 4 UUID, formatted as the kernel's
// boot_id.
func newBootID() string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err)
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// freePort asks the kernel for a loopback port that is free right now.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	_, port, err := net.SplitHostPort(l.Addr().String())
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(port)
}
