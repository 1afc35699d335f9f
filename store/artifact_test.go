package store

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
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
		if err != nil {
			t.Fatalf("%s: extracted tree: %v", tool, err)
		}
		if b.Digest != a.Digest {
			t.Fatalf("%s: extracted tree: digest %s want %s", tool, b.Digest, a.Digest)
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
		if h.Mode == 0 {
			h.Mode = 0o644
		}
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
		"/x/py-3.12.tar.xz":                "py-3.12",
		"py.txz":                           "py",
		"py.tar.zst":                       "py",
		"py.tzst":                          "py",
		"py.zip":                           "py",
		"py.tar.bz2":                       "py.tar.bz2", // not one hoist reads
		"py.zip.tar.gz":                    "py.zip",     // one extension goes
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

// writeTar is a's archive, as WriteTar makes it.
func writeTar(t *testing.T, a *Artifact) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := a.WriteTar(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// headers lists an archive's headers.
func headers(t *testing.T, archive []byte) []*tar.Header {
	t.Helper()
	var hs []*tar.Header
	tr := tar.NewReader(bytes.NewReader(archive))
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return hs
		}
		if err != nil {
			t.Fatal(err)
		}
		hs = append(hs, h)
	}
}

// unpack extracts an archive WriteTar made as the host does: with umask 0,
// then the directory modes from the modes file. It returns the tree.
func unpack(t *testing.T, archive []byte, tool string) string {
	t.Helper()
	out := t.TempDir()
	t.Cleanup(func() { exec.Command("chmod", "-R", "u+w", out).Run() })
	cmd := exec.Command("sh", "-c", "umask 0; cd "+out+" && "+tool+` -xf - && while IFS='	' read -r m p; do chmod "$m" "tree/$p"; done <modes`)
	cmd.Stdin = bytes.NewReader(archive)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s -x: %v %s", tool, err, b)
	}
	return filepath.Join(out, "tree")
}

func entry(a *Artifact, p string) (Entry, bool) {
	i := slices.IndexFunc(a.Entries, func(e Entry) bool { return e.Path == p })
	if i < 0 {
		return Entry{}, false
	}
	return a.Entries[i], true
}

// TestImplicitDirectoriesAre0755: a tarball made from a list of files has
// no directory entries; the host's tar, under umask 0, made them 0777.
// Every directory the artifact implies is now an entry, 0755, written before
// what it holds and covered by the digest; the ones it describes, even after
// their contents or world-writable, keep their modes.
func TestImplicitDirectoriesAre0755(t *testing.T) {
	p := tarball(t,
		&tar.Header{Name: "a/b/f", Size: 1},
		&tar.Header{Name: "c/d/g", Size: 1},
		&tar.Header{Name: "c/", Typeflag: tar.TypeDir, Mode: 0o750},
		&tar.Header{Name: "open/", Typeflag: tar.TypeDir, Mode: 0o777},
		&tar.Header{Name: "open/h", Size: 1, Mode: 0o666},
	)
	a, err := Open(p, "rt")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]fs.FileMode{"a": 0o755, "a/b": 0o755, "a/b/f": 0o644, "c": 0o750, "c/d": 0o755, "c/d/g": 0o644, "open": 0o777, "open/h": 0o666}
	if len(a.Entries) != len(want) {
		t.Fatalf("%d entries, want %d: %+v", len(a.Entries), len(want), a.Entries)
	}
	for p, m := range want {
		if e, ok := entry(a, p); !ok || e.Mode != m {
			t.Errorf("%s: %+v, want mode %o", p, e, m)
		}
	}
	described := tarball(t,
		&tar.Header{Name: "a/", Typeflag: tar.TypeDir, Mode: 0o755},
		&tar.Header{Name: "a/b/", Typeflag: tar.TypeDir, Mode: 0o755},
		&tar.Header{Name: "a/b/f", Size: 1},
		&tar.Header{Name: "c/", Typeflag: tar.TypeDir, Mode: 0o750},
		&tar.Header{Name: "c/d/", Typeflag: tar.TypeDir, Mode: 0o755},
		&tar.Header{Name: "c/d/g", Size: 1},
		&tar.Header{Name: "open/", Typeflag: tar.TypeDir, Mode: 0o777},
		&tar.Header{Name: "open/h", Size: 1, Mode: 0o666},
	)
	if b, err := Open(described, "rt"); err != nil || b.Digest != a.Digest {
		t.Fatalf("the same tree described in full: %v, another digest", err)
	}
	archive := writeTar(t, a)
	written := map[string]bool{}
	for _, h := range headers(t, archive) {
		name := strings.TrimSuffix(h.Name, "/")
		if dir := path.Dir(name); dir != "." && !written[dir] {
			t.Errorf("%s is written before its directory", name)
		}
		if written[name] {
			t.Errorf("%s is written twice", name)
		}
		written[name] = true
		if name != "tree/open" && name != "tree/open/h" && h.Mode&0o022 != 0 {
			t.Errorf("hoist writes %s mode %o", name, h.Mode)
		}
	}
	for _, tool := range []string{"tar", "busybox tar"} {
		tree := unpack(t, archive, tool)
		for p, m := range want {
			if fi, err := os.Lstat(filepath.Join(tree, p)); err != nil || fi.Mode().Perm() != m {
				t.Errorf("%s: %s unpacked %v, want %o", tool, p, fi.Mode(), m)
			}
		}
	}
}

