package store

import (
	"archive/tar"
	"archive/zip"
	"bufio"
	"cmp"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/hoistdev/hoist/transport"
)

// The archive's layout: the runtime under TreeDir, and a list of directory
// modes to apply after extraction in ModesFile, both relative to the stage.
const (
	TreeDir   = "tree"
	ModesFile = "modes"
	// FilesFile lists "<sha256> <mode> <path>" for every file of the runtime;
	// the host keeps it as runtimes/.files/<id>, where later pushes find
	// the files it already has.
	FilesFile = "files"
	// PoolDir holds, in a stage, the files the host copied from runtimes
	// it has (pool/<id>/<path>); the archive links to them.
	PoolDir = "pool"
)

const blockSize = 512 // a tar block

// readArchive reads an archive file's entries, in whichever format its
// first bytes say; with w set it also writes each validated entry to w (the
// second pass, when uploading).
func (a *Artifact) readArchive(ctx context.Context, w *packer) error {
	f, err := os.Open(a.root)
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if fi.Size() == 0 {
		return fmt.Errorf("%w: %s is an empty file, not an archive; build it again", ErrArtifact, a.Source)
	}
	br := bufio.NewReaderSize(f, 1<<16)
	head, err := br.Peek(blockSize)
	if err != nil && err != io.EOF {
		return err
	}
	ft := sniff(head)
	switch {
	case ft == formatUnknown:
		return a.unsupported()
	case ft == formatZip:
		return a.readZip(ctx, f, fi.Size(), w)
	case ft == formatXz && !xzEnded(f, fi.Size()):
		return a.damaged(fmt.Errorf("no xz stream footer at its end: %w", io.ErrUnexpectedEOF))
	}
	r, done, err := decoder(ft, br)
	if err != nil {
		return a.damaged(err)
	}
	defer done()
	return a.readTar(ctx, r, ft != formatTar, w)
}

// readTar reads a tar stream's entries, and writes them to w if set.
// compressed says the stream is decoded, and the rest of the compressed
// stream is read too.
func (a *Artifact) readTar(ctx context.Context, r io.Reader, compressed bool, w *packer) error {
	r = transport.ContextReader(ctx, r)
	cr := &countingReader{r: r}
	tr := tar.NewReader(cr)
	files := map[string]Entry{}
	var end int64 // where the last entry, padding included, ends
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return a.damaged(err)
		}
		// A sparse entry's holes read as zeros from tr, not from r.
		body := transport.ContextReader(ctx, tr)
		if err := a.tarEntry(h, body, files, w); err != nil {
			return err
		}
		// Whatever of the entry is left unread goes now, so that the
		// count says where it ends: entries start on block boundaries.
		if _, err := io.Copy(io.Discard, body); err != nil {
			return a.damaged(err)
		}
		end = (cr.n + blockSize - 1) / blockSize * blockSize
	}
	// archive/tar takes an archive that stops at a block boundary, or in
	// the last entry's padding, for a finished one. It is not: the end of
	// an archive is marked with zero blocks, and at least one must be there.
	if cr.n-end < blockSize {
		return fmt.Errorf("%w: %s has no end-of-archive marker: it is cut short; build it again", ErrArtifact, a.Source)
	}
	// A compressed stream is only known whole (length and checksum) at its
	// end, which the tar reader stops short of.
	if compressed {
		if _, err := io.Copy(io.Discard, r); err != nil {
			return a.damaged(err)
		}
	}
	return nil
}

