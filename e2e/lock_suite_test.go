package e2e

import (
	"testing"

	"github.com/hoistdev/hoist/e2e/sshd"
	"github.com/hoistdev/hoist/lock/locktest"
	"github.com/hoistdev/hoist/transport"
)

// TestLockSuite runs the lock conformance suite over real OpenSSH with
// every login shell hoist promises to work under, on a host whose /bin/sh
// and userland are busybox, and on one whose /proc is not its PID
// namespace's. Without root only the caller's own login runs;
// the other hosts need extra users and namespaces and say so.
func TestLockSuite(t *testing.T) {
	hosts := []struct {
		name string
		opts sshd.Options
	}{
		{"default", sshd.Options{}},
		{"bash", sshd.Options{Shell: "bash"}},
		{"dash", sshd.Options{Shell: "dash"}},
		{"zsh", sshd.Options{Shell: "zsh"}},
		{"fish", sshd.Options{Shell: "fish"}},
		{"tcsh", sshd.Options{Shell: "tcsh"}},
		{"mksh", sshd.Options{Shell: "mksh"}},
		{"busybox", sshd.Options{Shell: "sh", Busybox: true}},
		// /proc not the namespace's: nothing is judged by what it says.
		{"foreign-proc", sshd.Options{ForeignProc: true}},
	}
	for _, hc := range hosts {
		t.Run(hc.name, func(t *testing.T) {
			t.Parallel()
			if hc.name == "bash" && isRoot() {
				t.Skip("as root the default host already logs in with bash")
			}
			h := sshd.Start(t, hc.opts)
			locktest.Run(t, locktest.Target{
				Dial: func(t testing.TB) transport.Transport { return dial(t, sshConfig(h)) },
				Dir:  h.Dir,
			})
		})
	}
}