// TestEntryDeepBeneathSymlinkIsRefused: only an entry's immediate parent
// was checked, so l/x/f got past a symlink l whose l/x was not described.
func TestEntryDeepBeneathSymlinkIsRefused(t *testing.T) {
	p := tarball(t,
		&tar.Header{Name: "l", Typeflag: tar.TypeSymlink, Linkname: "."},
		&tar.Header{Name: "l/x/f", Size: 1},
	)
	if _, err := Open(p, "rt"); !errors.Is(err, ErrArtifact) {
		t.Fatalf("want ErrArtifact, got %v", err)
	}
}

// setuidTarball holds setuid and setgid files, a hard link to one, a setgid
// directory and a sticky one, owned by somebody.
func setuidTarball(t *testing.T, su, sg, shared fs.FileMode) string {
	return tarball(t,
		&tar.Header{Name: "bin/", Typeflag: tar.TypeDir, Mode: 0o755},
		&tar.Header{Name: "bin/su", Size: 1, Mode: int64(su), Uid: 1234, Gid: 1234, Uname: "mallory", Gname: "mallory"},
		&tar.Header{Name: "bin/sg", Size: 2, Mode: int64(sg)},
		&tar.Header{Name: "bin/su2", Typeflag: tar.TypeLink, Linkname: "bin/su", Mode: int64(su)},
		&tar.Header{Name: "shared/", Typeflag: tar.TypeDir, Mode: int64(shared), Uid: 1234, Uname: "mallory"},
		&tar.Header{Name: "spool/", Typeflag: tar.TypeDir, Mode: 0o1777},
	)
}

// TestSetuidIsStrippedByDefault: setuid and setgid bits are removed from
// every entry and the paths listed; the digest and the archive have the
// modes as installed, the sticky bit stays, and no owner travels.
func TestSetuidIsStrippedByDefault(t *testing.T) {
	a, err := Open(setuidTarball(t, 0o4755, 0o2711, 0o2775), "rt")
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"bin/sg", "bin/su", "bin/su2", "shared"}; !slices.Equal(a.Stripped, want) {
		t.Errorf("Stripped %q, want %q", a.Stripped, want)
	}
	plain, err := Open(setuidTarball(t, 0o755, 0o711, 0o775), "rt")
	if err != nil || plain.Digest != a.Digest || len(plain.Stripped) != 0 {
		t.Fatalf("the tree as installed: %v, digest %s want %s, stripped %q", err, plain.Digest, a.Digest, plain.Stripped)
	}
	archive := writeTar(t, a)
	for _, h := range headers(t, archive) {
		if h.Mode&0o6000 != 0 {
			t.Errorf("%s is written mode %o", h.Name, h.Mode)
		}
		if h.Name == "tree/spool/" && h.Mode != 0o1777 {
			t.Errorf("%s is written mode %o, want 1777", h.Name, h.Mode)
		}
		if h.Uid != 0 || h.Gid != 0 || h.Uname != "" || h.Gname != "" {
			t.Errorf("%s is owned by %d:%d %q:%q", h.Name, h.Uid, h.Gid, h.Uname, h.Gname)
		}
	}
	tree := unpack(t, archive, "tar")
	for p, m := range map[string]fs.FileMode{"bin/su": 0o755, "bin/su2": 0o755, "bin/sg": 0o711, "shared": fs.ModeDir | 0o775, "spool": fs.ModeDir | fs.ModeSticky | 0o777} {
		if fi, err := os.Lstat(filepath.Join(tree, p)); err != nil || fi.Mode() != m {
			t.Errorf("%s unpacked %v, want %v", p, fi.Mode(), m)
		}
	}

	d := t.TempDir()
	os.WriteFile(filepath.Join(d, "x"), []byte("x"), 0o755)
	if err := os.Chmod(filepath.Join(d, "x"), fs.ModeSetuid|0o755); err != nil {
		t.Fatal(err)
	}
	b, err := Open(d, "rt")
	if err != nil || !slices.Equal(b.Stripped, []string{"x"}) || b.Entries[0].Mode != 0o755 {
		t.Fatalf("from a directory: %v %+v", err, b)
	}
}

