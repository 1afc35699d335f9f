package lock_test

import (
	"testing"

	"github.com/hoistdev/hoist/lock/locktest"
	"github.com/hoistdev/hoist/transport"
)

// TestLocalTarget runs the conformance suite on the local target.
func TestLocalTarget(t *testing.T) {
	locktest.Run(t, locktest.Target{
		Dial: func(testing.TB) transport.Transport { return &transport.Local{} },
		Dir:  t.TempDir(),
	})
}