// tarEntry reads one archive entry into a.Entries, and writes it to w if set.
func (a *Artifact) tarEntry(h *tar.Header, tr io.Reader, files map[string]Entry, w *packer) error {
	// git archive writes a pax global header (the commit id): metadata,
	// not an entry of the tree.
	if h.Typeflag == tar.TypeXGlobalHeader {
		return nil
	}
	p, err := cleanPath(h.Name)
	if err != nil || p == "." {
		return err
	}
	e := Entry{Path: p, Mode: fs.FileMode(h.Mode) & fs.ModePerm, mtime: h.ModTime}
	e.Mode |= modeBits(h.Mode)
	switch h.Typeflag {
	case tar.TypeDir:
		e.Type = 'd'
	// archive/tar reports old-style regular files as TypeReg too, and
	// reads a sparse file's holes as zeros: its size is the logical one,
	// holes included, which is what it counts against the limit, and what
	// the host receives (a full file).
	case tar.TypeReg, tar.TypeGNUSparse:
		e.Type, e.Size = 'f', h.Size
		if err := a.claim(p, h.Size); err != nil {
			return err
		}
	case tar.TypeSymlink:
		e.Type, e.Target = 'l', h.Linkname
	case tar.TypeLink:
		lp, err := cleanPath(h.Linkname)
		if err != nil {
			return err
		}
		first, ok := files[lp]
		if !ok {
			return fmt.Errorf("%w: %s is a hard link to %s, which is not a file before it in the archive", ErrArtifact, p, h.Linkname)
		}
		e.Type, e.Size, e.Sum, e.link, e.Mode = 'f', first.Size, first.Sum, lp, first.Mode
		if err := a.claim(p, e.Size); err != nil {
			return err
		}
	default:
		return fmt.Errorf("%w: %s is not a file, directory or symlink (tar type %q)", ErrArtifact, p, h.Typeflag)
	}
	described := e.Mode // a hard link shares it, and is stripped in its own name
	a.settle(&e)
	if w != nil {
		if err := w.header(e, h.ModTime); err != nil {
			return err
		}
	}
	if e.Type == 'f' && e.link == "" {
		hw := sha256.New()
		body, done, err := w.body(hw, e)
		if err != nil {
			return err
		}
		if _, err := io.Copy(body, tr); err != nil {
			return a.damaged(fmt.Errorf("%s: %w", p, err))
		}
		if err := done(); err != nil {
			return err
		}
		copy(e.Sum[:], hw.Sum(nil))
		first := e
		first.Mode = described
		files[p] = first
	}
	a.Entries = append(a.Entries, e)
	return nil
}

// modeBits turns a tar header's setuid, setgid and sticky bits into fs ones.
func modeBits(m int64) fs.FileMode {
	var s fs.FileMode
	if m&0o4000 != 0 {
		s |= fs.ModeSetuid
	}
	if m&0o2000 != 0 {
		s |= fs.ModeSetgid
	}
	if m&0o1000 != 0 {
		s |= fs.ModeSticky
	}
	return s
}

// damaged describes an archive that could not be read to its end.
func (a *Artifact) damaged(err error) error {
	var ce *codecError
	switch {
	case errors.Is(err, io.ErrUnexpectedEOF):
		return fmt.Errorf("%w: %s is cut short (%v); build it again", ErrArtifact, a.Source, err)
	case errors.Is(err, tar.ErrHeader):
		return fmt.Errorf("%w: %s is damaged or not a tar archive (%v); build it again", ErrArtifact, a.Source, err)
	case errors.Is(err, zip.ErrFormat):
		// A zip's directory is at its end: a cut one has none.
		return fmt.Errorf("%w: %s is damaged or cut short (%v); build it again", ErrArtifact, a.Source, err)
	case errors.Is(err, zip.ErrAlgorithm):
		return fmt.Errorf("%w: %s uses a compression method hoist cannot read (%v); make it with deflate", ErrArtifact, a.Source, err)
	case errors.As(err, &ce), errors.Is(err, zip.ErrChecksum):
		return fmt.Errorf("%w: %s is damaged (%v); build it again", ErrArtifact, a.Source, err)
	}
	return fmt.Errorf("%s: %w", a.Source, err)
}

// countingWriter counts the bytes written to it.
type countingWriter struct{ n int64 }

func (c *countingWriter) Write(p []byte) (int, error) {
	c.n += int64(len(p))
	return len(p), nil
}

