package store

import (
	"archive/tar"
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestArchiveSizeIsWhatIsSent: the size push announces and counts progress
// against is the size of the archive it sends, to the byte: for a
// directory with names long enough for PAX headers and names that are not
// ASCII, for every archive format with hard links, directories after what
// they hold and directories only implied, and with files the host already
// has, which travel as links.
func TestArchiveSizeIsWhatIsSent(t *testing.T) {
	d := linkedTree(t)
	long := filepath.Join(d, strings.Repeat("deep/", 30))
	if err := os.MkdirAll(long, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, body := range map[string]string{
		strings.Repeat("n", 150): "long name", "ünïcødé": "", "big": strings.Repeat("x", 70000),
	} {
		if err := os.WriteFile(filepath.Join(long, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	arts := map[string]string{"directory": d}
	dir := t.TempDir()
	for name, b := range map[string][]byte{"rt.tar": goTar(t, d), "rt.tar.gz": compress(t, formatGzip, goTar(t, d)), "rt.zip": goZip(t, d)} {
		arts[name] = filepath.Join(dir, name)
		os.WriteFile(arts[name], b, 0o644)
	}
	// Directories after their files, or not there at all.
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, h := range []*tar.Header{
		{Name: "a/b/c/f", Typeflag: tar.TypeReg, Mode: 0o644, Size: 3},
		{Name: "a/b/", Typeflag: tar.TypeDir, Mode: 0o750},
		{Name: "a/b/g", Typeflag: tar.TypeLink, Linkname: "a/b/c/f"},
	} {
		tw.WriteHeader(h)
		if h.Size > 0 {
			tw.Write([]byte("abc"))
		}
	}
	tw.Close()
	arts["implied.tar"] = filepath.Join(dir, "implied.tar")
	os.WriteFile(arts["implied.tar"], buf.Bytes(), 0o644)

	for what, src := range arts {
		a, err := Open(src, "rt")
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		var someFile Entry
		for _, e := range a.Entries {
			if e.Type == 'f' && e.link == "" {
				someFile = e
			}
		}
		for _, pool := range []map[string]string{nil, {ReuseName(someFile.Sum, someFile.Mode): "x/" + someFile.Path}} {
			var sent bytes.Buffer
			if err := a.writeTar(context.Background(), &sent, pool); err != nil {
				t.Fatalf("%s: %v", what, err)
			}
			got, err := a.archiveSize(pool)
			if err != nil || got != int64(sent.Len()) {
				t.Errorf("%s (pool %v): archiveSize %d, %v; writeTar wrote %d", what, pool, got, err, sent.Len())
			}
		}
	}
}
