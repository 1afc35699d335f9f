package store

import (
	"context"
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
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/hoistdev/hoist/transport"
)

// ErrArtifact reports an artifact hoist refuses to install: an entry that
// would land outside the runtime directory, a link that escapes it, a file
// type a runtime cannot hold, an archive cut short, or nothing at all to
// install. Nothing is written on any host.
var ErrArtifact = errors.New("artifact refused")

// Entry is one file, directory or symlink of an artifact.
type Entry struct {
	Path   string      // slash-separated, relative, clean
	Type   byte        // 'd' directory, 'f' regular file, 'l' symlink
	Mode   fs.FileMode // permission bits plus setuid, setgid, sticky, as installed
	Target string      // symlink target
	Size   int64
	Sum    [32]byte // SHA-256 of a file's contents
	link   string   // a tar hard link: the path whose contents this shares
	mtime  time.Time
	// seen is a directory's file as Open read it: its identity, and
	// whether its digest came from the cache (the upload then hashes it).
	seen digested
	// cached: the digest came from the digest cache, not from reading.
	cached bool
	// untimed: the file's file system keeps no change time, so its
	// identity cannot tell it unchanged: the upload hashes it again.
	untimed bool
	// implied marks a directory the artifact holds things in but does not
	// describe (an archive made from a list of files); hoist adds it 0755.
	implied bool
}

// Artifact is a runtime tree ready to install: validated, digested, and able
// to write itself as a tar archive. One read from a stream holds a
// temporary file until Close; callers should defer Close for every
// artifact they open (it does nothing for the others).
type Artifact struct {
	// Source is the directory or archive it was read from, as given, or
	// "-" for a stream (OpenReader).
	Source string
	// Name is the runtime's name; ID is Name and a digest prefix.
	Name string
	// Digest is the SHA-256 of the canonical form (see writeCanon): every
	// entry's path, type, mode, and content digest or link target, in path
	// order. Times and owners are not part of it, so the same tree always
	// has the same digest, and two trees never share one.
	Digest  string
	Entries []Entry
	// Size is the total size of the files.
	Size int64
	// Stripped lists, sorted, the paths whose setuid or setgid bit was
	// removed (see OpenOptions.KeepSetuid).
	Stripped []string
	// Writable lists, sorted, the paths the artifact itself makes writable
	// by others: kept as the artifact says, and worth a word to the user.
	Writable []string

	root       string // Source with a symlink at the top resolved, or the spool
	spool      string // the temporary file a stream was copied to; Close removes it
	dir        bool
	keepSetuid bool
	maxSize    int64 // OpenOptions.MaxSize
	claimed    int64 // the files' sizes counted so far (claim)
}

// OpenOptions says how to read an artifact.
type OpenOptions struct {
	// Name is the runtime's name; empty derives it from the source.
	Name string
	// KeepSetuid keeps setuid and setgid bits. By default they are removed:
	// a runtime pushed by one login should not hand its privileges to
	// whoever can run the runtime's programs on the host.
	KeepSetuid bool
	// NoCache hashes every file of a directory, without taking a digest
	// from the digest cache (which is then written anew).
	NoCache bool
	// MaxSize bounds the runtime's size, the sum of its files' sizes as
	// the artifact declares them (a sparse file's logical size): a file
	// that would pass it is refused before it is read. Zero means
	// DefaultMaxSize.
	MaxSize int64
}

// ID is the runtime id: "<name>-<first 12 hex digits of the digest>".
func (a *Artifact) ID() string { return a.Name + "-" + a.Digest[:12] }

var nameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._+-]*$`)

// ValidName reports whether s can name a runtime: letters, digits and
// ".", "_", "+", "-", not starting with a punctuation mark.
func ValidName(s string) bool { return len(s) <= 64 && nameRE.MatchString(s) }

// DefaultName derives a runtime name from an artifact path: its base name
// without its archive extension (.tar, .tar.gz, .tgz, .tar.xz, .txz,
// .tar.zst, .tzst, .zip), other characters replaced by "-".
func DefaultName(source string) string {
	base := filepath.Base(filepath.Clean(source))
	for _, ext := range archiveExts {
		if strings.HasSuffix(base, ext) {
			base = strings.TrimSuffix(base, ext)
			break
		}
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

// Open reads a directory or an archive (a tar, plain or compressed with
// gzip, xz or zstd, or a zip; the format is told by the file's first
// bytes), validates every entry and computes the digest. name may be empty
// to derive it.
func Open(source, name string) (*Artifact, error) {
	return OpenWith(context.Background(), source, OpenOptions{Name: name})
}

// OpenWith is Open with options. Reading and hashing stop as soon as ctx
// is done, with its error.
func OpenWith(ctx context.Context, source string, o OpenOptions) (*Artifact, error) {
	name := o.Name
	if name == "" {
		name = DefaultName(source)
	}
	if err := checkName(name); err != nil {
		return nil, err
	}
	// A source that is a symlink (a "latest" link to a build) is followed
	// here, once: WalkDir does not descend into a symlinked root, and the
	// runtime would be empty. Links inside the tree stay links.
	root, err := filepath.EvalSymlinks(source)
	if err != nil {
		return nil, err
	}
	fi, err := os.Stat(root)
	if err != nil {
		return nil, err
	}
	a := &Artifact{Source: source, Name: name, root: root, dir: fi.IsDir(), keepSetuid: o.KeepSetuid, maxSize: o.MaxSize}
	if a.dir {
		err = a.walkDir(ctx, o.NoCache)
	} else {
		err = a.readArchive(ctx, nil)
	}
	if err != nil {
		return nil, err
	}
	if err := a.finish(); err != nil {
		return nil, err
	}
	return a, nil
}

func checkName(name string) error {
	if !ValidName(name) {
		return fmt.Errorf("runtime name %q: use letters, digits and . _ + -, at most 64", name)
	}
	return nil
}

func (a *Artifact) walkDir(ctx context.Context, noCache bool) error {
	cache := openDigestCache(a.root, noCache)
	seen := map[string]bool{}
	err := filepath.WalkDir(a.root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(a.root, p)
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
		e := Entry{Path: clean, Mode: info.Mode() & (fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky), mtime: info.ModTime()}
		switch {
		case info.Mode().IsDir():
			e.Type = 'd'
		case info.Mode().IsRegular():
			e.Type = 'f'
			if err := a.claim(e.Path, info.Size()); err != nil {
				return err
			}
			if err := a.digestFile(ctx, p, info, &e, cache, seen); err != nil {
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
		a.settle(&e)
		a.Entries = append(a.Entries, e)
		return nil
	})
	if err == nil {
		if abs, aerr := filepath.Abs(a.root); aerr == nil {
			cache.save(abs, seen)
		}
	}
	return err
}

// digestFile gives e, the file at p, its size and digest: from the cache
// when the file is as it was when it was last hashed, else by reading it.
// A file on a file system that keeps no change time is always read, and
// read again by the upload.
func (a *Artifact) digestFile(ctx context.Context, p string, info fs.FileInfo, e *Entry, cache *digestCache, seen map[string]bool) error {
	id, ok := idOf(info)
	if ok && !cache.keepsTime(p, id.Dev) {
		ok, e.untimed = false, true
	}
	if !ok {
		var err error
		e.Size, e.Sum, err = hashFile(ctx, p)
		return err
	}
	seen[e.Path] = true
	if sum, hit := cache.lookup(e.Path, id); hit {
		e.Size, e.Sum, e.cached = id.Size, sum, true
		e.seen = digested{ID: id}
		return nil
	}
	at := time.Now()
	var err error
	if e.Size, e.Sum, err = hashFile(ctx, p); err != nil {
		return err
	}
	e.seen = digested{ID: id, Sum: hex.EncodeToString(e.Sum[:]), At: at.UnixNano()}
	cache.put(e.Path, e.seen)
	return nil
}

// settle gives e the mode it will have on the host. A symlink's own mode
// means nothing there (Linux makes every link 0777), so it is 0777 here too,
// and a tree has one id whatever its archiver wrote. Setuid and setgid bits
// go unless kept, and the path is recorded.
func (a *Artifact) settle(e *Entry) {
	if e.Type == 'l' {
		e.Mode = fs.ModePerm
		return
	}
	if e.Mode&0o002 != 0 {
		a.Writable = append(a.Writable, e.Path)
	}
	if a.keepSetuid || e.Mode&(fs.ModeSetuid|fs.ModeSetgid) == 0 {
		return
	}
	e.Mode &^= fs.ModeSetuid | fs.ModeSetgid
	a.Stripped = append(a.Stripped, e.Path)
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
	if p == "" || strings.ContainsFunc(p, isControl) {
		return "", fmt.Errorf("%w: %q has a control character in its name", ErrArtifact, name)
	}
	return p, nil
}

func isControl(r rune) bool { return r < 0x20 || r == 0x7f }

// finish validates the whole tree and computes the digest.
func (a *Artifact) finish() error {
	if len(a.Entries) == 0 {
		return fmt.Errorf("%w: %s: the artifact is empty; nothing to install", ErrArtifact, a.Source)
	}
	seen := map[string]byte{}
	for _, e := range a.Entries {
		if _, dup := seen[e.Path]; dup {
			return fmt.Errorf("%w: %s appears twice", ErrArtifact, e.Path)
		}
		seen[e.Path] = e.Type
	}
	a.Entries = append(a.Entries, implied(a.Entries, seen)...)
	sort.Slice(a.Entries, func(i, j int) bool { return a.Entries[i].Path < a.Entries[j].Path })
	for _, e := range a.Entries {
		// A parent that is not a directory would make the tree depend on
		// extraction order, or write through a symlink. Every parent is
		// an entry by now, implied or not.
		switch dir := path.Dir(e.Path); {
		case dir == "." || seen[dir] == 'd':
		case seen[dir] == 'l':
			return fmt.Errorf("%w: %s lies beneath the symlink %s", ErrArtifact, e.Path, dir)
		default:
			return fmt.Errorf("%w: %s lies beneath the file %s", ErrArtifact, e.Path, dir)
		}
		if e.Type == 'f' {
			a.Size += e.Size
		}
	}
	if err := checkLinks(a.Entries); err != nil {
		return err
	}
	slices.Sort(a.Stripped)
	slices.Sort(a.Writable)
	h := sha256.New()
	if err := writeCanon(h, a.Entries); err != nil {
		return err
	}
	a.Digest = hex.EncodeToString(h.Sum(nil))
	return nil
}

// implied returns the directories the entries lie in but do not describe,
// 0755 each, and adds them to seen. Left to the host's tar, which unpacks
// under umask 0, they would be made 0777.
func implied(entries []Entry, seen map[string]byte) []Entry {
	var add []Entry
	for _, e := range entries {
		for dir := path.Dir(e.Path); dir != "."; dir = path.Dir(dir) {
			if _, ok := seen[dir]; ok {
				break
			}
			seen[dir] = 'd'
			add = append(add, impliedDir(dir))
		}
	}
	return add
}

func impliedDir(p string) Entry { return Entry{Path: p, Type: 'd', Mode: 0o755, implied: true} }

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

// ReuseMin is the smallest file a push looks for on the host by its
// digest, to reuse the host's copy instead of sending it: a smaller one
// costs less to send than to find and copy.
const ReuseMin = 64 << 10

// reusable lists, one ReuseName a line, the files a host may already have
// in other runtimes: what a push's first command looks for (hp_reuse,
// h_reuse), the delta of docs/store.md.
func (a *Artifact) reusable() string {
	var b strings.Builder
	seen := map[string]bool{}
	for _, e := range a.Entries {
		if !e.reusable() {
			continue
		}
		if n := ReuseName(e.Sum, e.Mode); !seen[n] {
			seen[n] = true
			b.WriteString(n + "\n")
		}
	}
	return b.String()
}

// reusable reports whether e is a file a host may hold already, and finds
// by its digest: a file of ReuseMin or more that is not a hard link to
// another of the artifact's. A publish stores each as a blob of its own.
func (e Entry) reusable() bool { return e.Type == 'f' && e.link == "" && e.Size >= ReuseMin }

func hashFile(ctx context.Context, p string) (int64, [32]byte, error) {
	var sum [32]byte
	f, err := os.Open(p)
	if err != nil {
		return 0, sum, err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, transport.ContextReader(ctx, f))
	copy(sum[:], h.Sum(nil))
	return n, sum, err
}
