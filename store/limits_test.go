package store

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// holey is a directory holding one file of size bytes, all of it a hole.
func holey(t *testing.T, size int64) string {
	t.Helper()
	dir := t.TempDir()
	f, err := os.Create(filepath.Join(dir, "big"))
	if err == nil {
		err = f.Truncate(size)
		f.Close()
	}
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// sparseTarOf is a tar of a few KiB declaring one file of size bytes, one
// hole, as GNU tar --sparse writes it.
func sparseTarOf(t *testing.T, size int64) string {
	t.Helper()
	dir := holey(t, size)
	p := filepath.Join(t.TempDir(), "sparse.tar")
	if out, err := exec.Command("tar", "-S", "-C", dir, "-cf", p, "big").CombinedOutput(); err != nil {
		t.Fatalf("tar -S: %v %s", err, out)
	}
	return p
}

// zipDeclaring is a zip whose one entry declares size bytes uncompressed
// and holds five.
func zipDeclaring(t *testing.T, size uint64) string {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	w, err := zw.CreateRaw(&zip.FileHeader{Name: "big", Method: zip.Store, CompressedSize64: 5, UncompressedSize64: size})
	if err == nil {
		_, err = w.Write([]byte("zeros"))
	}
	if err != nil || zw.Close() != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "big.zip")
	os.WriteFile(p, buf.Bytes(), 0o644)
	return p
}

// TestDeclaredSizesAreCheckedBeforeReading: what an artifact declares (a
// sparse tar entry's logical size, a zip's uncompressed size, a file's
// size in a directory), and what its files come to, is checked against
// the limit before a byte of it is read, and the error says both numbers.
func TestDeclaredSizesAreCheckedBeforeReading(t *testing.T) {
	cacheHome(t)
	const huge = 200 << 30
	for _, c := range []struct {
		name, source string
		max          int64
		want         string
	}{
		{"a sparse tar of 200 GiB, the default limit", sparseTarOf(t, huge), 0,
			"big is 200.0 GiB (214748364800 bytes), over the limit of 32.0 GiB (34359738368 bytes); push --max-size raises it"},
		{"a zip that declares 200 GiB", zipDeclaring(t, huge), 0, "big is 200.0 GiB (214748364800 bytes), over the limit of 32.0 GiB"},
		{"a directory with a 200 GiB file", holey(t, huge), 0, "big is 200.0 GiB (214748364800 bytes), over the limit of 32.0 GiB"},
		{"two files that come to more than the limit", tarball(t, &tar.Header{Name: "a", Size: 700 << 10}, &tar.Header{Name: "b", Size: 700 << 10}), 1 << 20,
			"its files come to 1.4 MiB (1433600 bytes) by b, over the limit of 1.0 MiB (1048576 bytes)"},
		{"a hard link counts as its file", tarball(t, &tar.Header{Name: "a", Size: 700 << 10}, &tar.Header{Name: "b", Typeflag: tar.TypeLink, Linkname: "a"}), 1 << 20,
			"its files come to 1.4 MiB (1433600 bytes) by b"},
	} {
		t.Run(c.name, func(t *testing.T) {
			start := time.Now()
			_, err := OpenWith(context.Background(), c.source, OpenOptions{Name: "rt", MaxSize: c.max})
			if !errors.Is(err, ErrArtifact) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("want %q, got %v", c.want, err)
			}
			t.Logf("refused in %v: %v", time.Since(start).Round(time.Millisecond), err)
		})
	}
	// At the limit exactly is within it; a sparse file within it is read
	// as a file of its logical size.
	a, err := OpenWith(context.Background(), sparseTarOf(t, 1<<20), OpenOptions{Name: "rt", MaxSize: 1 << 20})
	if err != nil || a.Size != 1<<20 {
		t.Fatalf("a sparse tar of 1 MiB under a 1 MiB limit: %v", err)
	}
}

// TestOpenStopsWhenCancelled: hashing a directory's file, reading an
// archive (a sparse entry's holes read as zeros without touching the
// file) and reading a stream whose writer stalled all stop at once when
// the context is cancelled, with its error.
func TestOpenStopsWhenCancelled(t *testing.T) {
	cacheHome(t)
	const huge = 200 << 30
	open := map[string]func(ctx context.Context) (*Artifact, error){
		"a directory": func(ctx context.Context) (*Artifact, error) {
			return OpenWith(ctx, holey(t, huge), OpenOptions{Name: "rt", MaxSize: 1 << 40})
		},
		"a sparse tar": func(ctx context.Context) (*Artifact, error) {
			return OpenWith(ctx, sparseTarOf(t, huge), OpenOptions{Name: "rt", MaxSize: 1 << 40})
		},
		"a stream that stalls": func(ctx context.Context) (*Artifact, error) {
			r, w := io.Pipe()
			t.Cleanup(func() { w.Close() })
			go w.Write([]byte("rt/"))
			return OpenReader(ctx, r, OpenOptions{Name: "rt"})
		},
	}
	for name, open := range open {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() {
				_, err := open(ctx)
				done <- err
			}()
			time.Sleep(300 * time.Millisecond)
			cancel()
			select {
			case err := <-done:
				if !errors.Is(err, context.Canceled) {
					t.Fatalf("cancelled: %v", err)
				}
			case <-time.After(30 * time.Second):
				t.Fatal("still reading 30 s after the cancellation")
			}
		})
	}
}
