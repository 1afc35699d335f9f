package store

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2"
)

// ErrPublished reports a published runtime hoist refuses: a manifest that
// is not a hoist runtime's, or one whose annotations or layers disagree
// with what its pack's bytes say. The registry (or a mirror in front of
// it) is not trusted: what it serves is believed only where the bytes
// prove it.
var ErrPublished = errors.New("published runtime refused")

// maxManifest bounds a manifest's size (oras-go's own default).
const maxManifest = 4 << 20

// ReadOptions configure [Registry.Read].
type ReadOptions struct {
	// MaxSize bounds the runtime's size, as OpenOptions.MaxSize does;
	// zero means DefaultMaxSize.
	MaxSize int64
}

// Blob is a blob of a registry: its digest ("sha256:<hex>") and size.
type Blob struct {
	Digest string
	Size   int64
}

// PublishedFile is a file of a published runtime that is a blob of its
// own, and the modes the runtime has it with: a host holds it once per
// mode, at pool/<ReuseName>, before it unpacks the pack.
type PublishedFile struct {
	Blob
	Modes []fs.FileMode
}

// Published is a runtime in a registry, as its pack and its file blobs'
// digests say: every field was recomputed on this machine, and agrees with
// the manifest.
type Published struct {
	// Ref names the manifest by its digest (and the tag it was read by).
	Ref     OCIRef
	ID      string
	Name    string
	Digest  string // the canonical form's SHA-256, hex: the runtime id's
	Sum     string // the pack's SHA-256, hex: what a host verifies before it unpacks
	Size    int64  // the files' bytes
	Entries int
	Pack    Blob
	// Files are the blobs the host fetches (or copies from runtimes it
	// has) into its stage's pool; the pack links to them.
	Files []PublishedFile
	// Setuid lists the paths with a setuid or setgid bit, Writable those
	// writable by others: as the publisher's artifact gave them.
	Setuid, Writable []string

	// The pack's entries in its order, and the tree they make: what
	// an archive of the runtime is written from without its files
	// (writeTar).
	items   []packItem
	entries []Entry
}

// Reusable lists the published files by ReuseName, one a line, as a
// push's first host command takes the files it may reuse.
func (p *Published) Reusable() string {
	var b strings.Builder
	for _, f := range p.Files {
		sum, _ := hex.DecodeString(strings.TrimPrefix(f.Digest, "sha256:"))
		for _, m := range f.Modes {
			b.WriteString(ReuseName([32]byte(sum), m) + "\n")
		}
	}
	return b.String()
}

// Read resolves ref (a tag or a digest) to its manifest, fetches the pack
// (the file blobs stay in the registry) and recomputes the runtime on this
// machine: its entries from the pack, the digests of the files it links to
// from the manifest's file blobs (which the hosts verify as they fetch
// them), its id, and the pack itself, written again from those entries,
// which must be byte for byte the pack fetched. A manifest whose
// annotations say anything else, or a pack that is not exactly what
// hoist writes, is refused with ErrPublished (or ErrArtifact, for a tree
// hoist would refuse to read).
func (r *Registry) Read(ctx context.Context, ref OCIRef, o ReadOptions) (*Published, error) {
	repo, err := r.c.Repository(ref.reference())
	if err != nil {
		return nil, err
	}
	p, err := readPublished(ctx, repo, ref, o)
	if err != nil && !errors.Is(err, ErrPublished) && !errors.Is(err, ErrArtifact) {
		return nil, r.describe(ref, err)
	}
	return p, err
}

// refused is an ErrPublished about ref.
func refused(ref OCIRef, format string, args ...any) error {
	return fmt.Errorf("%w: %s: %s; publish it again, or suspect the registry (or a mirror in front of it)", ErrPublished, ref, fmt.Sprintf(format, args...))
}

