package e2e

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/hoistdev/hoist/cmd/hoist/output"

	"github.com/hoistdev/hoist/e2e/registry"
	"github.com/hoistdev/hoist/store"
)

// publisher runs the hoist binary on this machine as a workstation that
// publishes: a home, a cache (where publishes are recorded) and a docker
// configuration (DOCKER_CONFIG) of its own.
type publisher struct {
	*cli
	docker string
}

func newPublisher(t *testing.T, docker string) *publisher {
	if docker == "" {
		docker = t.TempDir()
	}
	c := &cli{t: t, home: t.TempDir()}
	c.env = []string{"XDG_CACHE_HOME=" + filepath.Join(c.home, "cache"), "DOCKER_CONFIG=" + docker}
	return &publisher{cli: c, docker: docker}
}

// published is what publish printed: the id, and the manifest by digest.
var publishedLine = regexp.MustCompile(`^([A-Za-z0-9._+-]+-[0-9a-f]{12}) (oci://\S+@sha256:[0-9a-f]{64})\n$`)

// publish runs hoist publish src --name app --to ref and returns the id
// and the manifest's reference by digest.
func (p *publisher) publish(src, to string, flags ...string) (string, store.OCIRef) {
	p.t.Helper()
	r := p.run(append([]string{"publish", src, "--name", "app", "--to", to}, flags...)...)
	m := publishedLine.FindStringSubmatch(r.stdout)
	if r.code != 0 || m == nil {
		p.t.Fatalf("publish to %s: %s", to, r)
	}
	ref, err := store.ParseOCIRef(m[2])
	if err != nil {
		p.t.Fatal(err)
	}
	return m[1], ref
}

// received is what reached the registry in uploads among reqs, from its
// access log and its storage: the blobs whose upload it completed (a PUT
// with the digest, 201; their size from its storage) and the manifests it
// stored (the tag's link, and that blob's size). hoist's own counters are
// not asked.
func received(t testing.TB, r *registry.Registry, reqs []registry.Request) (blobs int, n int64) {
	t.Helper()
	for _, q := range reqs {
		u, err := url.Parse(q.URI)
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case q.Method == "PATCH":
			t.Fatalf("a chunked upload (%s): the log cannot say its size", q.URI)
		case q.Method == "PUT" && q.Status == 201 && strings.Contains(u.Path, "/blobs/uploads/"):
			blobs++
			n += fileSize(t, r.BlobPath(u.Query().Get("digest")))
		case q.Method == "PUT" && q.Status == 201 && strings.Contains(u.Path, "/manifests/"):
			repo, tag, _ := strings.Cut(strings.TrimPrefix(u.Path, "/v2/"), "/manifests/")
			link, err := os.ReadFile(filepath.Join(r.Storage, "docker/registry/v2/repositories", repo, "_manifests/tags", tag, "current/link"))
			if err != nil {
				t.Fatal(err)
			}
			n += fileSize(t, r.BlobPath(string(link)))
		}
	}
	return blobs, n
}

func fileSize(t testing.TB, p string) int64 {
	t.Helper()
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}

// uploadSessions counts the POSTs to blobs/uploads/ among reqs: each is a
// blob the client did not find in the repository (a mount, or an upload).
func uploadSessions(reqs []registry.Request) (mounts, others int) {
	for _, q := range reqs {
		if q.Method != "POST" || !strings.Contains(q.URI, "/blobs/uploads/") {
			continue
		}
		if q.Status == 201 && strings.Contains(q.URI, "mount=") {
			mounts++
		} else {
			others++
		}
	}
	return mounts, others
}

// readBack fetches what a host fetches of a published runtime, with the
// harness's own client: the pack and each file blob, into a stage's pool
// once per mode (pool/<ReuseName>); then unpacks the pack beside it with
// tar as a host does, and returns the tree.
func readBack(t *testing.T, r *registry.Registry, pub *store.Published) string {
	t.Helper()
	stage := t.TempDir()
	t.Cleanup(func() { exec.Command("chmod", "-R", "u+w", stage).Run() })
	os.Mkdir(filepath.Join(stage, store.PoolDir), 0o700)
	repo := pub.Ref.Repository
	for _, f := range pub.Files {
		data := r.FetchBlob(t, repo, f.Digest)
		var sum [32]byte
		hex.Decode(sum[:], []byte(strings.TrimPrefix(f.Digest, "sha256:")))
		for _, m := range f.Modes {
			p := filepath.Join(stage, store.PoolDir, store.ReuseName(sum, m))
			if err := os.WriteFile(p, data, 0o600); err != nil {
				t.Fatal(err)
			}
			if out, err := exec.Command("chmod", strings.TrimPrefix(store.ReuseName(sum, m), hex.EncodeToString(sum[:])+"-"), p).CombinedOutput(); err != nil {
				t.Fatalf("chmod: %v %s", err, out)
			}
		}
	}
	cmd := exec.Command("sh", "-c", `umask 0; tar -xof - && while IFS='	' read -r m p; do chmod "$m" "tree/$p"; done <modes`)
	cmd.Dir, cmd.Stdin = stage, bytes.NewReader(r.FetchBlob(t, repo, pub.Pack.Digest))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("unpacking the pack: %v %s", err, out)
	}
	return filepath.Join(stage, store.TreeDir)
}

