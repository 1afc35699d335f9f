package e2e

import (
	"context"
	"crypto/rand"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hoistdev/hoist/e2e/sshd"
	"github.com/hoistdev/hoist/lock"
	"github.com/hoistdev/hoist/remote"
	"github.com/hoistdev/hoist/shellcmd"
	"github.com/hoistdev/hoist/store"
	"github.com/hoistdev/hoist/transport"
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

// BenchmarkFleetPush pushes a 2 MB tree with --activate to one host and,
// in the same iteration, to 16 hosts at once, each with a connection of its
// own through a proxy adding 20 ms each way (40 ms round trips), as `hoist
// -H h1,...,h16 push --activate` does (its --parallel default covers 16).
// Each push connects afresh and goes to a fresh store; the artifact is read
// and hashed once. x-one is the 16 hosts' time over the one host's (1.0:
// as fast as one host).
func BenchmarkFleetPush(b *testing.B) {
	const n = 16
	var hosts []*sshd.Host
	var cfgs []transport.SSHConfig
	for range n {
		h := sshd.Start(b, sshd.Options{})
		p := newLatencyProxy(b, h.Addr, 20*time.Millisecond)
		cfg := sshConfig(h)
		cfg.Target = h.User + "@" + p.Addr
		cfg.KnownHostsFile = h.KnownHostsFor(b, p.Addr)
		hosts, cfgs = append(hosts, h), append(cfgs, cfg)
	}
	src := b.TempDir()
	for i := range 8 {
		blob := make([]byte, 256<<10)
		rand.Read(blob)
		os.WriteFile(filepath.Join(src, fmt.Sprintf("part%d", i)), blob, 0o644)
	}
	a, err := store.Open(src, "app")
	if err != nil {
		b.Fatal(err)
	}
	push := func(i, iter int) error {
		ctx := context.Background()
		tr, err := transport.DialSSH(ctx, cfgs[i])
		if err != nil {
			return err
		}
		defer tr.Close()
		root := filepath.Join(hosts[i].Dir, fmt.Sprintf("fleet-%d", iter))
		s := store.New(lock.New(remote.New(tr), shellcmd.Root{Path: root}))
		r, err := s.Push(ctx, a, store.PushOptions{Wait: time.Minute, Activate: true})
		if err == nil && !r.Activated {
			err = fmt.Errorf("not activated: %+v", r)
		}
		return err
	}
	var one, all time.Duration
	for iter := 0; b.Loop(); iter++ {
		start := time.Now()
		if err := push(0, 2*iter); err != nil {
			b.Fatal(err)
		}
		one += time.Since(start)
		start = time.Now()
		var wg sync.WaitGroup
		errs := make([]error, n)
		for i := range n {
			wg.Go(func() { errs[i] = push(i, 2*iter+1) })
		}
		wg.Wait()
		all += time.Since(start)
		for _, err := range errs {
			if err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(one.Seconds()/float64(b.N), "one-s")
	b.ReportMetric(all.Seconds()/float64(b.N), "fleet16-s")
	b.ReportMetric(float64(all)/float64(one), "x-one")
}