// TestKeepSetuidKeepsTheBits: with KeepSetuid the bits stay, in the digest
// and the archive, and the archive can be written again from the source.
func TestKeepSetuidKeepsTheBits(t *testing.T) {
	p := setuidTarball(t, 0o4755, 0o2711, 0o2775)
	a, err := OpenWith(context.Background(), p, OpenOptions{Name: "rt", KeepSetuid: true})
	if err != nil {
		t.Fatal(err)
	}
	stripped, _ := Open(p, "rt")
	if len(a.Stripped) != 0 || a.Digest == stripped.Digest {
		t.Fatalf("kept: stripped %q, digest %s like the stripped tree's", a.Stripped, a.Digest)
	}
	modes := map[string]int64{}
	for _, h := range headers(t, writeTar(t, a)) {
		modes[h.Name] = h.Mode
	}
	if modes["tree/bin/su"] != 0o4755 || modes["tree/bin/sg"] != 0o2711 || modes["tree/shared/"] != 0o2775 {
		t.Fatalf("archive modes %v", modes)
	}
}

// TestSymlinkedSourceIsFollowed: a source given as a symlink to a directory
// installed an empty runtime, since WalkDir does not descend a symlinked
// root. It is followed, once: the links inside stay links.
func TestSymlinkedSourceIsFollowed(t *testing.T) {
	d := tree(t)
	a, err := Open(d, "rt")
	if err != nil {
		t.Fatal(err)
	}
	latest := filepath.Join(t.TempDir(), "latest")
	os.Symlink(d, latest)
	b, err := Open(latest, "rt")
	if err != nil {
		t.Fatal(err)
	}
	if b.Digest != a.Digest || len(b.Entries) != len(a.Entries) || b.Source != latest {
		t.Fatalf("through a link: %d entries, digest %s; want %d, %s", len(b.Entries), b.Digest, len(a.Entries), a.Digest)
	}
	if e, ok := entry(b, "tool"); !ok || e.Type != 'l' {
		t.Fatalf("an inner link became %+v", e)
	}
	if c, err := Open(unpack(t, writeTar(t, b), "tar"), "rt"); err != nil || c.Digest != a.Digest {
		t.Fatalf("unpacked: %v", err)
	}
	archive := filepath.Join(t.TempDir(), "rt.tar")
	os.WriteFile(archive, plainTar(t, a), 0o644)
	current := filepath.Join(t.TempDir(), "current.tar")
	os.Symlink(archive, current)
	c, err := Open(current, "rt")
	if err != nil || c.Digest != a.Digest {
		t.Fatalf("a link to an archive: %v", err)
	}
	writeTar(t, c)
}

// TestEmptyArtifactIsRefused: an artifact with nothing in it is a mistake,
// not a runtime.
func TestEmptyArtifactIsRefused(t *testing.T) {
	empty := t.TempDir()
	link := filepath.Join(t.TempDir(), "link")
	os.Symlink(empty, link)
	var marker bytes.Buffer
	tar.NewWriter(&marker).Close()
	onlyMarker := filepath.Join(t.TempDir(), "marker.tar")
	os.WriteFile(onlyMarker, marker.Bytes(), 0o644)
	for _, src := range []string{empty, link, onlyMarker, tarball(t, &tar.Header{Name: "./", Typeflag: tar.TypeDir})} {
		_, err := Open(src, "rt")
		if !errors.Is(err, ErrArtifact) || !strings.Contains(err.Error(), src+": the artifact is empty; nothing to install") {
			t.Errorf("%s: got %v", src, err)
		}
	}
}