// countingReader counts the bytes the tar reader has taken.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// WriteTar writes the artifact as a tar archive, the form it travels in: the
// validated entries under tree/, with their modes (setuid and setgid removed
// unless kept) and times, owned by nobody in particular. Every directory is
// written before what it holds, the ones the artifact implies 0755, so the
// host's tar (under umask 0) makes none itself. Directories travel with
// owner write and search permission added, since some tar implementations
// (busybox's) cannot fill a directory they created read-only; their real
// modes are listed in the archive's "modes" file, one "<octal mode>\t<path>"
// line each, for the host to apply after extraction. The source is read
// again, and a source that changed since Open is an error rather than a
// runtime that does not match its id.
func (a *Artifact) WriteTar(w io.Writer) error { return a.writeTar(context.Background(), w, nil) }

// writeTar is WriteTar with files the host has already: a file whose
// ReuseName (content digest and mode) is in pool travels as a hard link to
// its copy in the stage, pool/<path>, which the host verified (h_reuse),
// instead of its bytes. The archive also lists every file's digest, mode
// and path in its "files" entry, for later pushes to find.
func (a *Artifact) writeTar(ctx context.Context, w io.Writer, pool map[string]string) error {
	return a.writeTarKeeping(ctx, w, pool, nil)
}

// writeTarKeeping is writeTar that gives the bytes of the pooled files of
// an archive to keep (packer.keep); a directory's are left where they are.
func (a *Artifact) writeTarKeeping(ctx context.Context, w io.Writer, pool map[string]string, keep func([32]byte) (io.WriteCloser, error)) error {
	pk := newPacker(w, a.Entries)
	pk.pool, pk.keep = pool, keep
	if err := pk.put(pk.treeHeader()); err != nil {
		return err
	}
	if a.dir {
		if err := a.writeDir(ctx, pk); err != nil {
			return err
		}
	} else {
		again := &Artifact{Source: a.Source, Name: a.Name, root: a.root, keepSetuid: a.keepSetuid, maxSize: a.maxSize}
		if err := again.readArchive(ctx, pk); err != nil {
			return err
		}
		if err := again.finish(); err != nil || again.Digest != a.Digest {
			return fmt.Errorf("%s changed while it was being read; push again", a.Source)
		}
	}
	return pk.close()
}

// archiveSize is the size of the archive writeTar writes with pool, found
// without reading a file: the same headers, as archive/tar writes them, and
// the bytes of each file that travels, padded to a block. The order of the
// entries does not change it.
func (a *Artifact) archiveSize(pool map[string]string) (int64, error) {
	var n int64
	pk := newPacker(nil, a.Entries)
	pk.pool, pk.size = pool, &n
	if err := pk.put(pk.treeHeader()); err != nil {
		return 0, err
	}
	for _, e := range a.Entries {
		mtime := e.mtime
		if e.implied {
			mtime = pk.now
		}
		if err := pk.header(e, mtime); err != nil {
			return 0, err
		}
	}
	err := pk.close()
	return n, err
}

// packer writes entries under tree/ and collects the directory modes to fix.
type packer struct {
	tw    *tar.Writer
	modes strings.Builder
	dirs  map[string]Entry // the artifact's directories, implied ones included
	done  map[string]bool  // directories written
	now   time.Time
	pool  map[string]string   // ReuseName to the copy in the stage's pool (writeTar)
	sums  map[string][32]byte // the files' digests, as Open computed them
	// linked: the entry header wrote last is a link into the pool, and
	// its bytes do not travel.
	linked bool
	files  strings.Builder // "<sha256> <path>" of every file, for FilesFile
	// size, when set, counts the bytes the archive would have instead of
	// writing them (archiveSize).
	size *int64
	// keep, when set, is given the bytes of each file that travels as a
	// link into the pool, read from an archive (a publish keeps them as
	// blobs of their own); nil from it means they are kept already.
	keep func(sum [32]byte) (io.WriteCloser, error)
}

