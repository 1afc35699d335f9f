package store

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/klauspost/compress/zstd"
	"github.com/ulikunitz/xz"
)

// linkedTree is tree with a hard link added: bin/tool2 shares bin/tool.
func linkedTree(t *testing.T) string {
	t.Helper()
	d := tree(t)
	if err := os.Link(filepath.Join(d, "bin", "tool"), filepath.Join(d, "bin", "tool2")); err != nil {
		t.Fatal(err)
	}
	return d
}

// goTar archives dir with archive/tar, a second name of a file as a hard
// link to the first, the way GNU tar does.
func goTar(t *testing.T, dir string) []byte {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	first := map[uint64]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		rel, _ := filepath.Rel(dir, p)
		if err != nil || rel == "." {
			return err
		}
		fi, _ := d.Info()
		target, _ := os.Readlink(p)
		h, err := tar.FileInfoHeader(fi, target)
		if err != nil {
			return err
		}
		h.Name = filepath.ToSlash(rel)
		if fi.IsDir() {
			h.Name += "/"
		}
		ino := fi.Sys().(*syscall.Stat_t).Ino
		if prev, ok := first[ino]; ok && fi.Mode().IsRegular() {
			h.Typeflag, h.Linkname, h.Size = tar.TypeLink, prev, 0
		}
		first[ino] = h.Name
		if err := tw.WriteHeader(h); err != nil || h.Typeflag != tar.TypeReg {
			return err
		}
		b, err := os.ReadFile(p)
		tw.Write(b)
		return err
	})
	if err != nil || tw.Close() != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func compress(t *testing.T, f format, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	var w io.WriteCloser
	var err error
	switch f {
	case formatGzip:
		w = gzip.NewWriter(&buf)
	case formatXz:
		w, err = xz.NewWriter(&buf)
	case formatZstd:
		w, err = zstd.NewWriter(&buf)
	}
	if err != nil {
		t.Fatal(err)
	}
	w.Write(b)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// sameTree fails unless b holds a's entries, every field hoist installs.
func sameTree(t *testing.T, what string, a, b *Artifact) {
	t.Helper()
	if b.Digest != a.Digest || b.Size != a.Size || len(b.Entries) != len(a.Entries) {
		t.Fatalf("%s: digest %s size %d %d entries; want %s %d %d", what, b.Digest, b.Size, len(b.Entries), a.Digest, a.Size, len(a.Entries))
	}
	for i, e := range a.Entries {
		f := b.Entries[i]
		if e.Path != f.Path || e.Type != f.Type || e.Mode != f.Mode || e.Target != f.Target || e.Size != f.Size || e.Sum != f.Sum {
			t.Errorf("%s: entry %+v, want %+v", what, f, e)
		}
	}
}

// TestEveryFormatGivesTheSameID: one tree as a directory, a tar plain and
// compressed each way hoist reads, and a zip made by archive/zip and by the
// zip tool, reads as the same entries with the same digest; what WriteTar
// makes of the zip unpacks to that tree again.
func TestEveryFormatGivesTheSameID(t *testing.T) {
	d := linkedTree(t)
	a, err := Open(d, "rt")
	if err != nil {
		t.Fatal(err)
	}
	if e, _ := entry(a, "empty"); e.Type != 'd' || len(a.Entries) != 11 {
		t.Fatalf("the tree: %+v", a.Entries)
	}
	plain := goTar(t, d)
	dir := t.TempDir()
	files := map[string][]byte{
		"rt.tar":     plain,
		"rt.tar.gz":  compress(t, formatGzip, plain),
		"rt.tar.xz":  compress(t, formatXz, plain),
		"rt.tar.zst": compress(t, formatZstd, plain),
		"rt.zip":     goZip(t, d),
		"rt.tgz":     plain, // a plain tar by another name is read as one
	}
	for name, b := range files {
		p := filepath.Join(dir, name)
		os.WriteFile(p, b, 0o644)
		b, err := Open(p, "")
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if b.Name != "rt" {
			t.Errorf("%s: named %q", name, b.Name)
		}
		sameTree(t, name, a, b)
		c, err := Open(unpack(t, writeTar(t, b), "tar"), "rt")
		if err != nil {
			t.Fatalf("%s: unpacked: %v", name, err)
		}
		sameTree(t, name+" unpacked", a, c)
	}
	// The zip tool stores the hard link as a copy, and links as links (-y).
	if _, err := exec.LookPath("zip"); err != nil {
		t.Log("zip is not installed: zips made by archive/zip only")
		return
	}
	p := filepath.Join(dir, "cli.zip")
	if out, err := exec.Command("sh", "-c", "cd "+d+" && zip -q -r -y "+p+" .").CombinedOutput(); err != nil {
		t.Fatalf("zip: %v %s", err, out)
	}
	b, err := Open(p, "rt")
	if err != nil {
		t.Fatalf("cli.zip: %v", err)
	}
	sameTree(t, "cli.zip", a, b)
}

// TestUnknownFormatIsRefused: something hoist cannot read is called that,
// by its extension, with what hoist takes; never "unexpected EOF".
func TestUnknownFormatIsRefused(t *testing.T) {
	random := make([]byte, 700)
	rand.New(rand.NewSource(1)).Read(random)
	dir := t.TempDir()
	const takes = "hoist takes a directory, .tar, .tar.gz, .tgz, .tar.xz, .tar.zst, .zip, or - for a tar on standard input"
	for name, b := range map[string][]byte{
		"junk.bin":    random,
		"short":       random[:5],
		"x.rar":       []byte("Rar!\x1a\x07\x00rest of an archive"),
		"x.tar.bz2":   append([]byte("BZh91AY&SY"), random[:200]...), // a small one
		"v1.0-linux":  random,                                        // no extension: ".0-linux" is not one
		"damaged.tar": random,                                        // hoist reads tars: this one is not
	} {
		p := filepath.Join(dir, name)
		os.WriteFile(p, b, 0o644)
		_, err := Open(p, "rt")
		want := "unsupported archive format (" + filepath.Ext(name) + "): " + takes
		switch name {
		case "short", "v1.0-linux":
			want = "unsupported archive format (unknown): " + takes
		case "x.tar.bz2":
			want = "unsupported archive format (.tar.bz2)"
		case "damaged.tar":
			want = "is damaged or not a .tar archive"
		}
		if !errors.Is(err, ErrArtifact) || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), p) ||
			strings.Contains(err.Error(), "EOF") || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: want %q, got %v", name, want, err)
		}
	}
}