// TestArchiveCutShortIsRefused: archive/tar reads an archive that stops at
// a block boundary (or in the padding of its last entry) as a finished one,
// and a gzip stream is checked only at its end, which the tar reader need
// not reach. Every cut is refused, in one line naming the file; an archive
// with both, or one, of its closing zero blocks is read.
func TestArchiveCutShortIsRefused(t *testing.T) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	tw.WriteHeader(&tar.Header{Name: "d/", Typeflag: tar.TypeDir, Mode: 0o755})
	for _, f := range []struct {
		name string
		body []byte
	}{
		{"d/f", bytes.Repeat([]byte("x"), 1000)},
		{"z", make([]byte, 512)}, // ends in a zero block, like the end marker
		{"p", []byte("tail")},    // padded
	} {
		tw.WriteHeader(&tar.Header{Name: f.name, Mode: 0o644, Size: int64(len(f.body))})
		tw.Write(f.body)
	}
	tw.Close()
	whole := buf.Bytes()
	body := len(whole) - 2*blockSize
	dir := t.TempDir()
	file := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, b, 0o644)
		return p
	}
	refused := func(p, why string) {
		t.Helper()
		_, err := Open(p, "rt")
		if !errors.Is(err, ErrArtifact) || !strings.Contains(err.Error(), p) || !strings.Contains(err.Error(), why) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: want a one-line refusal naming it, with %q; got %v", filepath.Base(p), why, err)
		}
	}
	for _, n := range []int{len(whole), body + blockSize} {
		if _, err := Open(file("ok.tar", whole[:n]), "rt"); err != nil {
			t.Errorf("%d of %d bytes: %v", n, len(whole), err)
		}
	}
	refused(file("zero.tar", nil), "empty file")
	for n := 0; n <= body; n += blockSize {
		for _, cut := range []int{n, n + 1, n + 300} {
			if cut > 0 {
				refused(file("cut.tar", whole[:cut]), "cut short")
			}
		}
	}
	gz := func(b []byte) []byte {
		var z bytes.Buffer
		zw := gzip.NewWriter(&z)
		zw.Write(b)
		zw.Close()
		return z.Bytes()
	}
	wholegz := gz(whole)
	if _, err := Open(file("ok.tar.gz", wholegz), "rt"); err != nil {
		t.Errorf("whole .tar.gz: %v", err)
	}
	for _, n := range []int{5, 10, len(wholegz) / 2, len(wholegz) - 8, len(wholegz) - 4, len(wholegz) - 1} {
		refused(file("cut.tar.gz", wholegz[:n]), "cut short")
	}
	refused(file("inner.tar.gz", gz(whole[:body])), "no end-of-archive marker")
	bad := slices.Clone(wholegz)
	bad[len(bad)-8] ^= 0xff // the CRC
	refused(file("crc.tar.gz", bad), "damaged")
}

// TestGitArchiveAndSparseTarsAreRead: the pax global header git archive
// writes is metadata, not an entry; a GNU sparse file is a file of its
// logical size. Both read like the plain tree.
func TestGitArchiveAndSparseTarsAreRead(t *testing.T) {
	dir := t.TempDir()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	tw.WriteHeader(&tar.Header{Typeflag: tar.TypeXGlobalHeader, Name: "pax_global_header", PAXRecords: map[string]string{"comment": "0123456789abcdef"}})
	tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: "a/f", Mode: 0o644, Size: 2})
	tw.Write([]byte("hi"))
	tw.Close()
	git := filepath.Join(dir, "git.tar")
	os.WriteFile(git, buf.Bytes(), 0o644)
	a, err := Open(git, "rt")
	if err != nil {
		t.Fatalf("a git archive: %v", err)
	}
	if len(a.Entries) != 2 || a.Entries[1].Path != "a/f" {
		t.Fatalf("entries %+v", a.Entries)
	}
	if _, err := exec.LookPath("tar"); err != nil {
		t.Fatal("tar is not installed")
	}
	src := filepath.Join(dir, "src")
	os.MkdirAll(src, 0o755)
	f, _ := os.Create(filepath.Join(src, "sparse"))
	f.Truncate(1 << 20)
	f.WriteAt([]byte("end"), 1<<20-3)
	f.Close()
	sparse := filepath.Join(dir, "sparse.tar")
	if out, err := exec.Command("tar", "-S", "-C", src, "-cf", sparse, "sparse").CombinedOutput(); err != nil {
		t.Fatalf("tar -S: %v %s", err, out)
	}
	b, err := Open(sparse, "rt")
	if err != nil {
		t.Fatalf("a tar with a sparse file: %v", err)
	}
	c, err := Open(src, "rt")
	if err != nil || b.Digest != c.Digest || b.Size != 1<<20 {
		t.Fatalf("the sparse file reads as %d bytes, digest %s; the tree has %s (%v)", b.Size, b.Digest, c.Digest, err)
	}
}

