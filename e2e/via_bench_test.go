package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/hoistdev/hoist/e2e/registry"
	"github.com/hoistdev/hoist/e2e/sshd"
	"github.com/hoistdev/hoist/store"
	"github.com/hoistdev/hoist/transport"
)

// BenchmarkPushVia pushes a 64 MiB tree (128 files of 512 KiB and a few
// small ones), published once to a real registry (TLS, basic auth,
// loopback), in each iteration to one host and then to 16 at once, first
// through the registry (PushOptions.Via: the hosts fetch with curl), then
// over SFTP as a plain push, each to fresh stores, the same hosts and the
// same iteration. The workstation's bytes out are counted by a TCP proxy in
// front of each host (SSH, not hoist's count); the registry read is the
// workstation's once, as a command to many hosts makes it. Reported: each
// way's times (one host, 16), their ratio to one host (x-one), the 16
// hosts' bytes out (MiB), and registry over SFTP for both (the fleet's time
// and its bytes out).
func BenchmarkPushVia(b *testing.B) {
	const n = 16
	r := registry.Start(b, registry.Options{})
	b.Setenv("XDG_CACHE_HOME", b.TempDir())
	src := deltaTree(b, 128, 512<<10)
	a, err := store.Open(src, "app")
	if err != nil {
		b.Fatal(err)
	}
	reg, err := store.NewRegistry(store.RegistryOptions{CAFile: r.CAFile, DockerConfig: r.DockerConfig()})
	if err != nil {
		b.Fatal(err)
	}
	to, _ := store.ParseOCIRef("oci://" + r.Addr + "/hoist/app:v1")
	pub, err := reg.Publish(ctxT(b), a, to, store.PublishOptions{Record: store.NoRecord})
	if err != nil {
		b.Fatal(err)
	}
	via, err := reg.Via(ctxT(b), pub.Ref, store.ReadOptions{})
	if err != nil {
		b.Fatal(err)
	}
	hosts := make([]*sshd.Host, n)
	proxies := make([]*sshd.Proxy, n)
	cfgs := make([]transport.SSHConfig, n)
	for i := range n {
		hosts[i] = sshd.Start(b, sshd.Options{})
		proxies[i] = sshd.NewProxy(b, hosts[i].Addr)
		cfgs[i] = sshConfigVia(b, hosts[i], proxies[i].Addr)
	}
	push := func(i int, root string, v *store.Via) error {
		ctx := ctxT(b)
		tr, err := transport.DialSSH(ctx, cfgs[i])
		if err != nil {
			return err
		}
		defer tr.Close()
		res, err := storeOn(tr, root).Push(ctx, a, store.PushOptions{Via: v, Wait: time.Minute})
		if err == nil && (!res.Promoted || (v != nil && (res.Fallback != "" || res.Uploaded != 0))) {
			err = fmt.Errorf("host %d: %+v", i, res)
		}
		return err
	}
	// run pushes to hosts [0, k) at once and returns the time and the
	// bytes the workstation sent them.
	run := func(k int, name string, v *store.Via) (time.Duration, int64) {
		roots := make([]string, k)
		var before int64
		for i := range k {
			roots[i] = filepath.Join(hosts[i].Dir, name)
			before += proxies[i].Sent()
		}
		start := time.Now()
		var wg sync.WaitGroup
		errs := make([]error, k)
		for i := range k {
			wg.Go(func() { errs[i] = push(i, roots[i], v) })
		}
		wg.Wait()
		d := time.Since(start)
		var after int64
		for i := range k {
			if errs[i] != nil {
				b.Fatal(errs[i])
			}
			after += proxies[i].Sent()
			os.RemoveAll(roots[i])
		}
		return d, after - before
	}
	var viaOne, viaAll, sftpOne, sftpAll time.Duration
	var viaOut, sftpOut, viaOneOut, sftpOneOut int64
	for iter := 0; b.Loop(); iter++ {
		d, out := run(1, fmt.Sprintf("via1-%d", iter), via)
		viaOne, viaOneOut = viaOne+d, viaOneOut+out
		d, out = run(n, fmt.Sprintf("via16-%d", iter), via)
		viaAll, viaOut = viaAll+d, viaOut+out
		d, out = run(1, fmt.Sprintf("sftp1-%d", iter), nil)
		sftpOne, sftpOneOut = sftpOne+d, sftpOneOut+out
		d, out = run(n, fmt.Sprintf("sftp16-%d", iter), nil)
		sftpAll, sftpOut = sftpAll+d, sftpOut+out
	}
	per := func(d time.Duration) float64 { return d.Seconds() / float64(b.N) }
	mib := func(n int64) float64 { return float64(n) / float64(b.N) / (1 << 20) }
	b.ReportMetric(per(viaOne), "via-one-s")
	b.ReportMetric(per(viaAll), "via-fleet16-s")
	b.ReportMetric(float64(viaAll)/float64(viaOne), "via-x-one")
	b.ReportMetric(per(sftpOne), "sftp-one-s")
	b.ReportMetric(per(sftpAll), "sftp-fleet16-s")
	b.ReportMetric(float64(sftpAll)/float64(sftpOne), "sftp-x-one")
	b.ReportMetric(mib(viaOneOut), "via-one-out-MiB")
	b.ReportMetric(mib(viaOut), "via-fleet16-out-MiB")
	b.ReportMetric(mib(sftpOneOut), "sftp-one-out-MiB")
	b.ReportMetric(mib(sftpOut), "sftp-fleet16-out-MiB")
	b.ReportMetric(float64(viaAll)/float64(sftpAll), "fleet-time-via/sftp")
	b.ReportMetric(float64(viaOut)/float64(sftpOut), "fleet-out-via/sftp")
}
