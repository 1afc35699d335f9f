package sshd

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// SSH runs script on the host with the real ssh client, logged in as User
// with KeyFile and strict checking against KnownHosts, and returns its
// standard output and exit status (255 when ssh itself failed). The login
// shell interprets script. Standard error is logged when not empty.
func (h *Host) SSH(t testing.TB, script string) (stdout string, status int) {
	t.Helper()
	return h.sshVia(t, h.Addr, h.KnownHosts, script)
}

// KnownHostsFor writes a known_hosts file that lists the host's key for
// addr (for example a Proxy's Addr) and returns its path.
func (h *Host) KnownHostsFor(t testing.TB, addr string) string {
	t.Helper()
	path := filepath.Join(h.root, "known_hosts-"+strings.NewReplacer(":", "_", "[", "", "]", "").Replace(addr))
	if err := writeKnownHosts(path, addr, h.HostKey); err != nil {
		t.Fatalf("writing known_hosts for %s: %v", addr, err)
	}
	return path
}

func (h *Host) sshVia(t testing.TB, addr, knownHosts, script string) (string, int) {
	t.Helper()
	// Not t.Context(): that is canceled before cleanups, which may use SSH.
	cmd, err := h.sshCommand(context.Background(), addr, knownHosts, script)
	if err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	status := 0
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		status = exit.ExitCode()
	case err != nil:
		t.Fatalf("running ssh to %s: %v", addr, err)
	}
	if stderr.Len() > 0 {
		t.Logf("ssh %s@%s exited %d; stderr:\n%s", h.User, addr, status, strings.TrimRight(stderr.String(), "\n"))
	}
	if status == 255 {
		t.Logf("sshd log: %s", h.logPath)
	}
	return stdout.String(), status
}

// sshCommand is the ssh client command that runs script on the host
// through addr (the host's own address or a proxy's).
func (h *Host) sshCommand(ctx context.Context, addr, knownHosts, script string) (*exec.Cmd, error) {
	ssh, err := exec.LookPath("ssh")
	if err != nil {
		return nil, errors.New("ssh not found: run `make test`, which installs openssh-client")
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("ssh address %q: %v", addr, err)
	}
	args := []string{
		"-F", "/dev/null", "-T",
		"-o", "BatchMode=yes",
		"-o", "IdentitiesOnly=yes",
		"-o", "IdentityAgent=none",
		"-i", h.KeyFile,
		"-o", "UserKnownHostsFile=" + knownHosts,
		"-o", "GlobalKnownHostsFile=/dev/null",
		"-o", "StrictHostKeyChecking=yes",
		"-o", "UpdateHostKeys=no",
		"-o", "ConnectTimeout=10",
		// The post-quantum default costs the client ~150 ms a connection
		// here and is not what hoist negotiates anyway.
		"-o", "KexAlgorithms=curve25519-sha256",
		"-o", "LogLevel=ERROR",
		"-p", port,
		"-l", h.User,
		host, "--", script,
	}
	return exec.CommandContext(ctx, ssh, args...), nil
}
