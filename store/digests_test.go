package store

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hoistdev/hoist/e2e/sshd"
)

// cacheHome points the user's cache directory at a temporary one.
func cacheHome(t *testing.T) string {
	dir := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", dir)
	return dir
}

// aged writes files whose times are well before now, as a built tree's are
// by the time it is pushed (a file written in the last moments is hashed
// again every time: its times cannot tell a later write).
func aged(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(2 * racy)
	return dir
}

// A second Open of the same tree takes the digests from the cache, and
// gets the same id; a file written since (same size, its modification time
// put back) is read again, since its change time moved.
func TestDigestCache(t *testing.T) {
	cacheHome(t)
	dir := aged(t, map[string]string{"a": "alpha", "b": "bravo"})
	first, err := Open(dir, "app")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range first.Entries {
		if e.cached {
			t.Fatalf("%s: cached on the first Open", e.Path)
		}
	}
	again, err := Open(dir, "app")
	if err != nil {
		t.Fatal(err)
	}
	if again.Digest != first.Digest {
		t.Fatalf("the cached digest differs: %s, %s", again.Digest, first.Digest)
	}
	for _, e := range again.Entries {
		if e.Type == 'f' && !e.cached {
			t.Fatalf("%s: hashed again, though unchanged", e.Path)
		}
	}
	fi, _ := os.Stat(filepath.Join(dir, "a"))
	if err := os.WriteFile(filepath.Join(dir, "a"), []byte("ALPHA"), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Chtimes(filepath.Join(dir, "a"), fi.ModTime(), fi.ModTime())
	changed, err := Open(dir, "app")
	if err != nil {
		t.Fatal(err)
	}
	if changed.Digest == first.Digest {
		t.Fatal("a file rewritten with its old size and time kept the cached digest")
	}
}

// A cache entry that lies (a digest that is not the file's, under the
// file's identity) gives a wrong id, but the upload hashes what it sends
// of a file whose digest came from the cache, and stops; the cache is
// dropped, so the next push hashes the tree and has its true id.
func TestDigestCacheLieStopsTheUpload(t *testing.T) {
	home := cacheHome(t)
	dir := aged(t, map[string]string{"a": "alpha"})
	lieInCache(t, home, dir)
	a, err := Open(dir, "app")
	if err != nil {
		t.Fatal(err)
	}
	err = a.WriteTar(io.Discard)
	if err == nil || !strings.Contains(err.Error(), "changed while it was being read") {
		t.Fatalf("WriteTar with a lying cache: %v", err)
	}
	again, err := Open(dir, "app")
	if err != nil {
		t.Fatal(err)
	}
	if again.ID() == a.ID() {
		t.Errorf("after the lie showed, Open still gives the id %s from the cache", a.ID())
	}
	if err := again.WriteTar(io.Discard); err != nil {
		t.Errorf("WriteTar after the lie showed: %v", err)
	}
}

// Times in whole seconds (a file system that keeps no finer ones) are
// trusted only a second after them: a write later in the same second would
// leave them as they are.
func TestDigestTrustedWholeSeconds(t *testing.T) {
	at := time.Date(2026, 1, 1, 0, 0, 10, 0, time.UTC).UnixNano()
	for _, c := range []struct {
		name string
		t    int64 // mtime and ctime
		want bool
	}{
		{"nanoseconds, 200 ms before", at - int64(200*time.Millisecond) + 1, true},
		{"nanoseconds, 50 ms before", at - int64(50*time.Millisecond) + 1, false},
		{"whole seconds, exactly 1 s before", at - int64(time.Second), false},
		{"whole seconds, 2 s before", at - int64(2*time.Second), true},
	} {
		id := fileID{Size: 1, Mtime: c.t, Ctime: c.t}
		if got := (digested{ID: id, At: at}).trusted(id); got != c.want {
			t.Errorf("%s: trusted %v, want %v", c.name, got, c.want)
		}
	}
}

// A file Open hashed and that did not change is sent without hashing it
// again; one that changed after Open (its identity moved) stops the upload.
func TestWriteTarNoticesAChangeWithoutHashing(t *testing.T) {
	cacheHome(t)
	dir := aged(t, map[string]string{"a": "alpha"})
	a, err := Open(dir, "app")
	if err != nil {
		t.Fatal(err)
	}
	if err := a.WriteTar(io.Discard); err != nil {
		t.Fatalf("unchanged: %v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "a"), []byte("ALPHA"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := a.WriteTar(io.Discard); err == nil || !strings.Contains(err.Error(), "changed while it was being read") {
		t.Fatalf("changed since Open: %v", err)
	}
}

// lieInCache makes the cache of dir, as a first Open left it, say that the
// file a has another digest, and returns the cache file.
func lieInCache(t *testing.T, home, dir string) string {
	t.Helper()
	if _, err := Open(dir, "app"); err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(home, "hoist", "digests", "*"))
	if len(files) != 1 {
		t.Fatalf("cache files: %v", files)
	}
	b, _ := os.ReadFile(files[0])
	var saved struct {
		Root    string
		Entries map[string]digested
	}
	if err := json.Unmarshal(b, &saved); err != nil {
		t.Fatal(err)
	}
	d := saved.Entries["a"]
	d.Sum = strings.Repeat("00", 32)
	saved.Entries["a"] = d
	b, _ = json.Marshal(saved)
	if err := os.WriteFile(files[0], b, 0o600); err != nil {
		t.Fatal(err)
	}
	return files[0]
}

// TestDigestCacheOthersCanWriteIsNotUsed: a cache file that someone else
// owns or may write, or a link at its name, could give any file any
// digest, and is not read: the tree is hashed and gets its true id. The
// user's own 0600 file is read (it tells the lie, which the upload would
// catch for the files it sends).
func TestDigestCacheOthersCanWriteIsNotUsed(t *testing.T) {
	dir := aged(t, map[string]string{"a": "alpha"})
	truth, err := OpenWith(context.Background(), dir, OpenOptions{Name: "app", NoCache: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		spoil func(t *testing.T, p string)
		used  bool
	}{
		{"the user's, 0600", func(*testing.T, string) {}, true},
		{"writable by others", func(t *testing.T, p string) { os.Chmod(p, 0o602) }, false},
		{"writable by its group", func(t *testing.T, p string) { os.Chmod(p, 0o620) }, false},
		{"a symlink to it", func(t *testing.T, p string) {
			os.Rename(p, p+".real")
			os.Symlink(p+".real", p)
		}, false},
		{"another user's", func(t *testing.T, p string) {
			if os.Getuid() != 0 {
				t.Skip("needs root: only root can give a file to another uid")
			}
			os.Chown(p, 65534, 65534)
		}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			home := cacheHome(t)
			p := lieInCache(t, home, dir)
			c.spoil(t, p)
			a, err := Open(dir, "app")
			if err != nil {
				t.Fatal(err)
			}
			if used := a.Digest != truth.Digest; used != c.used {
				t.Errorf("the lying cache file was used: %v, want %v", used, c.used)
			}
		})
	}
}

// TestNoCacheHashesEverything: push --no-cache finds the id by reading
// every file, whatever the cache says, and writes the cache anew.
func TestNoCacheHashesEverything(t *testing.T) {
	home := cacheHome(t)
	dir := aged(t, map[string]string{"a": "alpha", "b": "bravo"})
	p := lieInCache(t, home, dir)
	lied, _ := Open(dir, "app")
	a, err := OpenWith(context.Background(), dir, OpenOptions{Name: "app", NoCache: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range a.Entries {
		if e.cached {
			t.Errorf("%s: its digest came from the cache with NoCache", e.Path)
		}
	}
	if a.Digest == lied.Digest {
		t.Fatal("NoCache gave the id the lying cache gives")
	}
	if again, _ := Open(dir, "app"); again.Digest != a.Digest {
		t.Errorf("after NoCache the cache still lies (%s)", p)
	}
}

// TestDigestCacheUnusedWithoutChangeTime: on a file system that keeps no
// change time (sshfs reports the modification time for it), a file
// rewritten with its size and modification time put back looks unchanged,
// so no digest is taken from the cache there, and the upload hashes what
// it sends. The mount is a real sshfs over the system's sftp-server.
func TestDigestCacheUnusedWithoutChangeTime(t *testing.T) {
	sshd.RequireRoot(t)
	for _, tool := range []string{"sshfs", "fusermount3", "/usr/lib/openssh/sftp-server"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is not installed (make deps installs sshfs and openssh-server)", tool)
		}
	}
	if _, err := os.Stat("/dev/fuse"); err != nil {
		sshd.NeedMachine(t, "no /dev/fuse, so sshfs cannot mount")
	}
	cacheHome(t)
	tmp := t.TempDir()
	src, mnt := filepath.Join(tmp, "src"), filepath.Join(tmp, "mnt")
	os.MkdirAll(src, 0o755)
	os.MkdirAll(mnt, 0o755)
	old := time.Now().Add(-time.Hour).Truncate(time.Second)
	os.WriteFile(filepath.Join(src, "a"), []byte("alpha"), 0o644)
	os.Chtimes(filepath.Join(src, "a"), old, old)
	server := filepath.Join(tmp, "sftp")
	os.WriteFile(server, []byte("#!/bin/sh\nexec /usr/lib/openssh/sftp-server\n"), 0o755)
	if out, err := exec.Command("sshfs", "-o", "ssh_command="+server, "localhost:"+src, mnt).CombinedOutput(); err != nil {
		t.Fatalf("sshfs: %v %s", err, out)
	}
	t.Cleanup(func() { exec.Command("fusermount3", "-u", mnt).Run() })
	first, err := Open(mnt, "app")
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(src, "a"), []byte("ALPHA"), 0o644)
	os.Chtimes(filepath.Join(src, "a"), old, old)
	fi, _ := os.Stat(filepath.Join(mnt, "a"))
	if !fi.ModTime().Equal(old) || fi.Size() != 5 {
		t.Fatalf("through sshfs the file is %d bytes of %v", fi.Size(), fi.ModTime())
	}
	again, err := Open(mnt, "app")
	if err != nil {
		t.Fatal(err)
	}
	if again.Digest == first.Digest {
		t.Fatal("a file rewritten on sshfs with its size and time put back kept its cached digest")
	}
	for _, e := range again.Entries {
		if e.Type == 'f' && (e.cached || !e.untimed) {
			t.Errorf("%s: cached %v, hashed again by the upload %v", e.Path, e.cached, e.untimed)
		}
	}
	// Changed after Open, the upload sees it: it hashes what it sends.
	os.WriteFile(filepath.Join(src, "a"), []byte("alpha"), 0o644)
	os.Chtimes(filepath.Join(src, "a"), old, old)
	if err := again.WriteTar(io.Discard); err == nil || !strings.Contains(err.Error(), "changed while it was being read") {
		t.Errorf("WriteTar of a file changed on sshfs since Open: %v", err)
	}
}
