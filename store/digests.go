package store

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// fileID is what tells a file unchanged without reading it, as git's index
// does: its device and inode, size, and modification and change times. A
// write changes the change time, which only the kernel sets.
type fileID struct {
	Dev, Ino     uint64
	Size         int64
	Mtime, Ctime int64 // nanoseconds
}

// idOf is fi's identity; ctimeOf (ctime_*.go) reads the change time, whose
// field has another name on BSD and macOS.
func idOf(fi fs.FileInfo) (fileID, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fileID{}, false
	}
	return fileID{
		Dev: uint64(st.Dev), Ino: uint64(st.Ino), Size: st.Size,
		Mtime: fi.ModTime().UnixNano(), Ctime: ctimeOf(st),
	}, true
}

// racy is how close to its hashing a file's times may be for the digest to
// be trusted by them: a write in the same tick as the hash (file systems
// keep times in ticks of a few milliseconds) leaves them unchanged.
const racy = 100 * time.Millisecond

// digested is a file's digest and what the file was when it was read.
type digested struct {
	ID  fileID
	Sum string // hex
	// At is when the reading began: a file whose times are not clearly
	// before it may have changed while it was read.
	At int64
}

// trusted reports whether d, read for a file that is now id, is its digest.
// Times in whole seconds (a file system that keeps no finer ones) need a
// second's gap: a write later in the same second leaves them as they are.
func (d digested) trusted(id fileID) bool {
	gap := int64(racy)
	if id.Mtime%int64(time.Second) == 0 && id.Ctime%int64(time.Second) == 0 {
		gap = int64(time.Second)
	}
	return d.ID == id && d.At-id.Ctime > gap && d.At-id.Mtime > gap
}

// digestCache keeps the digests of a directory's files between pushes, in
// the user's cache directory, so that a push of a tree that was pushed
// before reads no file to find its id. A file whose identity (fileID)
// changed, or changed too close to its hashing, is hashed again; and the
// upload hashes what it sends of a file whose digest came from here, so a
// wrong entry stops a push rather than installing a tree that does not
// match its id. That check cannot see a file the host already holds (it
// is copied there, not sent) nor a tree already present, so the cache is
// used only where it can be right: a cache file that is the user's and
// nobody else may write, and files on a file system that keeps a real
// change time (changeTimeKept).
type digestCache struct {
	path    string
	entries map[string]digested // by slash path in the tree
	changed bool
	// timed says, by device, whether its file system keeps a real
	// change time: only then does a file's identity tell it unchanged.
	timed map[uint64]bool
}

// cachePath is where the digests of the directory root are kept, or "".
func cachePath(root string) string {
	dir, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		return ""
	}
	key := sha256.Sum256([]byte(abs))
	return filepath.Join(dir, "hoist", "digests", hex.EncodeToString(key[:12]))
}

// forgetDigests drops the cache of root, after it proved wrong.
func forgetDigests(root string) {
	if p := cachePath(root); p != "" {
		os.Remove(p)
	}
}

// openDigestCache reads the cache of the directory root, unless ignore
// (push --no-cache: every file is hashed, and the cache written anew); with
// no usable cache directory it is empty and never saved.
func openDigestCache(root string, ignore bool) *digestCache {
	c := &digestCache{entries: map[string]digested{}, path: cachePath(root), timed: map[uint64]bool{}}
	if c.path == "" || ignore {
		return c
	}
	abs, _ := filepath.Abs(root)
	if b, ok := readOwn(c.path); ok {
		var saved struct {
			Root    string
			Entries map[string]digested
		}
		if json.Unmarshal(b, &saved) == nil && saved.Root == abs && saved.Entries != nil {
			c.entries = saved.Entries
		}
	}
	return c
}

// readOwn reads the file at p if it is a plain file of the user's that
// nobody else may write, as the file opened shows it (not a link, not
// swapped between a look and the read): whoever else could write it could
// give any file any digest.
func readOwn(p string) ([]byte, bool) {
	f, err := os.OpenFile(p, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, false
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm()&0o022 != 0 {
		return nil, false
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); !ok || int(st.Uid) != os.Getuid() {
		return nil, false
	}
	b, err := io.ReadAll(f)
	return b, err == nil
}

// keepsTime reports whether the file at p, on device dev, is on a file
// system that keeps a real change time; asked once per device.
func (c *digestCache) keepsTime(p string, dev uint64) bool {
	kept, ok := c.timed[dev]
	if !ok {
		kept = changeTimeKept(p)
		c.timed[dev] = kept
	}
	return kept
}

// lookup returns the digest of the file at rel, now id, if the cache has one.
func (c *digestCache) lookup(rel string, id fileID) (sum [32]byte, ok bool) {
	d, ok := c.entries[rel]
	if !ok || !d.trusted(id) {
		return sum, false
	}
	b, err := hex.DecodeString(d.Sum)
	if err != nil || len(b) != len(sum) {
		return sum, false
	}
	copy(sum[:], b)
	return sum, true
}

func (c *digestCache) put(rel string, d digested) {
	c.entries[rel] = d
	c.changed = true
}

// save writes the cache, keeping only the files seen this time. Failing to
// is not an error: the next push hashes again.
func (c *digestCache) save(abs string, seen map[string]bool) {
	if c.path == "" || (!c.changed && len(seen) == len(c.entries)) {
		return
	}
	for rel := range c.entries {
		if !seen[rel] {
			delete(c.entries, rel)
		}
	}
	saveOwn(c.path, struct {
		Root    string
		Entries map[string]digested
	}{abs, c.entries})
}

// saveOwn writes v as JSON to the file at p, in a directory of the user's
// alone (made 0700), through a temporary file (0600) renamed into place,
// so that a reader sees the old file or the new one whole. It gives up
// silently: these are caches.
func saveOwn(p string, v any) {
	b, err := json.Marshal(v)
	if err != nil || os.MkdirAll(filepath.Dir(p), 0o700) != nil {
		return
	}
	tmp, err := os.CreateTemp(filepath.Dir(p), "."+filepath.Base(p)+"-*")
	if err != nil {
		return
	}
	_, werr := tmp.Write(b)
	if cerr := tmp.Close(); werr != nil || cerr != nil || os.Rename(tmp.Name(), p) != nil {
		os.Remove(tmp.Name())
	}
}
