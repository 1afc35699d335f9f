package e2e

import (
	"testing"
	"time"

	"github.com/hoistdev/hoist/e2e/sshd"
	"github.com/hoistdev/hoist/transport"
)

// TestFirstRequestNotHeldByDelayedAck: sshd answers the first request on a
// new connection right after small packets of its own (its host keys), and
// with Nagle's algorithm on it holds the answer until the client
// acknowledges them, which Linux delays by 40 ms unless asked not to. The
// fastest first round trip of five new connections stays well under that.
// Not parallel: the other tests' load would blur the figure.
func TestFirstRequestNotHeldByDelayedAck(t *testing.T) {
	h := sshd.Start(t, sshd.Options{})
	best := time.Hour
	for range 5 {
		tr, err := transport.DialSSH(ctxT(t), sshConfig(h))
		if err != nil {
			t.Fatal(err)
		}
		d, err := tr.Ping()
		tr.Close()
		if err != nil {
			t.Fatal(err)
		}
		best = min(best, d)
	}
	if best >= 25*time.Millisecond {
		t.Errorf("the first round trip on a new connection took at least %v (fastest of 5): held by a delayed acknowledgement", best.Round(time.Millisecond))
	}
}
