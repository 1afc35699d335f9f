package store

import (
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
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
	os.WriteFile(files[0], b, 0o600)
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
