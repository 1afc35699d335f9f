package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/hoistdev/hoist/e2e/sshd"
	"github.com/hoistdev/hoist/lock"
	"github.com/hoistdev/hoist/remote"
	"github.com/hoistdev/hoist/shellcmd"
	"github.com/hoistdev/hoist/store"
)

// BenchmarkPushRoundTrips counts round trips by wall time through a proxy
// that adds 25 ms each way (a 50 ms round trip), over an open connection:
// an idempotent re-push, and a fresh push of a small tree. Reported as
// rtts/op (wall time over the round-trip time, so host work counts too)
// and execs/op (host commands; the upload adds SFTP round trips).
func BenchmarkPushRoundTrips(b *testing.B) {
	const oneWay = 25 * time.Millisecond
	h := sshd.Start(b, sshd.Options{})
	p := newLatencyProxy(b, h.Addr, oneWay)
	cfg := sshConfig(h)
	cfg.Target = h.User + "@" + p.Addr
	cfg.KnownHostsFile = h.KnownHostsFor(b, p.Addr)
	tr := dial(b, cfg)
	s := store.New(lock.New(remote.New(tr), shellcmd.Root{Path: filepath.Join(h.Dir, "bench")}))
	ctx := context.Background()
	push := func(a *store.Artifact) *store.PushResult {
		r, err := s.Push(ctx, a, store.PushOptions{Wait: time.Minute})
		if err != nil {
			b.Fatal(err)
		}
		return r
	}
	b.Run("repush", func(b *testing.B) {
		a, _ := store.Open(sourceTree(b, "same"), "app")
		push(a)
		var execs int
		start := time.Now()
		for b.Loop() {
			execs += push(a).Execs
		}
		b.ReportMetric(float64(time.Since(start))/float64(b.N)/float64(2*oneWay), "rtts/op")
		b.ReportMetric(float64(execs)/float64(b.N), "execs/op")
	})
	b.Run("fresh-small", func(b *testing.B) {
		var execs int
		var spent time.Duration
		for i := 0; b.Loop(); i++ {
			a, _ := store.Open(sourceTree(b, "v"+strconv.Itoa(i)+time.Now().String()), "app")
			start := time.Now()
			execs += push(a).Execs
			spent += time.Since(start)
		}
		b.ReportMetric(float64(spent)/float64(b.N)/float64(2*oneWay), "rtts/op")
		b.ReportMetric(float64(execs)/float64(b.N), "execs/op")
	})
}

// BenchmarkUpload256MiB pushes a 256 MiB artifact and, in the same run, copies
// the same bytes with OpenSSH scp to the same sshd; both report MiB/s.
func BenchmarkUpload256MiB(b *testing.B) {
	const size = 256 << 20
	h := sshd.Start(b, sshd.Options{})
	src := randomTree(b, size)
	a, err := store.Open(src, "big")
	if err != nil {
		b.Fatal(err)
	}
	b.Run("hoist", func(b *testing.B) {
		b.SetBytes(size)
		for i := 0; b.Loop(); i++ {
			root := filepath.Join(h.Dir, fmt.Sprintf("up-%d", i))
			s := store.New(newLock(b, h, root))
			var first, last time.Time
			progress := func(sent, total int64) {
				if first.IsZero() {
					first = time.Now()
				}
				last = time.Now()
			}
			start := time.Now()
			r, err := s.Push(context.Background(), a, store.PushOptions{Wait: time.Minute, Progress: progress})
			if err != nil || !r.Promoted {
				b.Fatalf("%v %+v", err, r)
			}
			// upload: the bytes on the wire; push: with verify, unpack and promote.
			b.ReportMetric(float64(size)/(1<<20)/last.Sub(first).Seconds(), "upload-MiB/s")
			b.ReportMetric(float64(size)/(1<<20)/time.Since(start).Seconds(), "push-MiB/s")
			os.RemoveAll(root)
		}
	})
	b.Run("scp", func(b *testing.B) {
		b.SetBytes(size)
		for b.Loop() {
			dest := filepath.Join(h.Dir, "scp-blob")
			cmd := exec.Command("scp", "-q", "-i", h.KeyFile, "-o", "BatchMode=yes", "-o", "UserKnownHostsFile="+h.KnownHosts,
				"-P", strconv.Itoa(h.Port), filepath.Join(src, "blob"), h.User+"@127.0.0.1:"+dest)
			start := time.Now()
			if out, err := cmd.CombinedOutput(); err != nil {
				b.Fatalf("scp: %v %s", err, out)
			}
			b.ReportMetric(float64(size)/(1<<20)/time.Since(start).Seconds(), "MiB/s")
			os.Remove(dest)
		}
	})
}
