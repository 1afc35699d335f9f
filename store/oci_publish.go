package store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"oras.land/oras-go/v2/registry"
	"oras.land/oras-go/v2/registry/remote"
)

// PublishOptions configure [Registry.Publish].
type PublishOptions struct {
	// MountFrom names other repositories of the same registry that may
	// hold the runtime's blobs: one the target lacks is mounted from
	// there (cross-repository mount, without its bytes) when the
	// registry allows it. Repositories earlier publishes put a blob in
	// are tried first.
	MountFrom []string
	// Record is the file in which publishes are remembered for later
	// mounts; "" is the user's cache directory (hoist/published/),
	// NoRecord none.
	Record string
	// Parallel is how many blobs are checked and sent at once; zero
	// means 4.
	Parallel int
}

// PublishResult says what a publish did.
type PublishResult struct {
	// Ref names the manifest: the repository, the tag it was pushed
	// under, and its digest.
	Ref    OCIRef
	ID     string
	Name   string
	Digest string // the runtime's (canonical form), hex
	Sum    string // the pack's SHA-256, hex
	// Blobs counts the blobs the manifest names (the empty config, the
	// pack, the files); of them, Present were in the repository already,
	// Mounted were linked from another repository, and Uploaded were
	// sent, UploadedBytes in all.
	Blobs, Present, Mounted, Uploaded int
	UploadedBytes                     int64
	// PackSize is the size of the pack, ManifestSize the manifest's.
	PackSize, ManifestSize int64
}

// Publish stores a in the registry under to (its tag, or the runtime id
// when it has none; a digest is refused: the manifest makes its own), laid
// out as ociLayout says. Blobs the repository holds already are not sent
// (HEAD first); a blob it lacks that another repository holds (one an
// earlier publish put it in, or opts.MountFrom) is mounted from there. The
// manifest is put last, once every blob it names is there. Nothing is
// verified on any host: reading the runtime back ([Registry.Read]) is
// what push does.
func (r *Registry) Publish(ctx context.Context, a *Artifact, to OCIRef, opts PublishOptions) (*PublishResult, error) {
	if to.Digest != "" {
		return nil, fmt.Errorf("%s: publish makes the digest; give a tag, or none (the runtime id)", to)
	}
	if to.Tag == "" {
		if strings.Contains(a.ID(), "+") {
			return nil, fmt.Errorf("%s: the id %s cannot be a tag (a tag holds no +); give one, oci://%s/%s:TAG", to, a.ID(), to.Registry, to.Repository)
		}
		to.Tag = a.ID()
	}
	for _, from := range opts.MountFrom {
		if err := (registry.Reference{Registry: to.Registry, Repository: from}).ValidateRepository(); err != nil {
			return nil, fmt.Errorf("--mount-from %q: %v; give a repository of %s", from, err, to.Registry)
		}
	}
	l, err := a.ociLayout(ctx)
	if err != nil {
		return nil, err
	}
	defer l.Close()
	repo, err := r.c.Repository(to.reference())
	if err != nil {
		return nil, err
	}
	res := &PublishResult{ID: a.ID(), Name: a.Name, Digest: a.Digest, Sum: l.pack.desc.Digest.Encoded(),
		PackSize: l.pack.desc.Size, ManifestSize: l.desc.Size}
	rec := loadRecord(to.Registry, opts.Record)
	blobs := l.blobs()
	res.Blobs = len(blobs)

	n := opts.Parallel
	if n <= 0 {
		n = 4
	}
	var (
		wg       sync.WaitGroup
		sem      = make(chan struct{}, n)
		mu       sync.Mutex
		firstErr error
		counts   [3]atomic.Int64 // present, mounted, uploaded
		bytesUp  atomic.Int64
	)
	pubCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	for _, b := range blobs {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			if pubCtx.Err() != nil {
				return
			}
			how, err := r.putBlob(pubCtx, repo, to, b, mountSources(to.Repository, rec.Blobs[b.desc.Digest.String()], opts.MountFrom))
			if err != nil {
				mu.Lock()
				if firstErr == nil {
					firstErr = err
					cancel()
				}
				mu.Unlock()
				return
			}
			counts[how].Add(1)
			if how == uploaded {
				bytesUp.Add(b.desc.Size)
			}
		})
	}
	wg.Wait()
	if firstErr != nil {
		if errors.Is(firstErr, errSourceChanged) && a.dir {
			forgetDigests(a.root)
		}
		return res, r.describe(to, firstErr)
	}
	res.Present, res.Mounted, res.Uploaded = int(counts[present].Load()), int(counts[mounted].Load()), int(counts[uploaded].Load())
	res.UploadedBytes = bytesUp.Load()

	if err := repo.PushReference(ctx, l.desc, bytes.NewReader(l.manifest), to.Tag); err != nil {
		return res, r.describe(to, fmt.Errorf("putting the manifest: %w", err))
	}
	to.Digest = l.desc.Digest.String()
	res.Ref = to
	digests := make([]string, len(blobs))
	for i, b := range blobs {
		digests[i] = b.desc.Digest.String()
	}
	rec.save(to.Repository, digests)
	return res, nil
}

// How a blob came to be in the repository.
const (
	present = iota
	mounted
	uploaded
)

// mountSources lists the repositories to mount a blob from, in order: the
// one a publish last put it in, then those given; never the target.
func mountSources(target, recorded string, given []string) []string {
	var from []string
	for _, s := range append([]string{recorded}, given...) {
		if s != "" && s != target && !slices.Contains(from, s) {
			from = append(from, s)
		}
	}
	return from
}

// putBlob makes b present in repo: a HEAD says whether it is; if not, it
// is mounted from the first of from that holds it (each but the last is
// asked with a HEAD first; a mount the registry cannot make opens an
// upload, which carries the bytes at no extra round trip), else uploaded.
func (r *Registry) putBlob(ctx context.Context, repo *remote.Repository, to OCIRef, b ociBlob, from []string) (int, error) {
	ok, err := repo.Exists(ctx, b.desc)
	if err != nil {
		return 0, fmt.Errorf("HEAD %s: %w", b.desc.Digest, err)
	}
	if ok {
		return present, nil
	}
	for i, src := range from {
		if i < len(from)-1 {
			other := to
			other.Repository = src
			o, err := r.c.Repository(other.reference())
			if err != nil {
				continue
			}
			if has, err := o.Exists(ctx, b.desc); err != nil || !has {
				continue
			}
		}
		sent := false
		err := repo.Mount(ctx, b.desc, src, func() (io.ReadCloser, error) {
			sent = true
			return b.open()
		})
		switch {
		case err != nil:
			return 0, fmt.Errorf("mounting %s from %s: %w", b.desc.Digest, src, err)
		case sent:
			return uploaded, nil
		}
		return mounted, nil
	}
	rc, err := b.open()
	if err != nil {
		return 0, err
	}
	defer rc.Close()
	if err := repo.Push(ctx, b.desc, rc); err != nil {
		return 0, fmt.Errorf("sending %s (%s): %w", b.desc.Digest, bytesize(b.desc.Size), err)
	}
	return uploaded, nil
}

// describe says which registry and repository err comes from.
func (r *Registry) describe(ref OCIRef, err error) error {
	return r.c.Describe(ref.Registry+"/"+ref.Repository, err)
}
