package store

import (
	"archive/tar"
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"

	"github.com/hoistdev/hoist/lock"
	"github.com/hoistdev/hoist/shellcmd"
	"github.com/hoistdev/hoist/transport"
)

// Via is a published runtime that hosts fetch from its registry
// (docs/store.md, "Pushing through a registry"): read and verified on this
// machine (Registry.Read), with the credential the hosts are given and the
// CA they verify the registry with.
type Via struct {
	Published *Published
	// URL is the repository's blob endpoint the hosts fetch from,
	// "https://REGISTRY/v2/REPO/blobs/" (http:// for an insecure one).
	URL string
	// Plain: the registry is spoken to over plain HTTP
	// (RegistryOptions.Insecure).
	Plain bool
	// CA is the PEM of RegistryOptions.CAFile, shipped to the hosts; nil
	// when they use their system's CAs.
	CA []byte

	reg  *Registry
	mu   sync.Mutex
	cred PullCredential
}

// credentialLeft is how long a credential must still be good for to be
// handed to a host; one closer to its end is asked for again.
const credentialLeft = 10 * time.Second

// Via reads the runtime published at ref (Read) and gets what hosts need
// to fetch it: a pull credential (PullCredential) and the CA file's PEM.
func (r *Registry) Via(ctx context.Context, ref OCIRef, o ReadOptions) (*Via, error) {
	pub, err := r.Read(ctx, ref, o)
	if err != nil {
		return nil, err
	}
	v := &Via{Published: pub, reg: r, Plain: r.c.PlainHTTP(ref.Registry)}
	scheme := "https"
	if v.Plain {
		scheme = "http"
	}
	v.URL = scheme + "://" + ref.Registry + "/v2/" + ref.Repository + "/blobs/"
	if r.o.CAFile != "" {
		if v.CA, err = os.ReadFile(r.o.CAFile); err != nil {
			return nil, err
		}
		if bytes.ContainsAny(v.CA, "\\`$\"\x00") {
			return nil, fmt.Errorf("--registry-ca %s: not a plain PEM file", r.o.CAFile)
		}
	}
	if _, err := v.credential(ctx); err != nil {
		return nil, err
	}
	return v, nil
}

// credential is the pull credential for a host, asked for again when it
// ends within credentialLeft.
func (v *Via) credential(ctx context.Context) (PullCredential, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.cred.Scheme != "" && (v.cred.Expires.IsZero() || time.Until(v.cred.Expires) > credentialLeft) {
		return v.cred, nil
	}
	c, err := v.reg.PullCredential(ctx, v.Published.Ref)
	if err != nil {
		return c, err
	}
	// It travels in a shell word and a tool's configuration line: a
	// token or base64 never holds anything else.
	if strings.ContainsFunc(c.Value, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-._~+/=", r))
	}) {
		return c, fmt.Errorf("%s: the registry's credential holds characters no token has; hoist does not hand it to hosts", v.Published.Ref.Registry)
	}
	v.cred = c
	return c, nil
}

// header is the Authorization value a host sends, "" for none.
func (c PullCredential) header() string {
	if c.Scheme == "" {
		return ""
	}
	return c.Scheme + " " + c.Value
}

// archiver writes the archive a push uploads: an artifact's, or a
// published runtime's from its registry.
type archiver interface {
	writeTar(ctx context.Context, w io.Writer, pool map[string]string) error
	archiveSize(pool map[string]string) (int64, error)
	source() string
	runtimeID() string
}

func (a *Artifact) source() string    { return a.Source }
func (a *Artifact) runtimeID() string { return a.ID() }

// pushSource is what a push installs, from an artifact or a published
// runtime.
type pushSource struct {
	id, name, digest string
	size             int64
	entries          int
	reuse            string
	arch             archiver
}

func sourceOf(a *Artifact, via *Via) (pushSource, error) {
	switch {
	case a != nil && via != nil && a.ID() != via.Published.ID:
		return pushSource{}, fmt.Errorf("%s holds %s, not %s; publish it there first", via.Published.Ref, via.Published.ID, a.ID())
	case a != nil:
		return pushSource{id: a.ID(), name: a.Name, digest: a.Digest, size: a.Size, entries: len(a.Entries), reuse: a.reusable(), arch: a}, nil
	case via != nil:
		p := via.Published
		return pushSource{id: p.ID, name: p.Name, digest: p.Digest, size: p.Size, entries: p.Entries, reuse: p.Reusable(), arch: via}, nil
	}
	return pushSource{}, errors.New("push: nothing to push")
}

