package store

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// tree makes a small runtime: files with modes, a nested directory, an
// empty directory and internal symlinks.
func tree(t *testing.T) string {
	t.Helper()
	d := t.TempDir()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(d, "bin"), 0o755))
	must(os.MkdirAll(filepath.Join(d, "lib", "x"), 0o700))
	must(os.MkdirAll(filepath.Join(d, "empty"), 0o755))
	must(os.WriteFile(filepath.Join(d, "bin", "tool"), []byte("#!/bin/sh\necho tool\n"), 0o755))
	must(os.WriteFile(filepath.Join(d, "lib", "x", "data"), []byte("data\x00\xff"), 0o640))
	must(os.Symlink("../lib/x/data", filepath.Join(d, "bin", "data")))
	must(os.Symlink("bin/tool", filepath.Join(d, "tool")))
	must(os.MkdirAll(filepath.Join(d, "ro"), 0o755))
	must(os.WriteFile(filepath.Join(d, "ro", "f"), []byte("read-only dir"), 0o444))
	must(os.Chmod(filepath.Join(d, "ro"), 0o555))
	t.Cleanup(func() { os.Chmod(filepath.Join(d, "ro"), 0o755) })
	return d
}

func TestDigestIgnoresTimesNotContents(t *testing.T) {
	d := tree(t)
	a, err := Open(d, "rt")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(a.ID(), "rt-") || len(a.ID()) != len("rt-")+12 {
		t.Fatalf("id %q", a.ID())
	}
	old := time.Now().Add(-time.Hour)
	os.Chtimes(filepath.Join(d, "bin", "tool"), old, old)
	b, _ := Open(d, "rt")
	if b.Digest != a.Digest {
		t.Fatal("an mtime changed the digest")
	}
	os.Chmod(filepath.Join(d, "bin", "tool"), 0o700)
	c, _ := Open(d, "rt")
	if c.Digest == a.Digest {
		t.Fatal("a mode change did not change the digest")
	}
	os.WriteFile(filepath.Join(d, "lib", "x", "data"), []byte("other"), 0o640)
	e, _ := Open(d, "rt")
	if e.Digest == c.Digest {
		t.Fatal("a content change did not change the digest")
	}
}

// TestTarRoundTrip: the archive hoist uploads extracts, with the host's own
// tar, to a tree with the same digest, and a .tar.gz of the tree has it too.
func TestTarRoundTrip(t *testing.T) {
	a, err := Open(tree(t), "rt")
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := a.WriteTar(&buf); err != nil {
		t.Fatal(err)
	}
	for _, tool := range []string{"tar", "busybox tar"} {
		out := t.TempDir()
		cmd := exec.Command("sh", "-c", "umask 0; cd "+out+" && "+tool+` -xf - && while IFS='	' read -r m p; do chmod "$m" "tree/$p"; done <modes`)
		cmd.Stdin = bytes.NewReader(buf.Bytes())
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s -x: %v %s", tool, err, b)
		}
		b, err := Open(filepath.Join(out, "tree"), "rt")
		if err != nil || b.Digest != a.Digest {
			t.Fatalf("%s: extracted tree: %v, digest %s want %s", tool, err, b.Digest, a.Digest)
		}
		exec.Command("chmod", "-R", "u+w", out).Run()
	}
	gz := filepath.Join(t.TempDir(), "rt.tar.gz")

	var zb bytes.Buffer
	zw := gzip.NewWriter(&zb)
	zw.Write(plainTar(t, a))
	zw.Close()
	os.WriteFile(gz, zb.Bytes(), 0o644)
	c, err := Open(gz, "")
	if err != nil || c.Digest != a.Digest || c.Name != "rt" {
		t.Fatalf("from .tar.gz: %v %+v", err, c)
	}
	var again bytes.Buffer
	if err := c.WriteTar(&again); err != nil {
		t.Fatal(err)
	}
}

