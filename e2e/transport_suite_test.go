package e2e

import (
	"testing"

	"github.com/hoistdev/hoist/e2e/sshd"
	"github.com/hoistdev/hoist/transport"
	"github.com/hoistdev/hoist/transport/transporttest"
)

// TestTransportSuite runs the transport conformance suite over real
// OpenSSH: under the default login shell, two others that parse a command
// line unlike sh (fish, tcsh), and a busybox userland. The refused start
// is a host whose sshd allows no sessions (MaxSessions 0).
func TestTransportSuite(t *testing.T) {
	refusing := sshd.Start(t, sshd.Options{})
	refusing.Configure(t, "Match User "+refusing.User, "MaxSessions 0")
	hosts := []struct {
		name string
		opts sshd.Options
	}{
		{"default", sshd.Options{}},
		{"fish", sshd.Options{Shell: "fish"}},
		{"tcsh", sshd.Options{Shell: "tcsh"}},
		{"busybox", sshd.Options{Shell: "sh", Busybox: true}},
	}
	for _, hc := range hosts {
		t.Run(hc.name, func(t *testing.T) {
			t.Parallel()
			h := sshd.Start(t, hc.opts)
			transporttest.Run(t, transporttest.Target{
				Dial:     func(t testing.TB) transport.Transport { return dial(t, sshConfig(h)) },
				Refusing: func(t testing.TB) transport.Transport { return dial(t, sshConfig(refusing)) },
			})
		})
	}
}
