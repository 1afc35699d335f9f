package lock

import (
	"fmt"
	"testing"
	"time"

	"github.com/hoistdev/hoist/shellcmd"
)

// TestLeaseBoundsAreTheRecordsOwn: a record carries exactly the leases from
// MinLease to MaxLease (a record outside them names none), and the defaults
// users see are those the wire falls back on.
func TestLeaseBoundsAreTheRecordsOwn(t *testing.T) {
	for _, tc := range []struct {
		lease time.Duration
		kept  bool
	}{
		{MinLease - time.Second, false}, {MinLease, true}, {DefaultLease, true}, {MaxLease, true}, {MaxLease + time.Second, false},
	} {
		line := fmt.Sprintf("hoist-lock/2 token=t since=1 mach=m boot=b pidns=n init=i lease=%d", tc.lease/time.Second)
		r, ok := shellcmd.ParseRecord(line)
		if !ok || (r.Lease == tc.lease) != tc.kept || !tc.kept && r.Lease != 0 {
			t.Errorf("a record with a lease of %s reads as %s (ok %v); want it kept: %v", tc.lease, r.Lease, ok, tc.kept)
		}
	}
	if MaxField != shellcmd.MaxField {
		t.Errorf("MaxField %d, the wire's %d", MaxField, shellcmd.MaxField)
	}
	if DefaultLease != shellcmd.DefaultLease || DefaultGrace != shellcmd.DefaultGrace {
		t.Errorf("DefaultLease %s, DefaultGrace %s; the wire's %s and %s", DefaultLease, DefaultGrace, shellcmd.DefaultLease, shellcmd.DefaultGrace)
	}
}