// plainTar is the tree as an ordinary archive, the way a user would make it.
func plainTar(t *testing.T, a *Artifact) []byte {
	t.Helper()
	var buf bytes.Buffer
	out, err := exec.Command("tar", "-C", a.Source, "-cf", "-", ".").Output()
	if err != nil {
		t.Fatal(err)
	}
	buf.Write(out)
	return buf.Bytes()
}

func tarball(t *testing.T, entries ...*tar.Header) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "bad.tar")
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, h := range entries {
		if h.Typeflag == 0 {
			h.Typeflag = tar.TypeReg
		}
		h.Mode = 0o644
		tw.WriteHeader(h)
		if h.Typeflag == tar.TypeReg {
			tw.Write(make([]byte, h.Size))
		}
	}
	tw.Close()
	os.WriteFile(p, buf.Bytes(), 0o644)
	return p
}

func TestRefusesEscapes(t *testing.T) {
	for name, p := range map[string]string{
		"dot-dot":           tarball(t, &tar.Header{Name: "../escape", Size: 1}),
		"nested dot-dot":    tarball(t, &tar.Header{Name: "a/../../escape", Size: 1}),
		"absolute":          tarball(t, &tar.Header{Name: "/etc/cron.d/x", Size: 1}),
		"absolute link":     tarball(t, &tar.Header{Name: "l", Typeflag: tar.TypeSymlink, Linkname: "/etc/passwd"}),
		"escaping link":     tarball(t, &tar.Header{Name: "a/l", Typeflag: tar.TypeSymlink, Linkname: "../../x"}),
		"through a symlink": tarball(t, &tar.Header{Name: "l", Typeflag: tar.TypeSymlink, Linkname: "."}, &tar.Header{Name: "l/f", Size: 1}),
		"device":            tarball(t, &tar.Header{Name: "dev", Typeflag: tar.TypeChar}),
		"twice":             tarball(t, &tar.Header{Name: "f", Size: 1}, &tar.Header{Name: "./f", Size: 2}),
		"dangling hardlink": tarball(t, &tar.Header{Name: "h", Typeflag: tar.TypeLink, Linkname: "nothere"}),
	} {
		if _, err := Open(p, "rt"); !errors.Is(err, ErrArtifact) {
			t.Errorf("%s: want ErrArtifact, got %v", name, err)
		}
	}
	d := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(d, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(d, "rt"); !errors.Is(err, ErrArtifact) {
		t.Errorf("fifo: want ErrArtifact, got %v", err)
	}
}

func TestInternalLinksAndHardLinksAreKept(t *testing.T) {
	p := tarball(t,
		&tar.Header{Name: "a/", Typeflag: tar.TypeDir},
		&tar.Header{Name: "a/f", Size: 3},
		&tar.Header{Name: "a/up", Typeflag: tar.TypeSymlink, Linkname: "../a/f"},
		&tar.Header{Name: "a/hard", Typeflag: tar.TypeLink, Linkname: "a/f"},
	)
	a, err := Open(p, "")
	if err != nil {
		t.Fatal(err)
	}
	if a.Name != "bad" || len(a.Entries) != 4 || a.Size != 6 {
		t.Fatalf("%+v", a)
	}
}

func TestNames(t *testing.T) {
	for in, want := range map[string]string{
		"/x/node-v20.1.0-linux-x64.tar.gz": "node-v20.1.0-linux-x64",
		"py.tgz":                           "py",
		"my app!.tar":                      "my-app-",
		"/srv/build/":                      "build",
		".hidden":                          "hidden",
	} {
		if got := DefaultName(in); got != want {
			t.Errorf("DefaultName(%q) = %q, want %q", in, got, want)
		}
	}
	for _, bad := range []string{"", ".x", "a/b", "a b", strings.Repeat("x", 65)} {
		if ValidName(bad) {
			t.Errorf("ValidName(%q)", bad)
		}
	}
}
