package store

import (
	"archive/zip"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"strings"

	"github.com/hoistdev/hoist/transport"
)

// Unix file types, as a zip made on Unix keeps them in the high half of an
// entry's external attributes.
const (
	sIFMT  = 0o170000
	sIFDIR = 0o040000
	sIFREG = 0o100000
	sIFLNK = 0o120000
)

// The zip "version made by" systems whose external attributes hold a Unix
// mode: Unix, and OS X (which archive/zip reads the same way).
const (
	creatorUnix  = 3
	creatorMacOS = 19
)

// readZip reads a zip archive's entries, and writes each validated entry to
// w if set, as readTar does a tar's. archive/zip reads Zip64 and data
// descriptors, and checks each entry's size and CRC at its end.
func (a *Artifact) readZip(ctx context.Context, f *os.File, size int64, w *packer) error {
	zr, err := zip.NewReader(f, size)
	// With GODEBUG=zipinsecurepath=0 archive/zip reports names like "../x"
	// by itself; cleanPath refuses them below, naming the entry.
	if err != nil && !errors.Is(err, zip.ErrInsecurePath) {
		return a.damaged(err)
	}
	for _, zf := range zr.File {
		if err := a.zipEntry(ctx, zf, w); err != nil {
			return err
		}
	}
	return nil
}

// zipEntry reads one zip entry into a.Entries, and writes it to w if set.
func (a *Artifact) zipEntry(ctx context.Context, zf *zip.File, w *packer) error {
	p, err := cleanPath(zf.Name)
	if err != nil || p == "." {
		return err
	}
	if zf.Flags&0x1 != 0 {
		return fmt.Errorf("%w: %s is encrypted in the zip; hoist cannot read it", ErrArtifact, p)
	}
	perm, typ := zipMode(zf)
	e := Entry{Path: p, Mode: fs.FileMode(perm)&fs.ModePerm | modeBits(int64(perm)), mtime: zf.Modified}
	switch {
	case typ == sIFLNK:
		e.Type = 'l'
		if e.Target, err = a.zipTarget(ctx, zf); err != nil {
			return err
		}
	case typ != sIFDIR && typ != sIFREG && typ != 0:
		return fmt.Errorf("%w: %s is not a file, directory or symlink (zip mode %o)", ErrArtifact, p, typ|perm)
	case typ == sIFDIR || strings.HasSuffix(zf.Name, "/"):
		e.Type = 'd'
	default:
		e.Type, e.Size = 'f', int64(zf.UncompressedSize64)
		if e.Size < 0 {
			return a.damaged(fmt.Errorf("%s: %w", p, zip.ErrFormat))
		}
		// archive/zip reads no more than the size declared.
		if err := a.claim(p, e.Size); err != nil {
			return err
		}
	}
	a.settle(&e)
	if w != nil {
		mtime := zf.Modified
		if mtime.IsZero() {
			mtime = w.now
		}
		if err := w.header(e, mtime); err != nil {
			return err
		}
	}
	if e.Type == 'f' {
		hw := sha256.New()
		body, done, err := w.body(hw, e)
		if err != nil {
			return err
		}
		if _, err := copyEntry(ctx, body, zf, math.MaxInt64); err != nil {
			return a.damaged(fmt.Errorf("%s: %w", p, err))
		}
		if err := done(); err != nil {
			return err
		}
		copy(e.Sum[:], hw.Sum(nil))
	}
	a.Entries = append(a.Entries, e)
	return nil
}

// zipMode is an entry's permission bits (setuid, setgid and sticky among
// them) and Unix file type. A zip made elsewhere keeps no Unix mode: its
// files are 0644 and its directories 0755, as unzip makes them under the
// usual umask, and one tree gets one id whoever unpacks it.
func zipMode(zf *zip.File) (perm, typ uint32) {
	creator := zf.CreatorVersion >> 8
	if m := zf.ExternalAttrs >> 16; m != 0 && (creator == creatorUnix || creator == creatorMacOS) {
		return m & 0o7777, m & sIFMT
	}
	const msdosDir = 0x10
	if strings.HasSuffix(zf.Name, "/") || zf.ExternalAttrs&msdosDir != 0 {
		return 0o755, sIFDIR
	}
	return 0o644, sIFREG
}

// zipTarget reads a zip symlink's target, which is its contents. Reading
// stops past the longest target a link can have (checkLinks refuses that),
// so a huge "link" is not read whole; a shorter one is read to its end,
// where archive/zip checks its CRC.
func (a *Artifact) zipTarget(ctx context.Context, zf *zip.File) (string, error) {
	var b strings.Builder
	if _, err := copyEntry(ctx, &b, zf, maxTarget+1); err != nil {
		return "", a.damaged(fmt.Errorf("%s: %w", zf.Name, err))
	}
	return b.String(), nil
}

// copyEntry copies at most limit bytes of an entry's contents to w; a
// failure of the decompressor is the archive's fault (codecError).
func copyEntry(ctx context.Context, w io.Writer, zf *zip.File, limit int64) (int64, error) {
	rc, err := zf.Open()
	if err != nil {
		return 0, err
	}
	defer rc.Close()
	return io.Copy(w, io.LimitReader(transport.ContextReader(ctx, &codecReader{rc}), limit))
}