func readPublished(ctx context.Context, t oras.ReadOnlyTarget, ref OCIRef, o ReadOptions) (*Published, error) {
	name := ref.Tag
	if ref.Digest != "" {
		name = ref.Digest
	}
	if name == "" {
		return nil, fmt.Errorf("%s: give a tag or a digest (oci://REGISTRY/REPO:TAG or @sha256:...)", ref)
	}
	desc, mb, err := oras.FetchBytes(ctx, t, name, oras.FetchBytesOptions{MaxBytes: maxManifest})
	if err != nil {
		return nil, fmt.Errorf("fetching the manifest %s: %w", name, err)
	}
	got := digest.FromBytes(mb)
	if got != desc.Digest || (ref.Digest != "" && got.String() != ref.Digest) {
		return nil, refused(ref, "the manifest served has digest %s", got)
	}
	ref.Digest = got.String()
	m, ann, err := parseManifest(ref, mb)
	if err != nil {
		return nil, err
	}
	p := &Published{Ref: ref, ID: ann.id, Name: ann.name}
	files := map[string]int64{} // ReuseName to the blob's size
	var pack ocispec.Descriptor
	for _, l := range m.Layers {
		if l.MediaType == PackMediaType {
			pack = l
			continue
		}
		f := PublishedFile{Blob: Blob{Digest: l.Digest.String(), Size: l.Size}}
		sum, _ := hex.DecodeString(l.Digest.Encoded())
		for _, s := range strings.Split(l.Annotations[annModes], ",") {
			mode, _ := parseMode(s)
			f.Modes = append(f.Modes, mode)
			files[ReuseName([32]byte(sum), mode)] = l.Size
		}
		p.Files = append(p.Files, f)
	}
	p.Pack = Blob{Digest: pack.Digest.String(), Size: pack.Size}

	a := &Artifact{Source: ref.String(), Name: ann.name, maxSize: o.MaxSize}
	tmp, items, err := a.fetchPack(ctx, t, ref, pack, files)
	if tmp != nil {
		defer func() { tmp.Close(); os.Remove(tmp.Name()) }()
	}
	if err != nil {
		return nil, err
	}
	for _, it := range items {
		a.Entries = append(a.Entries, it.e)
	}
	if err := a.finish(); err != nil {
		return nil, err
	}
	// Every file blob is what some file of the tree links to, with each
	// mode it is listed with: a host fetches nothing the runtime lacks.
	linked := map[string]bool{}
	for _, e := range a.Entries {
		if e.Type == 'f' {
			linked[ReuseName(e.Sum, e.Mode)] = true
		}
	}
	for n := range files {
		if !linked[n] {
			return nil, refused(ref, "the manifest lists the blob %s (mode %s), which no file of its pack is", n[:64], n[65:])
		}
	}
	if _, err := tmp.Seek(0, io.SeekStart); err != nil {
		return nil, err
	}
	again, err := rewritePack(ctx, items, a.Entries, files, tmp)
	if err != nil {
		return nil, err
	}
	if sha256Digest(again) != pack.Digest {
		return nil, refused(ref, "its pack is not the archive hoist writes for the tree it holds (written again, it is %x)", again)
	}

	p.Digest, p.Sum, p.Size, p.Entries = a.Digest, pack.Digest.Encoded(), a.Size, len(a.Entries)
	p.items, p.entries = items, a.Entries
	switch {
	case ann.digest != a.Digest:
		return nil, refused(ref, "the manifest says digest %s, its pack and blobs make %s", ann.digest, a.Digest)
	case ann.id != a.ID():
		return nil, refused(ref, "the manifest says id %s, its pack and blobs make %s", ann.id, a.ID())
	case ann.sum != p.Sum:
		return nil, refused(ref, "the manifest says the pack's sum is %s, the pack layer is %s", ann.sum, p.Sum)
	case ann.size != a.Size:
		return nil, refused(ref, "the manifest says %d bytes of files, its pack and blobs make %d", ann.size, a.Size)
	case ann.entries != len(a.Entries):
		return nil, refused(ref, "the manifest says %d entries, its pack holds %d", ann.entries, len(a.Entries))
	}
	for _, e := range a.Entries {
		if e.Mode&(fs.ModeSetuid|fs.ModeSetgid) != 0 {
			p.Setuid = append(p.Setuid, e.Path)
		}
		if e.Type != 'l' && e.Mode&0o002 != 0 {
			p.Writable = append(p.Writable, e.Path)
		}
	}
	return p, nil
}

// published are the manifest's annotations, parsed.
type published struct {
	id, name, digest, sum string
	size                  int64
	entries               int
}

