package sshd

import (
	"os"
	"strings"
	"testing"
)

// Configure adds lines to the host's sshd_config (keywords the harness
// does not set itself, such as MaxAuthTries or TrustedUserCAKeys; for
// most keywords sshd takes the first value it reads) and restarts sshd on
// the same port so that they apply. Files the lines name must be readable
// by sshd.
func (h *Host) Configure(t testing.TB, lines ...string) {
	t.Helper()
	f, err := os.OpenFile(h.config, os.O_WRONLY|os.O_APPEND, 0)
	if err == nil {
		_, err = f.WriteString(strings.Join(lines, "\n") + "\n")
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		t.Fatalf("adding to sshd config %s: %v", h.config, err)
	}
	h.restart(t)
}