// TestWorldWritableEntriesAreNamed: modes the artifact gives are kept, and
// those writable by others are listed so the user hears of them.
func TestWorldWritableEntriesAreNamed(t *testing.T) {
	d := t.TempDir()
	os.MkdirAll(filepath.Join(d, "spool"), 0o755)
	os.WriteFile(filepath.Join(d, "spool", "f"), []byte("x"), 0o644)
	os.WriteFile(filepath.Join(d, "open"), []byte("x"), 0o644)
	os.Chmod(filepath.Join(d, "spool"), 0o777)
	os.Chmod(filepath.Join(d, "open"), 0o666)
	a, err := Open(d, "rt")
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"open", "spool"}; !slices.Equal(a.Writable, want) {
		t.Fatalf("Writable %q, want %q", a.Writable, want)
	}
}

// TestOpenReaderSpoolsTheStream: a tar on standard input, plain or
// compressed, gives the tree's id; WriteTar reads the spool again, which is
// private and goes with Close; a stream without a name, a zip, and one that
// is refused leave nothing behind.
func TestOpenReaderSpoolsTheStream(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	a, err := Open(linkedTree(t), "rt")
	if err != nil {
		t.Fatal(err)
	}
	plain := goTar(t, a.Source)
	left := func(what string) {
		t.Helper()
		if des, _ := os.ReadDir(tmp); len(des) != 0 {
			t.Errorf("%s: %s is left in the temporary directory", what, des[0].Name())
		}
	}
	for _, f := range []format{formatTar, formatGzip, formatXz, formatZstd} {
		b := plain
		if f != formatTar {
			b = compress(t, f, plain)
		}
		s, err := OpenReader(context.Background(), bytes.NewReader(b), OpenOptions{Name: "rt"})
		if err != nil {
			t.Fatalf("format %d: %v", f, err)
		}
		sameTree(t, "stream", a, s)
		if s.Source != "-" || filepath.Dir(s.spool) != tmp {
			t.Errorf("source %q, spool %q", s.Source, s.spool)
		}
		if fi, err := os.Stat(s.spool); err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("spool: %v %v", fi.Mode(), err)
		}
		c, err := Open(unpack(t, writeTar(t, s), "tar"), "rt")
		if err != nil {
			t.Fatal(err)
		}
		sameTree(t, "stream unpacked", a, c)
		if err := s.Close(); err != nil || s.Close() != nil {
			t.Fatalf("close: %v", err)
		}
		left("after Close")
	}
	if _, err := OpenReader(context.Background(), bytes.NewReader(plain), OpenOptions{}); !errors.Is(err, ErrNeedName) || err.Error() != "a stream has no file name: give --name" {
		t.Errorf("no name: %v", err)
	}
	for what, b := range map[string][]byte{
		"zip":   goZip(t, a.Source),
		"cut":   compress(t, formatXz, plain)[:300],
		"junk":  []byte("\x00\x01\x02junk"),
		"empty": nil,
	} {
		_, err := OpenReader(context.Background(), bytes.NewReader(b), OpenOptions{Name: "rt"})
		if !errors.Is(err, ErrArtifact) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %v", what, err)
		}
		if what == "zip" && !strings.Contains(err.Error(), "zip cannot be read from standard input") ||
			what == "junk" && !strings.Contains(err.Error(), "unsupported archive format (unknown)") {
			t.Errorf("%s: %v", what, err)
		}
		left(what)
	}
	var other Artifact
	if other.Close() != nil || a.Close() != nil {
		t.Error("Close of an artifact with no spool failed")
	}
}