// fetch is a push's second command through a registry (h_op_fetch): the
// host fetches the pack into the stage's archive and the file blobs it
// did not copy from runtimes it has into the pool, verifying each, and
// links its copies where the pack links to them. done: the stage holds the
// pack and every file it links to, of SHA-256 sum; else st.pool gains what
// was fetched, for the upload that follows.
func (s *Store) fetch(ctx context.Context, p shellcmd.Params, opts PushOptions, st staged, res *PushResult) (sum string, done bool, err error) {
	v := opts.Via
	pub := v.Published
	cred, err := v.credential(ctx)
	if err != nil {
		return "", false, err
	}
	var list strings.Builder
	for _, name := range slices.Sorted(maps.Keys(st.pool)) {
		fmt.Fprintf(&list, "link %s %s\n", name, st.pool[name])
	}
	asked := map[string][]string{} // hex to the modes asked for
	for _, f := range pub.Files {
		hexSum := strings.TrimPrefix(f.Digest, "sha256:")
		var modes []string
		for _, m := range f.Modes {
			if _, reused := st.pool[hexSum+"-"+octalMode(m)]; !reused {
				modes = append(modes, octalMode(m))
			}
		}
		if len(modes) > 0 {
			asked[hexSum] = modes
			fmt.Fprintf(&list, "blob %s %d %s\n", hexSum, f.Size, strings.Join(modes, ","))
		}
	}
	fmt.Fprintf(&list, "pack %s %d\n", pub.Sum, pub.Pack.Size)
	p.FetchURL, p.Fetch, p.FetchAuth, p.FetchCA, p.FetchPlain = v.URL, list.String(), cred.header(), string(v.CA), v.Plain
	r, err := s.wire().Exec(ctx, shellcmd.Render(shellcmd.OpFetch, p), opts.Events, opts.Stop)
	res.Execs++
	if err != nil {
		return "", false, err
	}
	if r.Last().Verb != shellcmd.VerbFetchEnd {
		return "", false, s.err(r, "push")
	}
	packed := false
	for _, vd := range r.Verdicts {
		switch vd.Verb {
		case shellcmd.VerbFetched:
			h, n, tries := vd.Fetched()
			res.Fetched++
			res.FetchedBytes += n
			res.FetchResumes += max(tries-1, 0)
			if h == pub.Sum {
				packed = true
			}
			for _, m := range asked[h] {
				st.pool[h+"-"+m] = h + "-" + m
			}
			delete(asked, h)
		case shellcmd.VerbNoFetch:
			why, detail := vd.NoFetch()
			res.Fallback = why + ": " + detail
		case shellcmd.VerbFetchEnd:
			res.FetchTool = vd.FetchEnd()
		}
	}
	if packed && len(asked) == 0 && res.Fallback == "" {
		return pub.Sum, true, nil
	}
	if res.Fallback == "" {
		res.Fallback = "the host did not say it fetched every blob"
	}
	return "", false, nil
}

func digestOf(s string) digest.Digest { return digest.Digest(s) }

// The archive of a published runtime, for a host that could not fetch all
// of it: the pack's entries, with the files the pool holds linked to it
// and the others' bytes fetched from the registry, each verified against
// its digest before its last bytes are written.

func (v *Via) source() string    { return v.Published.Ref.String() }
func (v *Via) runtimeID() string { return v.Published.ID }

// archiveSize is the size of the archive writeTar writes with pool.
func (v *Via) archiveSize(pool map[string]string) (int64, error) {
	var n int64
	pk := newPacker(nil, v.Published.entries)
	pk.pool, pk.size = pool, &n
	if err := pk.put(pk.treeHeader()); err != nil {
		return 0, err
	}
	for _, it := range v.Published.items {
		if err := pk.header(it.e, it.mtime); err != nil {
			return 0, err
		}
	}
	err := pk.close()
	return n, err
}

