package store

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2"
	"oras.land/oras-go/v2/content/memory"
)

// bigTree is tree with files a publish stores as blobs of their own: two
// with the same bytes and different modes, one more in the read-only
// directory, and one just under ReuseMin, which stays in the pack.
func bigTree(t *testing.T) string {
	t.Helper()
	d := tree(t)
	big := randomBytes(t, ReuseMin+100)
	write := func(p string, b []byte, mode os.FileMode) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(d, p), b, mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(filepath.Join(d, p), mode); err != nil {
			t.Fatal(err)
		}
	}
	write("lib/big", big, 0o644)
	write("bin/big", big, 0o755)
	write("lib/x/other", randomBytes(t, 3*ReuseMin), 0o600)
	write("lib/small", randomBytes(t, ReuseMin-1), 0o644)
	os.Chmod(filepath.Join(d, "ro"), 0o755)
	write("ro/big", randomBytes(t, ReuseMin), 0o444)
	os.Chmod(filepath.Join(d, "ro"), 0o555)
	return d
}

func randomBytes(t *testing.T, n int) []byte {
	t.Helper()
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return b
}

func layout(t *testing.T, a *Artifact) (*ociLayout, []byte) {
	t.Helper()
	l, err := a.ociLayout(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l, blobBytes(t, l.pack)
}

func blobBytes(t *testing.T, b ociBlob) []byte {
	t.Helper()
	rc, err := b.open()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	data, err := io.ReadAll(rc)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestPublishLayout: the pack is exactly the archive push writes for a
// host that holds every reusable file at pool/<ReuseName>; each reusable
// content is one blob, its digest the file's, with every mode it has; the
// manifest says the id, digest and the pack's sum; and all of it is the
// same bytes when laid out again.
func TestPublishLayout(t *testing.T) {
	a, err := Open(bigTree(t), "rt")
	if err != nil {
		t.Fatal(err)
	}
	l, pack := layout(t, a)
	var push bytes.Buffer
	if err := a.writeTar(context.Background(), &push, poolLinks(a.Entries)); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(pack, push.Bytes()) {
		t.Errorf("the pack (%d bytes) is not the archive push writes against a full pool (%d bytes)", len(pack), push.Len())
	}
	if l.pack.desc.Digest != digest.FromBytes(pack) || l.pack.desc.Size != int64(len(pack)) {
		t.Errorf("pack descriptor %v does not describe its bytes", l.pack.desc)
	}
	for _, h := range headers(t, pack) {
		if h.Typeflag == '0' && h.Size >= ReuseMin {
			t.Errorf("the pack carries %s (%d bytes), a reusable file", h.Name, h.Size)
		}
	}

	want := map[string]string{}
	for _, p := range []string{"lib/big", "lib/x/other", "ro/big"} {
		e, _ := entry(a, p)
		want[sha256Digest(e.Sum).String()] = map[string]string{"lib/big": "644,755", "lib/x/other": "600", "ro/big": "444"}[p]
	}
	got := map[string]string{}
	for _, b := range l.files {
		got[b.desc.Digest.String()] = b.desc.Annotations[annModes]
		if b.desc.MediaType != FileMediaType || b.desc.Digest != digest.FromBytes(blobBytes(t, b)) {
			t.Errorf("file blob %v: wrong type, or bytes of another digest", b.desc)
		}
	}
	if !mapsEqual(got, want) {
		t.Errorf("file blobs (digest: modes) %v, want %v", got, want)
	}

	var m ocispec.Manifest
	if err := json.Unmarshal(l.manifest, &m); err != nil {
		t.Fatal(err)
	}
	if m.ArtifactType != ArtifactType || m.Config.Digest != ocispec.DescriptorEmptyJSON.Digest || len(m.Layers) != 4 || m.Layers[0].MediaType != PackMediaType {
		t.Errorf("manifest %s", l.manifest)
	}
	for k, v := range map[string]string{annID: a.ID(), annName: "rt", annDigest: a.Digest, annSum: l.pack.desc.Digest.Encoded()} {
		if m.Annotations[k] != v {
			t.Errorf("annotation %s = %q, want %q", k, m.Annotations[k], v)
		}
	}

	b, _ := Open(a.Source, "rt")
	l2, pack2 := layout(t, b)
	if !bytes.Equal(l2.manifest, l.manifest) || !bytes.Equal(pack2, pack) {
		t.Errorf("laid out again, the same tree gives another manifest or pack:\n%s\n%s", l.manifest, l2.manifest)
	}
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// TestPublishLayoutOfAnArchive: an archive's reusable files are kept as it
// is read (the pack is written in the same pass), with the same blobs as
// the directory it was made from and the same id.
func TestPublishLayoutOfAnArchive(t *testing.T) {
	d := bigTree(t)
	dir, _ := Open(d, "rt")
	p := filepath.Join(t.TempDir(), "rt.tar")
	if err := os.WriteFile(p, goTar(t, d), 0o644); err != nil {
		t.Fatal(err)
	}
	arc, err := Open(p, "rt")
	if err != nil {
		t.Fatal(err)
	}
	ld, _ := layout(t, dir)
	la, pack := layout(t, arc)
	if arc.ID() != dir.ID() || len(la.files) != len(ld.files) {
		t.Fatalf("archive: id %s and %d file blobs; directory: %s and %d", arc.ID(), len(la.files), dir.ID(), len(ld.files))
	}
	for i := range la.files {
		if la.files[i].desc.Digest != ld.files[i].desc.Digest || !bytes.Equal(blobBytes(t, la.files[i]), blobBytes(t, ld.files[i])) {
			t.Errorf("file blob %d: %v from the archive, %v from the directory", i, la.files[i].desc, ld.files[i].desc)
		}
	}
	var push bytes.Buffer
	if err := arc.writeTar(context.Background(), &push, poolLinks(arc.Entries)); err != nil || !bytes.Equal(pack, push.Bytes()) {
		t.Errorf("the archive's pack is not the archive push writes against a full pool (%v)", err)
	}
}

// TestPublishLayoutSmallChange: 4 bytes changed in a small file change the
// pack and nothing else.
func TestPublishLayoutSmallChange(t *testing.T) {
	d := bigTree(t)
	a, _ := Open(d, "rt")
	la, _ := layout(t, a)
	if err := os.WriteFile(filepath.Join(d, "bin", "tool"), []byte("#!/bin/sh\necho TOOL\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	b, _ := Open(d, "rt")
	lb, pack := layout(t, b)
	if b.ID() == a.ID() || lb.pack.desc.Digest == la.pack.desc.Digest || len(lb.files) != 3 || len(la.files) != 3 {
		t.Fatalf("the change: id %s to %s, pack %s to %s, %d file blobs to %d; want a new id and pack, and 3 file blobs",
			a.ID(), b.ID(), la.pack.desc.Digest, lb.pack.desc.Digest, len(la.files), len(lb.files))
	}
	for i := range lb.files {
		if lb.files[i].desc.Digest != la.files[i].desc.Digest {
			t.Errorf("file blob %d changed: %v, was %v", i, lb.files[i].desc, la.files[i].desc)
		}
	}
	if len(pack) > 1<<20 {
		t.Errorf("the pack is %d bytes", len(pack))
	}
}

// memPublish puts l into an in-memory store under tag v1, the manifest
// mutated first by edit (nil: as laid out), with extra blobs.
func memPublish(t *testing.T, l *ociLayout, edit func(*ocispec.Manifest), extra ...[]byte) *memory.Store {
	t.Helper()
	ctx := context.Background()
	s := memory.New()
	for _, b := range l.blobs() {
		if err := s.Push(ctx, b.desc, bytes.NewReader(blobBytes(t, b))); err != nil {
			t.Fatal(err)
		}
	}
	// The memory store keys blobs by media type too.
	for _, b := range extra {
		for _, mt := range []string{PackMediaType, FileMediaType} {
			d := ocispec.Descriptor{MediaType: mt, Digest: digest.FromBytes(b), Size: int64(len(b))}
			if ok, _ := s.Exists(ctx, d); !ok {
				if err := s.Push(ctx, d, bytes.NewReader(b)); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	mb := l.manifest
	if edit != nil {
		var m ocispec.Manifest
		if err := json.Unmarshal(mb, &m); err != nil {
			t.Fatal(err)
		}
		edit(&m)
		mb, _ = json.Marshal(m)
	}
	desc, err := oras.PushBytes(ctx, s, ocispec.MediaTypeImageManifest, mb)
	if err == nil {
		err = s.Tag(ctx, desc, "v1")
	}
	if err == nil {
		// What a registry resolves by digest.
		err = s.Tag(ctx, desc, desc.Digest.String())
	}
	if err != nil {
		t.Fatal(err)
	}
	return s
}

var memRef = OCIRef{Registry: "registry.test", Repository: "hoist/rt", Tag: "v1"}

// TestReadPublished: read back, a published runtime has the id, digest,
// size and entries of the tree it was published from, the pack's sum, and
// its file blobs with their modes (the reusable list a push sends); and the
// pack and blobs, unpacked as a host does (GNU tar, a pool of the blobs),
// make that tree again.
func TestReadPublished(t *testing.T) {
	d := bigTree(t)
	p := filepath.Join(t.TempDir(), "rt.tar")
	os.WriteFile(p, goTar(t, d), 0o644)
	for _, src := range []string{d, p} {
		a, err := Open(src, "rt")
		if err != nil {
			t.Fatal(err)
		}
		l, pack := layout(t, a)
		s := memPublish(t, l, nil)
		pub, err := readPublished(context.Background(), s, memRef, ReadOptions{})
		if err != nil {
			t.Fatalf("%s: %v", src, err)
		}
		if pub.ID != a.ID() || pub.Digest != a.Digest || pub.Size != a.Size || pub.Entries != len(a.Entries) ||
			pub.Sum != l.pack.desc.Digest.Encoded() || pub.Ref.Digest != l.desc.Digest.String() {
			t.Errorf("%s: read back %+v; want id %s, digest %s, %d bytes, %d entries", src, pub, a.ID(), a.Digest, a.Size, len(a.Entries))
		}
		want := strings.Split(a.reusable(), "\n")
		got := strings.Split(pub.Reusable(), "\n")
		slices.Sort(want)
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("%s: Reusable() %q, want the push's reusable list %q", src, got, want)
		}
		blobs := map[string][]byte{}
		for _, b := range l.files {
			blobs[b.desc.Digest.String()] = blobBytes(t, b)
		}
		again, err := Open(materialize(t, pub, pack, blobs), "rt")
		if err != nil || again.Digest != a.Digest {
			t.Errorf("%s: unpacked as a host does, the runtime is not the tree published (%v)", src, err)
		}
	}
}

// materialize does what a host does with a published runtime: each file
// blob into the stage's pool once per mode, at pool/<ReuseName>, then the
// pack unpacked beside it with tar (umask 0), and the directory modes
// applied. It returns the tree.
func materialize(t *testing.T, pub *Published, pack []byte, blobs map[string][]byte) string {
	t.Helper()
	stage := t.TempDir()
	t.Cleanup(func() { exec.Command("chmod", "-R", "u+w", stage).Run() })
	os.Mkdir(filepath.Join(stage, PoolDir), 0o700)
	for _, f := range pub.Files {
		for _, m := range f.Modes {
			var sum [32]byte
			hex.Decode(sum[:], []byte(strings.TrimPrefix(f.Digest, "sha256:")))
			p := filepath.Join(stage, PoolDir, ReuseName(sum, m))
			if err := os.WriteFile(p, blobs[f.Digest], 0o600); err != nil {
				t.Fatal(err)
			}
			if err := exec.Command("chmod", octalMode(m), p).Run(); err != nil {
				t.Fatal(err)
			}
		}
	}
	cmd := exec.Command("sh", "-c", `umask 0; tar -xof - && while IFS='	' read -r m p; do chmod "$m" "tree/$p"; done <modes`)
	cmd.Dir, cmd.Stdin = stage, bytes.NewReader(pack)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("unpacking the pack: %v %s", err, out)
	}
	return filepath.Join(stage, TreeDir)
}

// servedAs is a registry that serves other bytes for some digests: a
// tampering mirror.
type servedAs struct {
	oras.ReadOnlyTarget
	bytes map[digest.Digest][]byte
}

func (s servedAs) Fetch(ctx context.Context, d ocispec.Descriptor) (io.ReadCloser, error) {
	if b, ok := s.bytes[d.Digest]; ok {
		return io.NopCloser(bytes.NewReader(b)), nil
	}
	return s.ReadOnlyTarget.Fetch(ctx, d)
}

// rewrapped is the pack written again by archive/tar with one header
// changed by edit: the same tree to a tar reader, not hoist's bytes.
func rewrapped(t *testing.T, pack []byte, edit func(*tar.Header)) []byte {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	tr := tar.NewReader(bytes.NewReader(pack))
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		edit(h)
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		io.Copy(tw, tr)
	}
	tw.Close()
	return buf.Bytes()
}

// TestReadPublishedRefusesLies: a manifest whose annotations or layers say
// anything other than its pack and blobs, a pack that is not hoist's
// archive of the tree it holds, and bytes that are not the digest they
// are served under, are all refused.
func TestReadPublishedRefusesLies(t *testing.T) {
	d := bigTree(t)
	a, _ := Open(d, "rt")
	l, pack := layout(t, a)
	other := bigTree(t)
	b, _ := Open(other, "rt")
	lo, otherPack := layout(t, b)
	fileLayer := func(m *ocispec.Manifest, modes string) *ocispec.Descriptor {
		for i := range m.Layers {
			if m.Layers[i].Annotations[annModes] == modes {
				return &m.Layers[i]
			}
		}
		t.Fatalf("no layer of modes %s", modes)
		return nil
	}
	setPack := func(m *ocispec.Manifest, p []byte) {
		m.Layers[0].Digest, m.Layers[0].Size = digest.FromBytes(p), int64(len(p))
		m.Annotations[annSum] = digest.FromBytes(p).Encoded()
	}
	stray := randomBytes(t, ReuseMin)
	unameRoot := rewrapped(t, pack, func(h *tar.Header) {
		if h.Name == "tree/bin/" {
			h.Uname = "root"
		}
	})
	outside := rewrapped(t, pack, func(h *tar.Header) {
		if h.Name == "tree/bin/tool" {
			h.Name = "bin/tool"
		}
	})

	cases := []struct {
		name  string
		edit  func(*ocispec.Manifest)
		extra [][]byte
		serve map[digest.Digest][]byte
		want  string
	}{
		{name: "another id", edit: func(m *ocispec.Manifest) { m.Annotations[annID] = "rt-000000000000" }, want: "says id rt-000000000000"},
		{name: "another name, the id kept", edit: func(m *ocispec.Manifest) { m.Annotations[annName] = "app" }, want: "says id " + a.ID()},
		{name: "another digest", edit: func(m *ocispec.Manifest) { m.Annotations[annDigest] = strings.Repeat("0", 64) }, want: "says digest 0000"},
		{name: "another sum", edit: func(m *ocispec.Manifest) { m.Annotations[annSum] = strings.Repeat("0", 64) }, want: "the pack's sum is 0000"},
		{name: "another size", edit: func(m *ocispec.Manifest) { m.Annotations[annSize] = "1" }, want: "says 1 bytes of files"},
		{name: "more entries", edit: func(m *ocispec.Manifest) { m.Annotations[annEntries] = "999" }, want: "says 999 entries"},
		{name: "no annotations", edit: func(m *ocispec.Manifest) { m.Annotations = nil }, want: "lacks hoist's annotations"},
		{name: "another artifact type", edit: func(m *ocispec.Manifest) { m.ArtifactType = "application/vnd.example" }, want: "not a hoist runtime"},
		{name: "a config", edit: func(m *ocispec.Manifest) { m.Config = m.Layers[1] }, want: "config is not the empty one"},
		{name: "a file blob dropped", edit: func(m *ocispec.Manifest) { m.Layers = slices.Delete(m.Layers, 1, 2) }, want: "lists no blob for"},
		{name: "a stray blob added", extra: [][]byte{stray}, edit: func(m *ocispec.Manifest) {
			m.Layers = append(m.Layers, ocispec.Descriptor{MediaType: FileMediaType, Digest: digest.FromBytes(stray), Size: int64(len(stray)),
				Annotations: map[string]string{annModes: "644"}})
		}, want: "which no file of its pack is"},
		{name: "a mode dropped", edit: func(m *ocispec.Manifest) { fileLayer(m, "644,755").Annotations[annModes] = "644" }, want: "lists no blob for"},
		{name: "a mode changed", edit: func(m *ocispec.Manifest) { fileLayer(m, "600").Annotations[annModes] = "644" }, want: "lists no blob for"},
		{name: "a file blob swapped for another of its size", extra: [][]byte{stray}, edit: func(m *ocispec.Manifest) {
			f := fileLayer(m, "444")
			f.Digest = digest.FromBytes(stray)
		}, want: "lists no blob for"},
		{name: "two packs", edit: func(m *ocispec.Manifest) { m.Layers = append(m.Layers, m.Layers[0]) }, want: "twice or malformed"},
		{name: "a layer of another type", edit: func(m *ocispec.Manifest) { m.Layers[1].MediaType = "application/octet-stream" }, want: "a layer of type"},
		{name: "another tree's pack", extra: [][]byte{otherPack}, edit: func(m *ocispec.Manifest) {
			setPack(m, otherPack)
			m.Layers = append(m.Layers[:1], lo.files[0].desc, lo.files[1].desc, lo.files[2].desc)
		}, want: "says digest " + a.Digest},
		{name: "the same tree, another tar", extra: [][]byte{unameRoot}, edit: func(m *ocispec.Manifest) { setPack(m, unameRoot) },
			want: "not the archive hoist writes"},
		{name: "an entry outside tree/", extra: [][]byte{outside}, edit: func(m *ocispec.Manifest) { setPack(m, outside) },
			want: `holds "bin/tool", outside tree/`},
		{name: "a tampered pack", serve: map[digest.Digest][]byte{l.pack.desc.Digest: append(slices.Clone(pack[:len(pack)-1]), 1)},
			want: "not the blob the manifest names"},
		{name: "a cut pack", serve: map[digest.Digest][]byte{l.pack.desc.Digest: pack[:len(pack)/2]},
			want: "not the blob the manifest names"},
	}
	if _, err := readPublished(context.Background(), memPublish(t, l, nil), memRef, ReadOptions{}); err != nil {
		t.Fatalf("the runtime as published: %v", err)
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := memPublish(t, l, tc.edit, tc.extra...)
			var target oras.ReadOnlyTarget = s
			if tc.serve != nil {
				target = servedAs{s, tc.serve}
			}
			_, err := readPublished(context.Background(), target, memRef, ReadOptions{})
			t.Log(err)
			if !errors.Is(err, ErrPublished) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("read back: %v; want ErrPublished saying %q", err, tc.want)
			}
		})
	}
}

// TestReadPublishedManifestByDigest: a reference by digest gets exactly
// that manifest; a registry that serves other bytes for it is refused.
func TestReadPublishedManifestByDigest(t *testing.T) {
	a, _ := Open(bigTree(t), "rt")
	l, _ := layout(t, a)
	s := memPublish(t, l, nil)
	ref := memRef
	ref.Tag, ref.Digest = "", l.desc.Digest.String()
	if pub, err := readPublished(context.Background(), s, ref, ReadOptions{}); err != nil || pub.ID != a.ID() {
		t.Fatalf("by digest: %v", err)
	}
	lie := bytes.Replace(l.manifest, []byte(a.ID()), []byte("rt-000000000000"), 1)
	_, err := readPublished(context.Background(), servedAs{s, map[digest.Digest][]byte{l.desc.Digest: lie}}, ref, ReadOptions{})
	if err == nil || !strings.Contains(err.Error(), "digest") {
		t.Errorf("other bytes for the manifest's digest: %v; want a refusal", err)
	}
}

// TestReadPublishedMaxSize: a runtime over the limit is refused before
// its pack is read whole.
func TestReadPublishedMaxSize(t *testing.T) {
	a, _ := Open(bigTree(t), "rt")
	l, _ := layout(t, a)
	_, err := readPublished(context.Background(), memPublish(t, l, nil), memRef, ReadOptions{MaxSize: a.Size - 1})
	if !errors.Is(err, ErrArtifact) || !strings.Contains(err.Error(), "over the limit") {
		t.Errorf("read back with a limit under its size: %v", err)
	}
}

// TestVerifiedHoldsBackTheEnd: a file that is not what its digest says
// (changed, longer, shorter) fails before its last bytes are handed over,
// so a registry never receives it whole; the right file reads whole.
func TestVerifiedHoldsBackTheEnd(t *testing.T) {
	data := randomBytes(t, 3*verifyTail+17)
	sum := [32]byte(decodeDigest(t, digest.FromBytes(data)))
	p := filepath.Join(t.TempDir(), "f")
	for _, tc := range []struct {
		name string
		file []byte
		ok   bool
	}{
		{"as digested", data, true},
		{"a byte changed", append(slices.Clone(data[:len(data)-1]), data[len(data)-1]^1), false},
		{"a byte more", append(slices.Clone(data), 0), false},
		{"a byte less", data[:len(data)-1], false},
	} {
		os.WriteFile(p, tc.file, 0o600)
		rc, _ := verifiedOpener(p, sum, int64(len(data)))()
		var got bytes.Buffer
		_, err := io.Copy(&got, rc)
		rc.Close()
		switch {
		case tc.ok && (err != nil || !bytes.Equal(got.Bytes(), data)):
			t.Errorf("%s: %v, %d bytes", tc.name, err, got.Len())
		case !tc.ok && (!errors.Is(err, errSourceChanged) || got.Len() > len(data)-verifyTail):
			t.Errorf("%s: %v after %d bytes; want errSourceChanged with the last %d held back", tc.name, err, got.Len(), verifyTail)
		}
	}
}

func decodeDigest(t *testing.T, d digest.Digest) []byte {
	t.Helper()
	b, err := hex.DecodeString(d.Encoded())
	if err != nil {
		t.Fatal(err)
	}
	return b
}
