package store

import (
	"archive/tar"
	"crypto/sha256"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// The archive's layout: the runtime under TreeDir, and a list of directory
// modes to apply after extraction in ModesFile, both relative to the stage.
const (
	TreeDir   = "tree"
	ModesFile = "modes"
)

// WriteTar writes the artifact as a tar archive, the form it travels in: the
// validated entries under tree/, with their modes and times, owned by nobody
// in particular. Directories travel with owner write and search permission
// added, since some tar implementations (busybox's) cannot fill a directory
// they created read-only; their real modes are listed in the archive's
// "modes" file, one "<octal mode>\t<path>" line each, for the host to apply
// after extraction. The source is read again, and a source that changed
// since Open is an error rather than a runtime that does not match its id.
func (a *Artifact) WriteTar(w io.Writer) error {
	pk := &packer{tw: tar.NewWriter(w)}
	if err := pk.tw.WriteHeader(&tar.Header{Name: TreeDir + "/", Typeflag: tar.TypeDir, Mode: 0o755, ModTime: time.Now().Truncate(time.Second)}); err != nil {
		return err
	}
	if a.dir {
		if err := a.writeDir(pk); err != nil {
			return err
		}
	} else {
		again := &Artifact{Source: a.Source, Name: a.Name}
		if err := again.readTar(pk); err != nil {
			return err
		}
		if err := again.finish(); err != nil || again.Digest != a.Digest {
			return fmt.Errorf("%s changed while it was being read; push again", a.Source)
		}
	}
	return pk.close()
}

// packer writes entries under tree/ and collects the directory modes to fix.
type packer struct {
	tw    *tar.Writer
	modes strings.Builder
}

func (pk *packer) header(e Entry, mtime time.Time) error {
	h := tarHeader(e, mtime)
	h.Name = TreeDir + "/" + h.Name
	if h.Typeflag == tar.TypeLink {
		h.Linkname = TreeDir + "/" + h.Linkname
	}
	if e.Type == 'd' && h.Mode&0o700 != 0o700 {
		fmt.Fprintf(&pk.modes, "%o\t%s\n", h.Mode, e.Path)
		h.Mode |= 0o700
	}
	return pk.tw.WriteHeader(h)
}

func (pk *packer) Write(p []byte) (int, error) { return pk.tw.Write(p) }

func (pk *packer) close() error {
	body := pk.modes.String()
	h := &tar.Header{Name: ModesFile, Typeflag: tar.TypeReg, Mode: 0o644, Size: int64(len(body)), ModTime: time.Now().Truncate(time.Second)}
	if err := pk.tw.WriteHeader(h); err != nil {
		return err
	}
	if _, err := io.WriteString(pk.tw, body); err != nil {
		return err
	}
	return pk.tw.Close()
}

func (a *Artifact) writeDir(pk *packer) error {
	for _, e := range a.Entries {
		p := filepath.Join(a.Source, filepath.FromSlash(e.Path))
		info, err := os.Lstat(p)
		if err != nil {
			return fmt.Errorf("%s changed while it was being read: %w", a.Source, err)
		}
		if err := pk.header(e, info.ModTime()); err != nil {
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
		n, err := io.Copy(io.MultiWriter(pk, h), io.LimitReader(f, e.Size))
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
