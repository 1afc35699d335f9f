package store

import (
	"archive/tar"
	"crypto/sha256"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"
)

// WriteTar writes the artifact as a tar archive, the form it travels in:
// only the validated entries, with their modes and times, owned by nobody in
// particular. The source is read again, and a source that changed since
// Open is an error rather than a runtime that does not match its id.
func (a *Artifact) WriteTar(w io.Writer) error {
	tw := tar.NewWriter(w)
	if a.dir {
		if err := a.writeDir(tw); err != nil {
			return err
		}
	} else {
		again := &Artifact{Source: a.Source, Name: a.Name}
		if err := again.readTar(tw); err != nil {
			return err
		}
		if err := again.finish(); err != nil || again.Digest != a.Digest {
			return fmt.Errorf("%s changed while it was being read; push again", a.Source)
		}
	}
	return tw.Close()
}

func (a *Artifact) writeDir(tw *tar.Writer) error {
	for _, e := range a.Entries {
		p := filepath.Join(a.Source, filepath.FromSlash(e.Path))
		info, err := os.Lstat(p)
		if err != nil {
			return fmt.Errorf("%s changed while it was being read: %w", a.Source, err)
		}
		if err := tw.WriteHeader(tarHeader(e, info.ModTime())); err != nil {
			return err
		}
		if e.Type != 'f' {
			continue
		}
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		h := sha256.New()
		n, err := io.Copy(io.MultiWriter(tw, h), io.LimitReader(f, e.Size))
		f.Close()
		if err != nil {
			return err
		}
		if n != e.Size || [32]byte(h.Sum(nil)) != e.Sum {
			return fmt.Errorf("%s changed while it was being read; push again", p)
		}
	}
	return nil
}

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
