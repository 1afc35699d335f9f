package store

import (
	"archive/tar"
	"bufio"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// ErrArtifact reports an artifact hoist refuses to install: an entry that
// would land outside the runtime directory, a link that escapes it, or a
// file type a runtime cannot hold. Nothing is written on any host.
var ErrArtifact = errors.New("artifact refused")

// Entry is one file, directory or symlink of an artifact.
type Entry struct {
	Path   string      // slash-separated, relative, clean
	Type   byte        // 'd' directory, 'f' regular file, 'l' symlink
	Mode   fs.FileMode // permission bits plus setuid, setgid, sticky
	Target string      // symlink target
	Size   int64
	Sum    [32]byte // SHA-256 of a file's contents
	link   string   // a tar hard link: the path whose contents this shares
}

// Artifact is a runtime tree ready to install: validated, digested, and able
// to write itself as a tar archive.
type Artifact struct {
	// Source is the directory or archive it was read from.
	Source string
	// Name is the runtime's name; ID is Name and a digest prefix.
	Name string
	// Digest is the SHA-256 of the canonical form: every entry's path,
	// type, mode, and content digest or link target, in path order. Times
	// and owners are not part of it, so the same tree always has the same
	// digest.
	Digest  string
	Entries []Entry
	// Size is the total size of the files.
	Size int64
	dir  bool
}

// ID is the runtime id: "<name>-<first 12 hex digits of the digest>".
func (a *Artifact) ID() string { return a.Name + "-" + a.Digest[:12] }

var nameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._+-]*$`)

// ValidName reports whether s can name a runtime: letters, digits and
// ".", "_", "+", "-", not starting with a punctuation mark.
func ValidName(s string) bool { return len(s) <= 64 && nameRE.MatchString(s) }

// DefaultName derives a runtime name from an artifact path: its base name
// without .tar, .tar.gz or .tgz, other characters replaced by "-".
func DefaultName(source string) string {
	base := filepath.Base(filepath.Clean(source))
	for _, ext := range []string{".tar.gz", ".tgz", ".tar"} {
		base = strings.TrimSuffix(base, ext)
	}
	b := []byte(base)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("._+-", c) >= 0) {
			b[i] = '-'
		}
	}
	s := strings.TrimLeft(string(b), "._+-")
	if len(s) > 64 {
		s = s[:64]
	}
	if s == "" {
		s = "runtime"
	}
	return s
}

// Open reads a directory or a .tar, .tar.gz or .tgz archive, validates every
// entry and computes the digest. name may be empty to derive it.
func Open(source, name string) (*Artifact, error) {
	if name == "" {
		name = DefaultName(source)
	}
	if !ValidName(name) {
		return nil, fmt.Errorf("runtime name %q: use letters, digits and . _ + -, at most 64", name)
	}
	fi, err := os.Stat(source)
	if err != nil {
		return nil, err
	}
	a := &Artifact{Source: source, Name: name, dir: fi.IsDir()}
	if a.dir {
		err = a.walkDir()
	} else {
		err = a.readTar(nil)
	}
	if err != nil {
		return nil, err
	}
	return a, a.finish()
}

func (a *Artifact) walkDir() error {
	root := a.Source
	return filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, p)
		if err != nil || rel == "." {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		clean, err := cleanPath(filepath.ToSlash(rel))
		if err != nil {
			return err
		}
		e := Entry{Path: clean, Mode: info.Mode() & (fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky)}
		switch {
		case info.Mode().IsDir():
			e.Type = 'd'
		case info.Mode().IsRegular():
			e.Type = 'f'
			if e.Size, e.Sum, err = hashFile(p); err != nil {
				return err
			}
		case info.Mode()&fs.ModeSymlink != 0:
			e.Type = 'l'
			if e.Target, err = os.Readlink(p); err != nil {
				return err
			}
		default:
			return fmt.Errorf("%w: %s is a %s; a runtime holds only files, directories and symlinks", ErrArtifact, e.Path, info.Mode().Type())
		}
		a.Entries = append(a.Entries, e)
		return nil
	})
}

// readTar reads the archive's entries; with w set it also writes each
// validated entry to w (the second pass, when uploading).
func (a *Artifact) readTar(w *packer) error {
	f, err := os.Open(a.Source)
	if err != nil {
		return err
	}
	defer f.Close()
	r, err := decompress(f)
	if err != nil {
		return fmt.Errorf("%s: %w", a.Source, err)
	}
	tr := tar.NewReader(r)
	sums := map[string]Entry{}
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s: %w", a.Source, err)
		}
		p, err := cleanPath(h.Name)
		if err != nil {
			return err
		}
		if p == "." {
			continue
		}
		e := Entry{Path: p, Mode: fs.FileMode(h.Mode) & fs.ModePerm}
		if h.Mode&0o4000 != 0 {
			e.Mode |= fs.ModeSetuid
		}
		if h.Mode&0o2000 != 0 {
			e.Mode |= fs.ModeSetgid
		}
		if h.Mode&0o1000 != 0 {
			e.Mode |= fs.ModeSticky
		}
		switch h.Typeflag {
		case tar.TypeDir:
			e.Type = 'd'
		case tar.TypeReg: // archive/tar reports old-style regular files as TypeReg too
			e.Type, e.Size = 'f', h.Size
			hw := sha256.New()
			var body io.Writer = hw
			if w != nil {
				if err := w.header(e, h.ModTime); err != nil {
					return err
				}
				body = io.MultiWriter(hw, w)
			}
			if _, err := io.Copy(body, tr); err != nil {
				return fmt.Errorf("%s: %s: %w", a.Source, p, err)
			}
			copy(e.Sum[:], hw.Sum(nil))
			sums[p] = e
		case tar.TypeSymlink:
			e.Type, e.Target = 'l', h.Linkname
		case tar.TypeLink:
			lp, err := cleanPath(h.Linkname)
			if err != nil {
				return err
			}
			first, ok := sums[lp]
			if !ok {
				return fmt.Errorf("%w: %s is a hard link to %s, which is not a file before it in the archive", ErrArtifact, p, h.Linkname)
			}
			e.Type, e.Size, e.Sum, e.link = 'f', first.Size, first.Sum, lp
			e.Mode = first.Mode
		default:
			return fmt.Errorf("%w: %s is not a file, directory or symlink (tar type %q)", ErrArtifact, p, h.Typeflag)
		}
		a.Entries = append(a.Entries, e)
		if w != nil && (e.Type != 'f' || e.link != "") {
			if err := w.header(e, h.ModTime); err != nil {
				return err
			}
		}
	}
}

func decompress(f *os.File) (io.Reader, error) {
	br := bufio.NewReaderSize(f, 1<<16)
	magic, _ := br.Peek(2)
	if len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		return gzip.NewReader(br)
	}
	return br, nil
}

// cleanPath makes an archive path relative and clean, and refuses one that
// is absolute or climbs out with "..".
func cleanPath(name string) (string, error) {
	if strings.HasPrefix(name, "/") {
		return "", fmt.Errorf("%w: %q is an absolute path", ErrArtifact, name)
	}
	for _, part := range strings.Split(name, "/") {
		if part == ".." {
			return "", fmt.Errorf("%w: %q climbs out of the runtime directory", ErrArtifact, name)
		}
	}
	p := path.Clean(name)
	if p == "" || strings.ContainsFunc(p, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		return "", fmt.Errorf("%w: %q has a control character in its name", ErrArtifact, name)
	}
	return p, nil
}

// finish validates the whole tree and computes the digest.
func (a *Artifact) finish() error {
	sort.Slice(a.Entries, func(i, j int) bool { return a.Entries[i].Path < a.Entries[j].Path })
	seen := map[string]byte{}
	for _, e := range a.Entries {
		if _, dup := seen[e.Path]; dup {
			return fmt.Errorf("%w: %s appears twice", ErrArtifact, e.Path)
		}
		seen[e.Path] = e.Type
	}
	h := sha256.New()
	for _, e := range a.Entries {
		// A parent that is not a directory would make the tree depend on
		// extraction order, or write through a symlink.
		if dir := path.Dir(e.Path); dir != "." && seen[dir] != 'd' {
			if seen[dir] == 'l' {
				return fmt.Errorf("%w: %s lies beneath the symlink %s", ErrArtifact, e.Path, dir)
			}
			if seen[dir] != 0 {
				return fmt.Errorf("%w: %s lies beneath the file %s", ErrArtifact, e.Path, dir)
			}
		}
		switch e.Type {
		case 'l':
			if err := checkLink(e); err != nil {
				return err
			}
			fmt.Fprintf(h, "l %o %s\x00%s\n", e.Mode&fs.ModePerm, e.Path, e.Target)
		case 'f':
			a.Size += e.Size
			fmt.Fprintf(h, "f %o %s\x00%x\n", e.Mode.Perm()|specialBits(e.Mode), e.Path, e.Sum)
		case 'd':
			fmt.Fprintf(h, "d %o %s\n", e.Mode.Perm()|specialBits(e.Mode), e.Path)
		}
	}
	a.Digest = hex.EncodeToString(h.Sum(nil))
	return nil
}

func specialBits(m fs.FileMode) fs.FileMode {
	var s fs.FileMode
	if m&fs.ModeSetuid != 0 {
		s |= 0o4000
	}
	if m&fs.ModeSetgid != 0 {
		s |= 0o2000
	}
	if m&fs.ModeSticky != 0 {
		s |= 0o1000
	}
	return s
}

// checkLink refuses a symlink that is absolute or resolves, from where it
// sits, outside the runtime directory.
func checkLink(e Entry) error {
	if e.Target == "" || strings.HasPrefix(e.Target, "/") {
		return fmt.Errorf("%w: symlink %s points to %q, outside the runtime directory", ErrArtifact, e.Path, e.Target)
	}
	depth := strings.Count(path.Dir(e.Path), "/") + 1
	if path.Dir(e.Path) == "." {
		depth = 0
	}
	for _, part := range strings.Split(e.Target, "/") {
		switch part {
		case "..":
			depth--
		case ".", "":
		default:
			depth++
		}
		if depth < 0 {
			return fmt.Errorf("%w: symlink %s points to %q, outside the runtime directory", ErrArtifact, e.Path, e.Target)
		}
	}
	return nil
}

func hashFile(p string) (int64, [32]byte, error) {
	var sum [32]byte
	f, err := os.Open(p)
	if err != nil {
		return 0, sum, err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	copy(sum[:], h.Sum(nil))
	return n, sum, err
}