// TestCompressedCutsAreRefused: an .xz or .zst cut anywhere, even past the
// tar's end, or with a byte changed, is refused in one line naming it.
// (The file's name says neither: its first bytes do.)
func TestCompressedCutsAreRefused(t *testing.T) {
	plain := goTar(t, tree(t))
	dir := t.TempDir()
	for _, f := range []format{formatXz, formatZstd} {
		whole := compress(t, f, plain)
		p := filepath.Join(dir, "rt.tar.x")
		os.WriteFile(p, whole, 0o644)
		if _, err := Open(p, "rt"); err != nil {
			t.Fatalf("format %d whole: %v", f, err)
		}
		refused := func(b []byte, what string) {
			t.Helper()
			os.WriteFile(p, b, 0o644)
			_, err := Open(p, "rt")
			if !errors.Is(err, ErrArtifact) || !strings.Contains(err.Error(), p) || strings.Contains(err.Error(), "\n") {
				t.Errorf("format %d, %s: %v", f, what, err)
			}
		}
		for n := 1; n < len(whole); n++ {
			refused(whole[:n], fmt.Sprintf("%d of %d bytes", n, len(whole)))
		}
		flipped := bytes.Clone(whole)
		flipped[len(flipped)/2] ^= 0x55
		refused(flipped, "a byte changed")
		// A second stream, cut, after the one holding the tar: the tar
		// reader never gets there, only the check that the file is whole.
		refused(append(bytes.Clone(whole), compress(t, f, []byte("more"))[:12]...), "a second stream cut")
	}
}