// parseManifest reads a manifest of a hoist runtime, and refuses anything
// else: another type, a config that is not the empty one, layers other
// than one pack and file blobs, a file blob without its modes, the same
// blob twice, annotations missing or malformed.
func parseManifest(ref OCIRef, b []byte) (*ocispec.Manifest, published, error) {
	var m ocispec.Manifest
	var ann published
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, ann, refused(ref, "its manifest is not JSON (%v)", err)
	}
	switch {
	case m.SchemaVersion != 2 || m.MediaType != ocispec.MediaTypeImageManifest:
		return nil, ann, refused(ref, "its manifest is not an OCI image manifest (schemaVersion %d, mediaType %q)", m.SchemaVersion, m.MediaType)
	case m.ArtifactType != ArtifactType:
		return nil, ann, refused(ref, "it is not a hoist runtime (artifactType %q, want %s)", m.ArtifactType, ArtifactType)
	case m.Config.MediaType != ocispec.MediaTypeEmptyJSON || m.Config.Digest != ocispec.DescriptorEmptyJSON.Digest || m.Config.Size != 2:
		return nil, ann, refused(ref, "its config is not the empty one")
	}
	seen := map[digest.Digest]bool{}
	packs := 0
	for _, l := range m.Layers {
		if l.Digest.Validate() != nil || l.Digest.Algorithm() != digest.SHA256 || l.Size < 0 || seen[l.Digest] {
			return nil, ann, refused(ref, "its manifest lists the layer %q (size %d) twice or malformed", l.Digest, l.Size)
		}
		seen[l.Digest] = true
		switch l.MediaType {
		case PackMediaType:
			packs++
		case FileMediaType:
			modes := strings.Split(l.Annotations[annModes], ",")
			if !slices.IsSorted(modes) || len(slices.Compact(slices.Clone(modes))) != len(modes) {
				return nil, ann, refused(ref, "the file blob %s has modes %q", l.Digest, l.Annotations[annModes])
			}
			for _, s := range modes {
				if _, ok := parseMode(s); !ok {
					return nil, ann, refused(ref, "the file blob %s has modes %q", l.Digest, l.Annotations[annModes])
				}
			}
		default:
			return nil, ann, refused(ref, "its manifest lists a layer of type %q", l.MediaType)
		}
	}
	if packs != 1 {
		return nil, ann, refused(ref, "its manifest lists %d packs, not one", packs)
	}
	a := m.Annotations
	ann.id, ann.name, ann.digest, ann.sum = a[annID], a[annName], a[annDigest], a[annSum]
	var errSize, errEntries error
	ann.size, errSize = strconv.ParseInt(a[annSize], 10, 64)
	ann.entries, errEntries = strconv.Atoi(a[annEntries])
	if !ValidName(ann.name) || !isHex64(ann.digest) || !isHex64(ann.sum) || errSize != nil || errEntries != nil {
		return nil, ann, refused(ref, "its manifest lacks hoist's annotations (name %q, digest %q, sum %q, size %q, entries %q)",
			ann.name, ann.digest, ann.sum, a[annSize], a[annEntries])
	}
	return &m, ann, nil
}

func isHex64(s string) bool {
	_, err := hex.DecodeString(s)
	return len(s) == 64 && err == nil && strings.ToLower(s) == s
}

// parseMode reads a mode as ReuseName writes it (octal, no leading zero,
// permission and setuid, setgid and sticky bits).
func parseMode(s string) (fs.FileMode, bool) {
	n, err := strconv.ParseUint(s, 8, 32)
	if err != nil || n > 0o7777 {
		return 0, false
	}
	m := fs.FileMode(n)&fs.ModePerm | modeBits(int64(n))
	return m, octalMode(m) == s
}

// fetchPack fetches the pack into a private temporary file, reading its
// entries as it arrives (readPack), and checks its length and digest.
func (a *Artifact) fetchPack(ctx context.Context, t oras.ReadOnlyTarget, ref OCIRef, pack ocispec.Descriptor, files map[string]int64) (*os.File, []packItem, error) {
	tmp, err := os.CreateTemp("", "hoist-pack-")
	if err != nil {
		return nil, nil, err
	}
	rc, err := t.Fetch(ctx, pack)
	if err != nil {
		return tmp, nil, fmt.Errorf("fetching the pack %s: %w", pack.Digest, err)
	}
	defer rc.Close()
	h := sha256.New()
	n := &countingWriter{}
	body := io.TeeReader(io.LimitReader(rc, pack.Size+1), io.MultiWriter(tmp, h, n))
	items, err := a.readPack(ctx, body, ref, files)
	var pe *packError
	if err != nil && !errors.As(err, &pe) {
		return tmp, nil, err
	}
	// What follows the end of the archive is hashed too; and a pack that
	// does not read as hoist's may be a blob the registry damaged.
	if _, cerr := io.Copy(io.Discard, body); cerr != nil {
		return tmp, nil, fmt.Errorf("fetching the pack %s: %w", pack.Digest, cerr)
	}
	if n.n != pack.Size || sha256Digest([32]byte(h.Sum(nil))) != pack.Digest {
		return tmp, nil, refused(ref, "the pack served is not the blob the manifest names (%d bytes of %d, sha256 %x)", n.n, pack.Size, h.Sum(nil))
	}
	return tmp, items, err
}
