package e2e

import (
	"context"
	"crypto/rand"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/hoistdev/hoist/e2e/registry"
	"github.com/hoistdev/hoist/store"
)

// BenchmarkPublishDelta publishes a 256 MiB tree of 512 files of 512 KiB
// and a small file to a real registry (TLS, basic auth, loopback), then in
// each iteration publishes it again three ways: unchanged, after 4 bytes
// of the small file changed, after 4 bytes of one large file changed. It
// reports what reached the registry in uploads, from its access log and
// storage (MiB), and the times; the first publish's (first-*) are the
// setup's.
func BenchmarkPublishDelta(b *testing.B) {
	r := registry.Start(b, registry.Options{})
	b.Setenv("XDG_CACHE_HOME", b.TempDir())
	src := b.TempDir()
	for i := range 512 {
		blob := make([]byte, 512<<10)
		rand.Read(blob)
		os.WriteFile(filepath.Join(src, fmt.Sprintf("part%03d", i)), blob, 0o644)
	}
	os.WriteFile(filepath.Join(src, "VERSION"), []byte("v0000\n"), 0o644)
	time.Sleep(200 * time.Millisecond) // older than the digest cache's racy window
	reg, err := store.NewRegistry(store.RegistryOptions{CAFile: r.CAFile, DockerConfig: r.DockerConfig()})
	if err != nil {
		b.Fatal(err)
	}
	to, _ := store.ParseOCIRef("oci://" + r.Addr + "/hoist/app:v")
	publish := func() (time.Duration, int, int64) {
		mark := len(r.Requests())
		start := time.Now()
		a, err := store.Open(src, "app")
		if err != nil {
			b.Fatal(err)
		}
		if _, err := reg.Publish(context.Background(), a, to, store.PublishOptions{Record: "-"}); err != nil {
			b.Fatal(err)
		}
		took := time.Since(start)
		blobs, n := received(b, r, r.Requests()[mark:])
		return took, blobs, n
	}
	firstTook, firstBlobs, firstBytes := publish()

	var same, small, large time.Duration
	var sameBlobs int
	var smallBytes, largeBytes int64
	for i := 0; b.Loop(); i++ {
		took, blobs, _ := publish()
		same += took
		sameBlobs += blobs

		os.WriteFile(filepath.Join(src, "VERSION"), fmt.Appendf(nil, "v%04d\n", i+1), 0o644)
		time.Sleep(200 * time.Millisecond)
		took, _, n := publish()
		small += took
		smallBytes += n

		f, err := os.OpenFile(filepath.Join(src, fmt.Sprintf("part%03d", i%512)), os.O_WRONLY, 0)
		if err != nil {
			b.Fatal(err)
		}
		f.WriteAt(fmt.Appendf(nil, "%04d", i), int64(i*4096%(512<<10-4)))
		f.Close()
		time.Sleep(200 * time.Millisecond)
		took, _, n = publish()
		large += took
		largeBytes += n
	}
	nf := float64(b.N)
	b.ReportMetric(firstTook.Seconds(), "first-s")
	b.ReportMetric(float64(firstBytes)/(1<<20), "first-MiB")
	b.ReportMetric(float64(firstBlobs), "first-blobs")
	b.ReportMetric(float64(sameBlobs)/nf, "same-blobs")
	b.ReportMetric(same.Seconds()/nf, "same-s")
	b.ReportMetric(float64(smallBytes)/nf/(1<<20), "small-MiB")
	b.ReportMetric(small.Seconds()/nf, "small-s")
	b.ReportMetric(float64(largeBytes)/nf/(1<<20), "large-MiB")
	b.ReportMetric(large.Seconds()/nf, "large-s")
}