func registryFor(t *testing.T, o store.RegistryOptions) *store.Registry {
	t.Helper()
	reg, err := store.NewRegistry(o)
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

func readPublished(t *testing.T, reg *store.Registry, ref store.OCIRef) *store.Published {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	pub, err := reg.Read(ctx, ref, store.ReadOptions{})
	if err != nil {
		t.Fatalf("reading %s back: %v", ref, err)
	}
	return pub
}

// TestPublishReadsBackAsPushed publishes a tree of 64 files of 512 KiB and
// a few small ones to a real registry (TLS, basic auth, docker's
// config.json): its id is the one push gives the tree; read back (the
// library, which recomputes it from the pack and the blobs' digests) and
// fetched as a host fetches it, it is the tree byte for byte. The registry
// received each blob once. Published again unchanged, no blob is sent;
// after 4 bytes of a small file changed, only the pack and the manifest,
// under 1 MiB, counted from the registry's log and storage.
func TestPublishReadsBackAsPushed(t *testing.T) {
	t.Parallel()
	r := registry.Start(t, registry.Options{})
	src := deltaTree(t, 64, 512<<10)
	p := newPublisher(t, r.DockerConfig())
	ca := []string{"--registry-ca", r.CAFile}
	to := "oci://" + r.Addr + "/hoist/app"

	mark := len(r.Requests())
	id, ref := p.publish(src, to+":v1", ca...)
	first := r.Requests()[mark:]
	blobs, n := received(t, r, first)

	// The id hoist push gives the same tree, on the local target.
	push := p.run("--root", t.TempDir(), "push", src, "--name", "app")
	if push.code != 0 || !strings.HasPrefix(push.stdout, "local: "+id+" ") {
		t.Errorf("push of the same tree: %s; want the id %s", push, id)
	}

	reg := registryFor(t, store.RegistryOptions{CAFile: r.CAFile, DockerConfig: p.docker})
	pub := readPublished(t, reg, ref)
	if pub.ID != id || pub.Ref.Digest != ref.Digest || len(pub.Files) != 65 {
		t.Errorf("read back: id %s, manifest %s, %d file blobs; want %s, %s, 65", pub.ID, pub.Ref.Digest, len(pub.Files), id, ref.Digest)
	}
	sameTree(t, src, readBack(t, r, pub))
	if want := len(pub.Files) + 2; blobs != want {
		t.Errorf("the first publish completed %d blob uploads, want %d (config, pack, files): each once", blobs, want)
	}

	mark = len(r.Requests())
	js := p.run(append([]string{"--json", "publish", src, "--name", "app", "--to", to + ":v2"}, ca...)...)
	second := r.Requests()[mark:]
	if js.code != 0 {
		t.Fatalf("published again, --json: %s", js)
	}
	out := decodeOne[output.Publish](t, "publish --json", js.stdout)
	if !out.OK || out.ID != id || out.Manifest != ref.Digest || out.Host != r.Addr ||
		out.Tag != "v2" || out.Pinned != ref.String() || out.PresentBlobs != 67 || out.UploadedBlobs != 0 || out.UploadedBytes != 0 {
		t.Errorf("published again, --json: %+v\n%s", out, js)
	}
	if b, _ := received(t, r, second); b != 0 {
		t.Errorf("published again unchanged: %d blobs uploaded, want none", b)
	}
	if _, sessions := uploadSessions(second); sessions != 0 {
		t.Errorf("published again unchanged: %d upload sessions opened, want none", sessions)
	}

	if err := os.WriteFile(filepath.Join(src, "README"), []byte("a RUNTime\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	mark = len(r.Requests())
	changed, ref3 := p.publish(src, to+":v3", ca...)
	third := r.Requests()[mark:]
	b3, n3 := received(t, r, third)
	if changed == id || b3 != 1 || n3 >= 1<<20 {
		t.Errorf("after 4 bytes of README changed: id %s (was %s), %d blobs and %d bytes received; want a new id, the pack alone, under 1 MiB", changed, id, b3, n3)
	}
	pub3 := readPublished(t, reg, ref3)
	sameTree(t, src, readBack(t, r, pub3))
	t.Logf("received by the registry: first publish %d blobs, %d bytes (%d requests); unchanged %d requests, no blob; after a 4-byte change %d blob, %d bytes (%d requests)",
		blobs, n, len(first), len(second), b3, n3, len(third))
}

// TestPublishMountsAcrossRepositories: a runtime published to one
// repository and then to another of the same registry is mounted there
// (201, no bytes) blob by blob, the first repository found in the record
// of earlier publishes, or named with --mount-from on a workstation that
// has none; a workstation with neither uploads everything.
func TestPublishMountsAcrossRepositories(t *testing.T) {
	t.Parallel()
	r := registry.Start(t, registry.Options{})
	src := deltaTree(t, 8, 256<<10)
	ca := []string{"--registry-ca", r.CAFile}
	base := "oci://" + r.Addr + "/hoist/"
	p := newPublisher(t, r.DockerConfig())
	p.publish(src, base+"staging:v1", ca...)
	reg := registryFor(t, store.RegistryOptions{CAFile: r.CAFile, DockerConfig: p.docker})
	blobs := len(readPublished(t, reg, mustRef(t, base+"staging:v1")).Files) + 2

	for _, tc := range []struct {
		name, repo string
		p          *publisher
		flags      []string
		mounts     int
	}{
		{"recorded", "prod", p, nil, blobs},
		{"--mount-from", "prod2", newPublisher(t, r.DockerConfig()), []string{"--mount-from", "hoist/staging"}, blobs},
		{"neither", "prod3", newPublisher(t, r.DockerConfig()), nil, 0},
	} {
		mark := len(r.Requests())
		_, ref := tc.p.publish(src, base+tc.repo+":v1", append(ca, tc.flags...)...)
		reqs := r.Requests()[mark:]
		mounts, _ := uploadSessions(reqs)
		uploads, _ := received(t, r, reqs)
		if mounts != tc.mounts || uploads != blobs-tc.mounts {
			t.Errorf("%s: %d blobs mounted and %d uploaded into %s, want %d and %d", tc.name, mounts, uploads, tc.repo, tc.mounts, blobs-tc.mounts)
		}
		sameTree(t, src, readBack(t, r, readPublished(t, reg, ref)))
	}
}

func mustRef(t *testing.T, s string) store.OCIRef {
	t.Helper()
	ref, err := store.ParseOCIRef(s)
	if err != nil {
		t.Fatal(err)
	}
	return ref
}

// TestReadBackRefusesATamperedRegistry: the registry is not trusted. A pack
// changed in its storage (served under its digest, unchecked), the same
// through a mirror that damages blobs, a manifest put with another id, and
// one that names another runtime's pack under this one's annotations are
// all refused by the read-back a push makes; the runtime as published
// reads back.
func TestReadBackRefusesATamperedRegistry(t *testing.T) {
	t.Parallel()
	r := registry.Start(t, registry.Options{})
	src := deltaTree(t, 4, 128<<10)
	p := newPublisher(t, r.DockerConfig())
	ca := []string{"--registry-ca", r.CAFile}
	_, ref := p.publish(src, "oci://"+r.Addr+"/hoist/app:v1", ca...)
	other := deltaTree(t, 4, 128<<10)
	_, otherRef := p.publish(other, "oci://"+r.Addr+"/hoist/app:other", ca...)
	reg := registryFor(t, store.RegistryOptions{CAFile: r.CAFile, DockerConfig: p.docker})
	pub := readPublished(t, reg, ref)
	refuse := func(what string, ref store.OCIRef, reg *store.Registry, want string) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		_, err := reg.Read(ctx, ref, store.ReadOptions{})
		if !errors.Is(err, store.ErrPublished) || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: read back %v; want ErrPublished saying %q", what, err, want)
		}
	}

	// A pack changed in the registry's storage.
	packFile := r.BlobPath(pub.Pack.Digest)
	good, err := os.ReadFile(packFile)
	if err != nil {
		t.Fatal(err)
	}
	bad := bytes.Clone(good)
	bad[len(bad)/2] ^= 1
	os.WriteFile(packFile, bad, 0o644)
	refuse("a pack changed in storage", ref, reg, "not the blob the manifest names")

	// The same pack damaged by a mirror in front of a sound registry.
	os.WriteFile(packFile, good, 0o644)
	readPublished(t, reg, ref)
	mirror := r.NewProxy(t)
	mirror.Corrupt()
	viaMirror := ref
	viaMirror.Registry = mirror.Addr
	refuse("a pack damaged by a mirror", viaMirror, registryFor(t, store.RegistryOptions{CAFile: r.CAFile, DockerConfig: mirrorConfig(t, r, mirror)}), "not the blob the manifest names")

	// Manifests that lie, put with the harness's own client.
	var m map[string]any
	if err := json.Unmarshal(fetchManifest(t, r, ref), &m); err != nil {
		t.Fatal(err)
	}
	m["annotations"].(map[string]any)["dev.hoist.runtime.id"] = "app-000000000000"
	putManifest(t, r, "hoist/app", "lie", m)
	refuse("a manifest with another id", mustRef(t, "oci://"+r.Addr+"/hoist/app:lie"), reg, "says id app-000000000000")

	var o map[string]any
	json.Unmarshal(fetchManifest(t, r, otherRef), &o)
	m["annotations"].(map[string]any)["dev.hoist.runtime.id"] = pub.ID
	m["layers"] = o["layers"]
	m["annotations"].(map[string]any)["dev.hoist.runtime.sum"] = o["annotations"].(map[string]any)["dev.hoist.runtime.sum"]
	putManifest(t, r, "hoist/app", "swapped", m)
	refuse("another runtime's pack and blobs under this one's annotations", mustRef(t, "oci://"+r.Addr+"/hoist/app:swapped"), reg, "says digest "+pub.Digest)
}

// mirrorConfig is a docker config.json with the registry's credentials
// for the mirror's address too.
func mirrorConfig(t *testing.T, r *registry.Registry, mirror *registry.Proxy) string {
	t.Helper()
	var cfg map[string]map[string]any
	if err := json.Unmarshal([]byte(readFile(t, filepath.Join(r.DockerConfig(), "config.json"))), &cfg); err != nil {
		t.Fatal(err)
	}
	cfg["auths"][mirror.Addr] = cfg["auths"][r.Addr]
	dir := t.TempDir()
	b, _ := json.Marshal(cfg)
	if err := os.WriteFile(filepath.Join(dir, "config.json"), b, 0o600); err != nil {
		t.Fatal(err)
	}
	return dir
}

// fetchManifest GETs ref's manifest as the registry stores it, with the
// OCI Accept header 2.8.2 wants, as its user.
func fetchManifest(t *testing.T, r *registry.Registry, ref store.OCIRef) []byte {
	t.Helper()
	req, _ := http.NewRequest("GET", r.URL+"/v2/"+ref.Repository+"/manifests/"+ref.Digest, nil)
	req.Header.Set("Accept", "application/vnd.oci.image.manifest.v1+json")
	req.SetBasicAuth(r.User, r.Password)
	resp, err := r.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("GET manifest %s: %s %v", ref, resp.Status, err)
	}
	return b
}