// body is where the bytes of e, a file read from an archive, go besides
// h: into the archive, unless they travel as a link; else to keep. done
// ends what body opened. A nil pk (the first reading) writes only to h.
func (pk *packer) body(h io.Writer, e Entry) (w io.Writer, done func() error, err error) {
	none := func() error { return nil }
	switch {
	case pk == nil:
		return h, none, nil
	case !pk.linked:
		return io.MultiWriter(h, pk), none, nil
	case pk.keep == nil:
		return h, none, nil
	}
	kw, err := pk.keep(pk.sums[e.Path])
	if err != nil || kw == nil {
		return h, none, err
	}
	return io.MultiWriter(h, kw), kw.Close, nil
}

// newPacker writes entries to w. What the archive adds (tree/, implied
// directories, modes, files) is dated with the newest time among the
// entries, so that the same tree makes the same archive again, and a cut
// upload can be resumed.
func newPacker(w io.Writer, entries []Entry) *packer {
	pk := &packer{tw: tar.NewWriter(w), dirs: map[string]Entry{}, done: map[string]bool{}, sums: map[string][32]byte{}, now: time.Unix(0, 0)}
	for _, e := range entries {
		switch e.Type {
		case 'd':
			pk.dirs[e.Path] = e
		case 'f':
			pk.sums[e.Path] = e.Sum
		}
		if e.mtime.After(pk.now) {
			pk.now = e.mtime.Truncate(time.Second)
		}
	}
	return pk
}

// ReuseName is the name a file is reused by: its content digest and its
// mode, in octal, as the host's chmod takes it. The stage's pool keeps
// the host's copy of a file under this name (PoolDir/<ReuseName>).
func ReuseName(sum [32]byte, mode fs.FileMode) string {
	return fmt.Sprintf("%x-%o", sum, mode.Perm()|specialBits(mode))
}

// pooled reports whether e travels as a link into the stage's pool, and
// lists it in the files entry. An archive's entries are read again as they
// are written, before their bytes are: their digests are the ones Open
// computed (and an archive that changed since does not get its id).
func (pk *packer) pooled(e Entry) bool {
	if e.Type != 'f' {
		return false
	}
	name := ReuseName(pk.sums[e.Path], e.Mode)
	sum, mode, _ := strings.Cut(name, "-")
	fmt.Fprintf(&pk.files, "%s %s %s\n", sum, mode, e.Path)
	return e.link == "" && pk.pool[name] != ""
}

func (pk *packer) header(e Entry, mtime time.Time) error {
	if err := pk.parents(e.Path); err != nil {
		return err
	}
	if e.Type == 'd' {
		if pk.done[e.Path] {
			return nil
		}
		pk.done[e.Path] = true
	}
	h := tarHeader(e, mtime)
	h.Name = TreeDir + "/" + h.Name
	if h.Typeflag == tar.TypeLink {
		h.Linkname = TreeDir + "/" + h.Linkname
	}
	pk.linked = pk.pooled(e)
	if pk.linked {
		h.Typeflag, h.Size, h.Linkname = tar.TypeLink, 0, PoolDir+"/"+pk.pool[ReuseName(pk.sums[e.Path], e.Mode)]
	}
	if e.Type == 'd' && h.Mode&0o700 != 0o700 {
		fmt.Fprintf(&pk.modes, "%o\t%s\n", h.Mode, e.Path)
		h.Mode |= 0o700
	}
	return pk.put(h)
}

func (pk *packer) treeHeader() *tar.Header {
	return &tar.Header{Name: TreeDir + "/", Typeflag: tar.TypeDir, Mode: 0o755, ModTime: pk.now}
}

// put writes h, or counts it with the entry's bytes after it.
func (pk *packer) put(h *tar.Header) error {
	if pk.size == nil {
		return pk.tw.WriteHeader(h)
	}
	var c countingWriter
	if err := tar.NewWriter(&c).WriteHeader(h); err != nil {
		return err
	}
	*pk.size += c.n + (h.Size+blockSize-1)/blockSize*blockSize
	return nil
}

