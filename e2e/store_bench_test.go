package e2e

import (
	"context"
	"crypto/rand"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hoistdev/hoist/e2e/sshd"
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
	cfg := sshConfigVia(b, h, p.Addr)
	tr := dial(b, cfg)
	s := storeOn(tr, filepath.Join(h.Dir, "bench"))
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
// The plain sub-benchmarks push a tree this client has not seen (an empty
// digest cache every iteration, so store.Open hashes it); those named known
// push a tree it pushed before (the cache has its digests), as a second
// host of a fleet gets it; s1 forces one stream, with the tree known;
// loopback/twopass pushes a tree not seen with the promotion after the
// upload (PushOptions.TwoPass), the host's pass the one-pass promotion
// overlaps with the upload.
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
		for _, v := range []struct {
			suffix  string
			streams int
			known   bool
			twoPass bool
		}{{"", 0, false, false}, {"/known", 0, true, false}, {"/s1", 1, true, false}, {"/twopass", 0, false, true}} {
			if v.twoPass && link.oneWay > 0 {
				continue
			}
			name := link.name + v.suffix
			streams := v.streams
			b.Run(name, func(b *testing.B) {
				b.Setenv("XDG_CACHE_HOME", b.TempDir())
				if v.known {
					// Hashed twice: the first reading is too close to
					// the file's writing for the cache to trust it.
					for range 2 {
						if _, err := store.Open(src, "big"); err != nil {
							b.Fatal(err)
						}
						time.Sleep(150 * time.Millisecond)
					}
				}
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
					s := storeOn(tr, root)
					if !v.known {
						os.Setenv("XDG_CACHE_HOME", b.TempDir())
					}
					start = time.Now()
					a, err := store.Open(src, "big")
					if err != nil {
						b.Fatal(err)
					}
					r, err := s.Push(context.Background(), a, store.PushOptions{Wait: time.Minute, Streams: streams, TwoPass: v.twoPass})
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
// as fast as one host). Each host runs in a cgroup of its own (as root):
// one-host-cpu-ms is what the one host's push cost its host, fleet-host-cpu-ms
// what each of the 16 spent on average, cpu-x-one their ratio (above 1:
// hosts sharing the cores cost each other more than the work itself).
func BenchmarkFleetPush(b *testing.B) {
	const n = 16
	cgroup := isRoot()
	var hosts []*sshd.Host
	var cfgs []transport.SSHConfig
	for range n {
		h := sshd.Start(b, sshd.Options{Cgroup: cgroup})
		p := newLatencyProxy(b, h.Addr, 20*time.Millisecond)
		cfg := sshConfigVia(b, h, p.Addr)
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
		ctx := ctxT(b)
		tr, err := transport.DialSSH(ctx, cfgs[i])
		if err != nil {
			return err
		}
		defer tr.Close()
		root := filepath.Join(hosts[i].Dir, fmt.Sprintf("fleet-%d", iter))
		s := storeOn(tr, root)
		r, err := s.Push(ctx, a, store.PushOptions{Wait: time.Minute, Activate: true})
		if err == nil && !r.Activated {
			err = fmt.Errorf("not activated: %+v", r)
		}
		return err
	}
	var idle []int // each host's processes when no command runs: its listening sshd
	for _, h := range hosts {
		if cgroup {
			idle = append(idle, h.Running(b))
		}
	}
	var one, all, oneCPU, fleetCPU time.Duration
	cpu := func() []time.Duration { // each host's CPU so far, once its processes have ended
		if !cgroup {
			return nil
		}
		spent := make([]time.Duration, n)
		for i, h := range hosts {
			h.WaitRunning(b, idle[i])
			spent[i] = h.CPU(b)
		}
		return spent
	}
	for iter := 0; b.Loop(); iter++ {
		before := cpu()
		start := time.Now()
		if err := push(0, 2*iter); err != nil {
			b.Fatal(err)
		}
		one += time.Since(start)
		mid := cpu()
		start = time.Now()
		var wg sync.WaitGroup
		errs := make([]error, n)
		for i := range n {
			wg.Go(func() { errs[i] = push(i, 2*iter+1) })
		}
		wg.Wait()
		all += time.Since(start)
		after := cpu()
		for _, err := range errs {
			if err != nil {
				b.Fatal(err)
			}
		}
		if cgroup {
			oneCPU += mid[0] - before[0]
			for i := range n {
				fleetCPU += after[i] - mid[i]
			}
		}
	}
	b.ReportMetric(one.Seconds()/float64(b.N), "one-s")
	b.ReportMetric(all.Seconds()/float64(b.N), "fleet16-s")
	b.ReportMetric(float64(all)/float64(one), "x-one")
	if cgroup {
		perHost := fleetCPU / n
		b.ReportMetric(float64(oneCPU)/float64(b.N)/float64(time.Millisecond), "one-host-cpu-ms")
		b.ReportMetric(float64(perHost)/float64(b.N)/float64(time.Millisecond), "fleet-host-cpu-ms")
		b.ReportMetric(float64(perHost)/float64(oneCPU), "cpu-x-one")
		// The 16 hosts share this machine's cores: what they spent, per
		// fleet push, over the cores there are, is time the fleet could
		// not have had on hosts of their own.
		b.ReportMetric(fleetCPU.Seconds()/float64(b.N)/float64(runtime.NumCPU()), "hosts-cpu-s/core")
	}
}

// BenchmarkPushDelta: a 256 MiB tree of 512 files of 512 KiB is on the
// host; each iteration changes 4 bytes of one file and pushes the tree
// again (loopback). It reports the bytes uploaded and the time, next to a
// full push of the same tree to a fresh store in the same iteration
// (x-full: the full push's time over the delta push's), and how long
// finding the tree's id took with the digest cache and without
// (x-nocache).
func BenchmarkPushDelta(b *testing.B) {
	h := sshd.Start(b, sshd.Options{})
	b.Setenv("XDG_CACHE_HOME", b.TempDir())
	tr := dial(b, sshConfig(h))
	src := b.TempDir()
	for i := range 512 {
		blob := make([]byte, 512<<10)
		rand.Read(blob)
		os.WriteFile(filepath.Join(src, fmt.Sprintf("part%03d", i)), blob, 0o644)
	}
	time.Sleep(200 * time.Millisecond) // older than the digest cache's racy window
	ctx := context.Background()
	s := storeOn(tr, filepath.Join(h.Dir, "delta"))
	a, err := store.Open(src, "app")
	if err != nil {
		b.Fatal(err)
	}
	if _, err := s.Push(ctx, a, store.PushOptions{Wait: time.Minute}); err != nil {
		b.Fatal(err)
	}
	var delta, full, cached, uncached time.Duration
	var sent int64
	for i := 0; b.Loop(); i++ {
		f, err := os.OpenFile(filepath.Join(src, fmt.Sprintf("part%03d", i%512)), os.O_WRONLY, 0)
		if err != nil {
			b.Fatal(err)
		}
		f.WriteAt([]byte(fmt.Sprintf("%04d", i)), int64(i*4096%(512<<10-4)))
		f.Close()
		time.Sleep(200 * time.Millisecond)
		start := time.Now()
		a, err := store.Open(src, "app")
		if err != nil {
			b.Fatal(err)
		}
		cached += time.Since(start)
		r, err := s.Push(ctx, a, store.PushOptions{Wait: time.Minute})
		if err != nil || !r.Promoted {
			b.Fatalf("%v %+v", err, r)
		}
		delta += time.Since(start)
		sent += r.Uploaded

		b.Setenv("XDG_CACHE_HOME", b.TempDir()) // no cache: hashes every file
		start = time.Now()
		fresh, err := store.Open(src, "app")
		if err != nil {
			b.Fatal(err)
		}
		uncached += time.Since(start)
		root := filepath.Join(h.Dir, fmt.Sprintf("full-%d", i))
		fs := storeOn(tr, root)
		if r, err := fs.Push(ctx, fresh, store.PushOptions{Wait: time.Minute}); err != nil || !r.Promoted {
			b.Fatalf("%v %+v", err, r)
		}
		full += time.Since(start)
		os.RemoveAll(root)
	}
	b.ReportMetric(float64(sent)/float64(b.N)/(1<<20), "uploaded-MiB")
	b.ReportMetric(delta.Seconds()/float64(b.N), "delta-s")
	b.ReportMetric(full.Seconds()/float64(b.N), "full-s")
	b.ReportMetric(float64(full)/float64(delta), "x-full")
	b.ReportMetric(cached.Seconds()/float64(b.N), "id-cached-s")
	b.ReportMetric(float64(uncached)/float64(cached), "x-nocache")
}