// putManifest PUTs m as repo's tag, as the registry's user.
func putManifest(t *testing.T, r *registry.Registry, repo, tag string, m any) {
	t.Helper()
	b, _ := json.Marshal(m)
	req, _ := http.NewRequest("PUT", r.URL+"/v2/"+repo+"/manifests/"+tag, bytes.NewReader(b))
	req.Header.Set("Content-Type", "application/vnd.oci.image.manifest.v1+json")
	req.SetBasicAuth(r.User, r.Password)
	resp, err := r.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 201 {
		t.Fatalf("PUT manifest %s:%s: %s", repo, tag, resp.Status)
	}
}

// TestPublishOfAFileChangedSinceOpen: a shared file that changes between
// the reading of its digest and its upload (same size, so only its bytes
// tell) stops the publish before the registry has it whole: the registry
// holds no blob of the new bytes nor of the digest, and no manifest.
func TestPublishOfAFileChangedSinceOpen(t *testing.T) {
	t.Parallel()
	r := registry.Start(t, registry.Options{})
	src := deltaTree(t, 2, 256<<10)
	a, err := store.Open(src, "app")
	if err != nil {
		t.Fatal(err)
	}
	part := filepath.Join(src, "lib", "part001.bin")
	b, _ := os.ReadFile(part)
	b[len(b)-1] ^= 1
	os.WriteFile(part, b, 0o644)
	reg := registryFor(t, store.RegistryOptions{CAFile: r.CAFile, DockerConfig: r.DockerConfig()})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, err = reg.Publish(ctx, a, mustRef(t, "oci://"+r.Addr+"/hoist/app:v1"), store.PublishOptions{Record: "-"})
	if err == nil || !strings.Contains(err.Error(), "part001.bin changed while it was being read; publish again") {
		t.Fatalf("publish of a tree changed since Open: %v", err)
	}
	var sum [32]byte
	for _, e := range a.Entries {
		if e.Path == "lib/part001.bin" {
			sum = e.Sum
		}
	}
	for _, d := range []string{registry.Digest(b), "sha256:" + hex.EncodeToString(sum[:])} {
		if _, err := os.Stat(r.BlobPath(d)); err == nil {
			t.Errorf("the registry holds %s", d)
		}
	}
	for _, q := range r.Requests() {
		if q.Method == "PUT" && strings.Contains(q.URI, "/manifests/") {
			t.Errorf("a manifest was put: %v", q)
		}
	}
}