// parents writes the directories above p not written yet, outermost first,
// with the modes Open gave them. An archive may describe a directory after
// what it holds, or not at all; either way the host's tar must not make it.
func (pk *packer) parents(p string) error {
	dir := path.Dir(p)
	if dir == "." || pk.done[dir] {
		return nil
	}
	d, ok := pk.dirs[dir]
	if !ok { // the archive changed since Open; its digest will say so
		d = impliedDir(dir)
	}
	return pk.header(d, pk.now)
}

func (pk *packer) Write(p []byte) (int, error) { return pk.tw.Write(p) }

func (pk *packer) close() error {
	for _, f := range []struct{ name, body string }{{ModesFile, pk.modes.String()}, {FilesFile, pk.files.String()}} {
		h := &tar.Header{Name: f.name, Typeflag: tar.TypeReg, Mode: 0o644, Size: int64(len(f.body)), ModTime: pk.now}
		if err := pk.put(h); err != nil {
			return err
		}
		if pk.size != nil {
			continue
		}
		if _, err := io.WriteString(pk.tw, f.body); err != nil {
			return err
		}
	}
	if pk.size != nil {
		*pk.size += 2 * blockSize // the end of the archive, as Close writes it
		return nil
	}
	return pk.tw.Close()
}

func (a *Artifact) writeDir(ctx context.Context, pk *packer) error {
	for _, e := range a.Entries {
		p := filepath.Join(a.root, filepath.FromSlash(e.Path))
		// Times as Open saw them: the same archive every time, which a
		// resumed upload's prefix must be.
		mtime := e.mtime
		if e.implied {
			mtime = pk.now
		}
		if err := pk.header(e, mtime); err != nil {
			return err
		}
		// A file the host has already is in the pool, verified against
		// the digest Open computed.
		if e.Type != 'f' || pk.linked {
			continue
		}
		if err := writeFile(ctx, pk, p, e); err != nil {
			if e.cached {
				// The cache said what the file is not: the next push
				// hashes the tree again.
				forgetDigests(a.root)
			}
			return err
		}
	}
	return nil
}

// writeFile writes the file at p, Open's e, into the archive. A file Open
// hashed, and that is still what it was then (its identity, and times
// clearly before the hashing, on a file system that keeps a change time),
// is sent as it is read; any other (its digest came from the cache, its
// identity cannot tell, or it may have changed) is hashed as it is sent. A
// file that changed since Open stops the push.
func writeFile(ctx context.Context, w io.Writer, p string, e Entry) error {
	f, err := os.Open(p)
	if err != nil {
		return err
	}
	defer f.Close()
	r := io.LimitReader(transport.ContextReader(ctx, f), e.Size)
	changed := fmt.Errorf("%s changed while it was being read; push again", p)
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	id, ok := idOf(fi)
	if ok && !e.cached && !e.untimed && e.seen.trusted(id) {
		if n, err := io.Copy(w, r); err != nil || n != e.Size {
			return cmp.Or(err, changed)
		}
		if fi, err = f.Stat(); err != nil {
			return err
		}
		if now, _ := idOf(fi); now != id {
			return changed
		}
		return nil
	}
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(w, h), r)
	if err != nil {
		return err
	}
	if n != e.Size || [32]byte(h.Sum(nil)) != e.Sum {
		return changed
	}
	return nil
}

// tarHeader is e's header, with uid and gid 0 and no owner names, the same
// for every push: owners are not part of a runtime. A host's tar run by a
// login makes the files the login's, run by root makes them root's, and
// never gives them to whatever uid they had where the artifact was built.
func tarHeader(e Entry, mtime time.Time) *tar.Header {
	h := &tar.Header{
		Name:    e.Path,
		Mode:    int64(e.Mode.Perm() | specialBits(e.Mode)),
		ModTime: mtime.Truncate(time.Second),
	}
	switch {
	case e.Type == 'd':
		h.Typeflag, h.Name = tar.TypeDir, e.Path+"/"
	case e.Type == 'l':
		h.Typeflag, h.Linkname = tar.TypeSymlink, e.Target
	case e.link != "":
		h.Typeflag, h.Linkname = tar.TypeLink, e.link
	default:
		h.Typeflag, h.Size = tar.TypeReg, e.Size
	}
	return h
}
