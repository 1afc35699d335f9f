package store

import (
	"testing"
	"time"
)

// Streams covers a 1 Gbit/s link's bandwidth-delay product with windows
// of 1.5 MiB: one stream for small artifacts and short links, four at 40
// ms, never more than transport allows.
func TestStreams(t *testing.T) {
	for _, c := range []struct {
		size int64
		rtt  time.Duration
		want int
	}{
		{256 << 20, 0, 1},
		{256 << 20, 100 * time.Microsecond, 1},
		{256 << 20, 5 * time.Millisecond, 1},
		{256 << 20, 40 * time.Millisecond, 4},
		{256 << 20, time.Second, 8},
		{31 << 20, 40 * time.Millisecond, 1},
	} {
		if got := Streams(c.size, c.rtt); got != c.want {
			t.Errorf("Streams(%d MiB, %v) = %d, want %d", c.size>>20, c.rtt, got, c.want)
		}
	}
}
