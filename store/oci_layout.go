package store

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/opencontainers/go-digest"
	specs "github.com/opencontainers/image-spec/specs-go"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
)

// ociBlob is a blob of a published runtime and where its bytes come from.
type ociBlob struct {
	desc ocispec.Descriptor
	open func() (io.ReadCloser, error)
}

// ociLayout is a runtime laid out for a registry: the pack, the files that
// are blobs of their own, the empty config, and the manifest that names
// them. Close removes its temporary files.
type ociLayout struct {
	config   ociBlob
	pack     ociBlob
	files    []ociBlob // by digest
	manifest []byte
	desc     ocispec.Descriptor // the manifest's
	dir      string
}

// Close removes the layout's temporary files.
func (l *ociLayout) Close() error { return os.RemoveAll(l.dir) }

// blobs are all the blobs the manifest names, the config first.
func (l *ociLayout) blobs() []ociBlob { return append([]ociBlob{l.config, l.pack}, l.files...) }

// poolLinks is the pool a pack is written against: every reusable file,
// found under its own ReuseName.
func poolLinks(entries []Entry) map[string]string {
	pool := map[string]string{}
	for _, e := range entries {
		if e.reusable() {
			n := ReuseName(e.Sum, e.Mode)
			pool[n] = n
		}
	}
	return pool
}

