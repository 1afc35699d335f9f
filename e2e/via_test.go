package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/hoistdev/hoist/cmd/hoist/output"
	"github.com/hoistdev/hoist/e2e/registry"
	"github.com/hoistdev/hoist/e2e/sshd"
)

// viaHost is a host that a workstation reaches through a TCP proxy, which
// counts the bytes the workstation sends it (outside hoist), with a CLI
// that holds the publisher's docker configuration.
type viaHost struct {
	h     *sshd.Host
	proxy *sshd.Proxy
	root  string
	c     *cli
}

func newViaHost(t *testing.T, p *publisher, opts sshd.Options) *viaHost {
	t.Helper()
	h := sshd.Start(t, opts)
	proxy := sshd.NewProxy(t, h.Addr)
	root := filepath.Join(h.Dir, "store")
	c := &cli{t: t, home: t.TempDir(), flags: cliFlags(t, h, proxy.Addr, root), env: p.env}
	return &viaHost{h: h, proxy: proxy, root: root, c: c}
}

// push runs hoist --json push args on the host and returns what it says.
func (v *viaHost) push(t *testing.T, args ...string) (output.Push, run) {
	t.Helper()
	r := v.c.run(append([]string{"--json", "push"}, args...)...)
	var out output.Push
	if r.stdout != "" {
		out = decodeOne[output.Push](t, "push --json", r.stdout)
	}
	if out.Pushed == nil {
		out.Pushed = &output.Pushed{}
	}
	return out, r
}

// sentOver is what the workstation sent the hosts over SSH, counted by
// their proxies.
func sentOver(hosts []*viaHost) int64 {
	var n int64
	for _, v := range hosts {
		n += v.proxy.Sent()
	}
	return n
}

// blobBytes is the blob bytes the registry served among reqs, from its
// access log.
func blobBytes(reqs []registry.Request) int64 {
	var n int64
	for _, q := range reqs {
		if q.Method == "GET" && strings.Contains(q.URI, "/blobs/sha256:") {
			n += q.Bytes
		}
	}
	return n
}

// TestPushViaRegistry publishes a 64 MiB tree (128 files of 512 KiB and a
// few small ones) to a real registry (TLS, basic auth, docker's
// config.json) and pushes it with --via to 8 hosts at once: each fetches
// the pack and every file blob with curl, verifies them, and promotes the
// runtime the plain push gives (same id, byte for byte); the workstation
// sent under 1 MiB over SSH to all of them, counted by proxies in front of
// the hosts. After 4 bytes of a small file changed and a re-publish, each
// host fetches only the pack (under 1 MiB by the registry's log) and
// copies the rest from the runtime it has. Pushed as oci://...@digest to
// another host, the workstation never reads the tree.
func TestPushViaRegistry(t *testing.T) {
	t.Parallel()
	r := registry.Start(t, registry.Options{})
	src := deltaTree(t, 128, 512<<10)
	p := newPublisher(t, r.DockerConfig())
	ca := []string{"--registry-ca", r.CAFile}
	to := "oci://" + r.Addr + "/hoist/app"
	id, _ := p.publish(src, to+":v1", ca...)

	hosts := make([]*viaHost, 8)
	for i := range hosts {
		hosts[i] = newViaHost(t, p, sshd.Options{})
	}
	// The id a plain push gives the tree, on the local target.
	if plain := p.run("--root", t.TempDir(), "push", src, "--name", "app"); plain.code != 0 || !strings.HasPrefix(plain.stdout, "local: "+id+" ") {
		t.Fatalf("plain push: %s; want %s", plain, id)
	}
	pushAll := func(args ...string) []output.Push {
		outs := make([]output.Push, len(hosts))
		var wg sync.WaitGroup
		for i, v := range hosts {
			wg.Go(func() {
				out, res := v.push(t, args...)
				if res.code != 0 || !out.OK || !out.Promoted {
					t.Errorf("host %d: push %v: %s", i, args, res)
				}
				outs[i] = out
			})
		}
		wg.Wait()
		return outs
	}
	mark := len(r.Requests())
	outs := pushAll(append([]string{src, "--name", "app", "--via", to + ":v1"}, ca...)...)
	if t.Failed() {
		t.FailNow()
	}
	sent := sentOver(hosts)
	served := blobBytes(r.Requests()[mark:])
	for i, out := range outs {
		if out.ID != id || out.UploadedBytes != 0 || out.Fallback != "" || out.FetchTool != "curl" || out.FetchedBlobs != 130 {
			t.Errorf("host %d: %+v %+v; want %s fetched whole with curl (130 blobs: 128 parts, the tool, the pack), nothing uploaded", i, out, *out.Pushed, id)
		}
		sameTree(t, src, filepath.Join(hosts[i].root, "runtimes", id))
	}
	if sent >= 1<<20 {
		t.Errorf("the workstation sent %d bytes over SSH to %d hosts for a 64 MiB runtime; want under 1 MiB", sent, len(hosts))
	}
	t.Logf("first push --via to %d hosts: %d bytes over SSH in all, %d blob bytes served by the registry", len(hosts), sent, served)

	// 4 bytes of a small file change.
	if err := os.WriteFile(filepath.Join(src, "README"), []byte("a RUNTime\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	id2, _ := p.publish(src, to+":v2", ca...)
	mark, before := len(r.Requests()), sentOver(hosts)
	outs = pushAll(append([]string{src, "--name", "app", "--via", to + ":v2"}, ca...)...)
	served = blobBytes(r.Requests()[mark:])
	sent = sentOver(hosts) - before
	for i, out := range outs {
		if out.ID != id2 || out.UploadedBytes != 0 || out.Fallback != "" || out.FetchedBlobs != 1 || out.ReusedFiles != 130 {
			t.Errorf("host %d after the change: %+v %+v; want %s, the pack fetched, 130 files reused", i, out, *out.Pushed, id2)
		}
		sameTree(t, src, filepath.Join(hosts[i].root, "runtimes", id2))
	}
	// Each host's push reads the pack on the workstation and fetches it on
	// the host: both count.
	if per := served / int64(len(hosts)); per >= 1<<20 {
		t.Errorf("after a 4-byte change the registry served %d blob bytes a host; want under 1 MiB", per)
	}
	if sent >= 1<<20 {
		t.Errorf("after a 4-byte change the workstation sent %d bytes over SSH; want under 1 MiB", sent)
	}
	t.Logf("after a 4-byte change: %d blob bytes served a host (its read and its fetch), %d bytes over SSH in all", served/int64(len(hosts)), sent)

	// push oci://...@digest, as publish printed it, to a new host: the
	// workstation never reads the tree, and activates it.
	_, pinned := p.publish(src, to+":v2", ca...)
	fresh := newViaHost(t, p, sshd.Options{})
	out, res := fresh.push(t, append([]string{pinned.String(), "--activate"}, ca...)...)
	if res.code != 0 || out.ID != id2 || !out.Activated || out.FetchedBlobs != 130 || out.UploadedBytes != 0 || fresh.proxy.Sent() >= 1<<20 {
		t.Fatalf("push %s: %s (%d bytes over SSH); want %s fetched whole and active", pinned, res, fresh.proxy.Sent(), id2)
	}
	sameTree(t, src, filepath.Join(fresh.root, "runtimes", id2))
	if text := fresh.c.run(append([]string{"push", pinned.String()}, ca...)...); text.code != 0 || !strings.Contains(text.stdout, "already present") {
		t.Errorf("push %s again: %s", pinned, text)
	}
}