// writeTar writes the runtime's archive with pool: the pack's entries in
// its order, fetched again (and checked against its digest), each file
// that the pool lacks inline, its bytes from its blob.
func (v *Via) writeTar(ctx context.Context, w io.Writer, pool map[string]string) error {
	pub := v.Published
	repo, err := v.reg.c.Repository(pub.Ref.reference())
	if err != nil {
		return err
	}
	desc := func(b Blob, mt string) ocispec.Descriptor {
		return ocispec.Descriptor{MediaType: mt, Digest: digestOf(b.Digest), Size: b.Size}
	}
	rc, err := repo.Fetch(ctx, desc(pub.Pack, PackMediaType))
	if err != nil {
		return v.reg.describe(pub.Ref, fmt.Errorf("fetching the pack: %w", err))
	}
	defer rc.Close()
	ph := sha256.New()
	hashed := io.TeeReader(rc, ph)
	tr := tar.NewReader(transport.ContextReader(ctx, bufio.NewReaderSize(hashed, 1<<16)))
	pk := newPacker(w, pub.entries)
	pk.pool = pool
	if err := pk.put(pk.treeHeader()); err != nil {
		return err
	}
	sizes := map[string]int64{}
	for _, f := range pub.Files {
		sizes[strings.TrimPrefix(f.Digest, "sha256:")] = f.Size
	}
	for _, it := range pub.items {
		if err := pk.header(it.e, it.mtime); err != nil {
			return err
		}
		if it.e.Type != 'f' || it.e.link != "" || pk.linked {
			continue
		}
		// Inline in the pack: its next plain file of that name.
		inPack := false
		for {
			hd, err := tr.Next()
			if err != nil {
				break
			}
			if hd.Name == TreeDir+"/"+it.e.Path {
				inPack = hd.Typeflag == tar.TypeReg
				break
			}
		}
		if inPack {
			if _, err := io.CopyN(pk, tr, it.e.Size); err != nil {
				return fmt.Errorf("fetching the pack again: %w", err)
			}
			continue
		}
		hexSum := hex.EncodeToString(it.e.Sum[:])
		if _, blob := sizes[hexSum]; !blob {
			return refused(pub.Ref, "the pack served again lacks %s", it.e.Path)
		}
		if err := v.copyBlob(ctx, repo, pk, Blob{Digest: "sha256:" + hexSum, Size: sizes[hexSum]}); err != nil {
			return err
		}
	}
	if _, err := io.Copy(io.Discard, hashed); err != nil {
		return fmt.Errorf("fetching the pack again: %w", err)
	}
	if hex.EncodeToString(ph.Sum(nil)) != pub.Sum {
		return refused(pub.Ref, "the pack served again is not the one read first")
	}
	return pk.close()
}

// copyBlob writes blob b to w, fetched from the registry; its last
// verifyTail bytes only once its SHA-256 is b's: an archive with a wrong
// file is never whole.
func (v *Via) copyBlob(ctx context.Context, repo interface {
	Fetch(context.Context, ocispec.Descriptor) (io.ReadCloser, error)
}, w io.Writer, b Blob) error {
	rc, err := repo.Fetch(ctx, ocispec.Descriptor{MediaType: FileMediaType, Digest: digestOf(b.Digest), Size: b.Size})
	if err != nil {
		return v.reg.describe(v.Published.Ref, fmt.Errorf("fetching %s: %w", b.Digest, err))
	}
	defer rc.Close()
	h := sha256.New()
	body := transport.ContextReader(ctx, rc)
	head := max(b.Size-verifyTail, 0)
	if _, err := io.CopyN(io.MultiWriter(w, h), body, head); err != nil {
		return fmt.Errorf("fetching %s: %w", b.Digest, err)
	}
	tail := make([]byte, b.Size-head)
	if _, err := io.ReadFull(body, tail); err != nil {
		return fmt.Errorf("fetching %s: %w", b.Digest, err)
	}
	h.Write(tail)
	if "sha256:"+hex.EncodeToString(h.Sum(nil)) != b.Digest {
		return refused(v.Published.Ref, "the blob %s served has another digest (a tampered mirror?); not sent", b.Digest)
	}
	_, err = w.Write(tail)
	return err
}

// RegistryCheck is the doctor's registry item (hoist doctor --via):
// whether the host can reach the registry ref names as a push through it
// would fetch from it (the same tool, the same TLS checks, the CA of
// RegistryOptions.CAFile), and how long a request to its /v2/ takes. It
// hands the host no credential and writes nothing there.
func (s *Store) RegistryCheck(ctx context.Context, r *Registry, ref OCIRef) (lock.Check, error) {
	p := s.wire().Params()
	plain := r.c.PlainHTTP(ref.Registry)
	scheme := "https"
	if plain {
		scheme = "http"
	}
	p.FetchURL, p.FetchPlain = scheme+"://"+ref.Registry+"/v2/"+ref.Repository+"/blobs/", plain
	if r.o.CAFile != "" {
		ca, err := os.ReadFile(r.o.CAFile)
		if err != nil {
			return lock.Check{}, err
		}
		p.FetchCA = string(ca)
	}
	reply, err := s.wire().Exec(ctx, shellcmd.Render(shellcmd.OpReach, p), lock.Events{}, nil)
	if err != nil {
		return lock.Check{}, err
	}
	v := reply.Last()
	if v.Verb != shellcmd.VerbCheck {
		return lock.Check{}, s.err(reply, "doctor")
	}
	c := v.Check()
	ck := lock.Check{Name: c.Name, Status: lock.CheckStatus(c.Status), Value: c.Value, Detail: c.Detail}
	switch ck.Status {
	case lock.CheckOK:
	case lock.CheckFail:
		ck.Fix = "let the host reach " + ref.Registry + " over " + scheme + ", with curl (or wget) installed; pushes through it send this host the bytes over SSH meanwhile"
	default:
		ck.Status, ck.Detail = lock.CheckFail, "the host said "+c.Status+": "+c.Detail
	}
	return ck, nil
}