// ociLayout lays a out for a registry, in a private temporary directory:
//
//   - every reusable file (Entry.reusable: ReuseMin or more) is a blob of its
//     own, one per content, whose digest is the file's SHA-256 (the pool
//     name's), annotated with the modes it is installed with;
//   - the pack is the archive push sends to a host whose stage holds
//     every one of those files at pool/<ReuseName>: the same bytes for the
//     same source, so a host that fetched them into its pool verifies it
//     by its digest (the push's Sum) and promotes it as a push's;
//   - the manifest, of type ArtifactType, names the empty config, the
//     pack and the file blobs (in digest order), and says the runtime's
//     id, name, digest, the pack's Sum, size and entries. Its bytes
//     depend on nothing else: the same tree from the same source makes
//     the same manifest.
//
// The files of a directory stay where they are, and are hashed again as
// they are sent; those of an archive are kept in the temporary directory
// as the pack is written, which checks the whole archive against its
// digest.
func (a *Artifact) ociLayout(ctx context.Context) (_ *ociLayout, err error) {
	dir, err := os.MkdirTemp("", "hoist-publish-")
	if err != nil {
		return nil, err
	}
	l := &ociLayout{dir: dir}
	defer func() {
		if err != nil {
			l.Close()
		}
	}()
	pool := poolLinks(a.Entries)
	// One blob per content: its first path, and every mode it has.
	type reused struct {
		e     Entry
		modes []string
	}
	byContent := map[[32]byte]*reused{}
	for _, e := range a.Entries {
		if !e.reusable() {
			continue
		}
		s := byContent[e.Sum]
		if s == nil {
			s = &reused{e: e}
			byContent[e.Sum] = s
		}
		if m := octalMode(e.Mode); !slices.Contains(s.modes, m) {
			s.modes = append(s.modes, m)
		}
	}

	var keep func([32]byte) (io.WriteCloser, error)
	if !a.dir {
		kept := map[[32]byte]bool{}
		keep = func(sum [32]byte) (io.WriteCloser, error) {
			if kept[sum] {
				return nil, nil
			}
			kept[sum] = true
			return os.OpenFile(filepath.Join(dir, hex.EncodeToString(sum[:])), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		}
	}
	packPath := filepath.Join(dir, "pack")
	f, err := os.OpenFile(packPath, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, err
	}
	h, n := sha256.New(), &countingWriter{}
	bw := bufio.NewWriterSize(f, 1<<16)
	err = a.writeTarKeeping(ctx, io.MultiWriter(bw, h, n), pool, keep)
	if err == nil {
		err = bw.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, err
	}
	var packSum [32]byte
	copy(packSum[:], h.Sum(nil))
	l.pack = ociBlob{
		desc: ocispec.Descriptor{MediaType: PackMediaType, Digest: sha256Digest(packSum), Size: n.n},
		open: verifiedOpener(packPath, packSum, n.n),
	}
	l.config = ociBlob{desc: emptyConfig(), open: func() (io.ReadCloser, error) {
		return io.NopCloser(strings.NewReader("{}")), nil
	}}
	for _, s := range byContent {
		src := filepath.Join(a.root, filepath.FromSlash(s.e.Path))
		if !a.dir {
			src = filepath.Join(dir, hex.EncodeToString(s.e.Sum[:]))
		}
		slices.Sort(s.modes)
		l.files = append(l.files, ociBlob{
			desc: ocispec.Descriptor{MediaType: FileMediaType, Digest: sha256Digest(s.e.Sum), Size: s.e.Size,
				Annotations: map[string]string{annModes: strings.Join(s.modes, ",")}},
			open: verifiedOpener(src, s.e.Sum, s.e.Size),
		})
	}
	slices.SortFunc(l.files, func(x, y ociBlob) int { return strings.Compare(string(x.desc.Digest), string(y.desc.Digest)) })

	m := ocispec.Manifest{
		Versioned:    specs.Versioned{SchemaVersion: 2},
		MediaType:    ocispec.MediaTypeImageManifest,
		ArtifactType: ArtifactType,
		Config:       l.config.desc,
		Annotations: map[string]string{
			annID:      a.ID(),
			annName:    a.Name,
			annDigest:  a.Digest,
			annSum:     hex.EncodeToString(packSum[:]),
			annSize:    strconv.FormatInt(a.Size, 10),
			annEntries: strconv.Itoa(len(a.Entries)),
		},
	}
	m.Layers = append(m.Layers, l.pack.desc)
	for _, b := range l.files {
		m.Layers = append(m.Layers, b.desc)
	}
	if l.manifest, err = json.Marshal(m); err != nil {
		return nil, err
	}
	l.desc = ocispec.Descriptor{MediaType: m.MediaType, ArtifactType: ArtifactType, Digest: digest.FromBytes(l.manifest), Size: int64(len(l.manifest))}
	return l, nil
}

func sha256Digest(sum [32]byte) digest.Digest {
	return digest.NewDigestFromEncoded(digest.SHA256, hex.EncodeToString(sum[:]))
}

// emptyConfig is the OCI empty descriptor ({}), which an artifact without
// a config of its own names; the registry must hold its blob too.
func emptyConfig() ocispec.Descriptor {
	d := ocispec.DescriptorEmptyJSON
	d.Data = slices.Clone(d.Data)
	return d
}

// octalMode is m as ReuseName and chmod write it.
func octalMode(m fs.FileMode) string { return strconv.FormatUint(uint64(m.Perm()|specialBits(m)), 8) }

// verifiedOpener opens the file at p, which must hold size bytes of SHA-256
// sum (see verified).
func verifiedOpener(p string, sum [32]byte, size int64) func() (io.ReadCloser, error) {
	return func() (io.ReadCloser, error) {
		f, err := os.Open(p)
		if err != nil {
			return nil, err
		}
		return &verified{f: f, h: sha256.New(), left: size, sum: sum, name: p}, nil
	}
}

// errSourceChanged: a file is not what it was when its digest was taken.
var errSourceChanged = errors.New("changed while it was being read")

// verifyTail is how much of a blob's end verified holds back until the
// whole blob has been hashed.
const verifyTail = 64 << 10

// verified reads a file that must hold left bytes of SHA-256 sum, and
// fails before handing over its last bytes unless it does: a registry
// never receives the whole of a file that changed since it was digested,
// whether or not it checks the digest itself.
type verified struct {
	f    *os.File
	h    hash.Hash
	left int64
	sum  [32]byte
	tail []byte // the checked end, being handed over
	name string
}

func (v *verified) Read(p []byte) (int, error) {
	if v.tail != nil {
		if len(v.tail) == 0 {
			return 0, io.EOF
		}
		n := copy(p, v.tail)
		v.tail = v.tail[n:]
		return n, nil
	}
	if v.left <= verifyTail {
		buf := make([]byte, v.left+1)
		n, err := io.ReadFull(v.f, buf)
		if err != nil && err != io.ErrUnexpectedEOF && err != io.EOF {
			return 0, err
		}
		v.h.Write(buf[:n])
		if int64(n) != v.left || [32]byte(v.h.Sum(nil)) != v.sum {
			return 0, fmt.Errorf("%s %w; publish again", v.name, errSourceChanged)
		}
		v.tail = buf[:n]
		return v.Read(p)
	}
	if int64(len(p)) > v.left-verifyTail {
		p = p[:v.left-verifyTail]
	}
	n, err := v.f.Read(p)
	v.h.Write(p[:n])
	v.left -= int64(n)
	if err == io.EOF {
		return n, fmt.Errorf("%s %w (it is shorter); publish again", v.name, errSourceChanged)
	}
	return n, err
}

func (v *verified) Close() error { return v.f.Close() }
