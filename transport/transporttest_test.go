package transport_test

import (
	"testing"

	"github.com/hoistdev/hoist/transport"
	"github.com/hoistdev/hoist/transport/transporttest"
)

// TestLocalConformance runs the transport conformance suite on the local
// target; e2e runs it over OpenSSH.
func TestLocalConformance(t *testing.T) {
	transporttest.Run(t, transporttest.Target{
		Dial: func(testing.TB) transport.Transport { return &transport.Local{} },
		// A login shell that is not there: the command cannot start.
		Refusing: func(testing.TB) transport.Transport { return &transport.Local{Shell: "/nonexistent/sh"} },
	})
}
