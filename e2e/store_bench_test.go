package e2e

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
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

// BenchmarkPushVsScp pushes a 256 MiB artifact (random data, one file,
// fresh store) and, in the same iteration, copies the same bytes with
// OpenSSH scp to the same sshd: on loopback, and through a proxy adding 20
// ms each way (a 40 ms round trip). "push" is the whole push the user
// waits for: reading and hashing the source (store.Open), the upload, the
// verification and unpacking on the host, the promotion. x-scp is scp's
// time over hoist's (above 1: hoist is faster), from the same iteration.
// The sub-benchmarks named s1 and s4 force one and four streams.
func BenchmarkPushVsScp(b *testing.B) {
	const size = 256 << 20
	h := sshd.Start(b, sshd.Options{})
	src := randomTree(b, size)
	for _, link := range []struct {
		name   string
		oneWay time.Duration
	}{{"loopback", 0}, {"rtt40ms", 20 * time.Millisecond}} {
		addr, port, known := h.Addr, h.Port, h.KnownHosts
		if link.oneWay > 0 {
			p := newLatencyProxy(b, h.Addr, link.oneWay)
			addr, known = p.Addr, h.KnownHostsFor(b, p.Addr)
			_, ps, _ := net.SplitHostPort(p.Addr)
			port, _ = strconv.Atoi(ps)
		}
		for _, streams := range []int{0, 1} {
			name := link.name
			if streams > 0 {
				name += "/s" + strconv.Itoa(streams)
			}
			b.Run(name, func(b *testing.B) {
				cfg := sshConfig(h)
				cfg.Target = h.User + "@" + addr
				cfg.KnownHostsFile = known
				tr := dial(b, cfg)
				var hoist, scp time.Duration
				for i := 0; b.Loop(); i++ {
					dest := filepath.Join(h.Dir, "scp-blob")
					cmd := exec.Command("scp", "-q", "-i", h.KeyFile, "-o", "BatchMode=yes", "-o", "UserKnownHostsFile="+known,
						"-P", strconv.Itoa(port), filepath.Join(src, "blob"), h.User+"@127.0.0.1:"+dest)
					start := time.Now()
					if out, err := cmd.CombinedOutput(); err != nil {
						b.Fatalf("scp: %v %s", err, out)
					}
					scp += time.Since(start)
					os.Remove(dest)

					root := filepath.Join(h.Dir, fmt.Sprintf("push-%s-%d", strings.ReplaceAll(name, "/", "-"), i))
					s := store.New(lock.New(remote.New(tr), shellcmd.Root{Path: root}))
					start = time.Now()
					a, err := store.Open(src, "big")
					if err != nil {
						b.Fatal(err)
					}
					r, err := s.Push(context.Background(), a, store.PushOptions{Wait: time.Minute, Streams: streams})
					if err != nil || !r.Promoted {
						b.Fatalf("%v %+v", err, r)
					}
					hoist += time.Since(start)
					os.RemoveAll(root)
				}
				b.ReportMetric(hoist.Seconds()/float64(b.N), "push-s")
				b.ReportMetric(scp.Seconds()/float64(b.N), "scp-s")
				b.ReportMetric(float64(scp)/float64(hoist), "x-scp")
			})
		}
	}
}
