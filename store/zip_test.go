package store

import (
	"archive/zip"
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// goZip archives dir with archive/zip as a Unix zip tool does: modes in the
// external attributes, a symlink's target as its contents, a hard link as a
// copy (zip has none).
func goZip(t *testing.T, dir string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		rel, _ := filepath.Rel(dir, p)
		if err != nil || rel == "." {
			return err
		}
		fi, _ := d.Info()
		h, _ := zip.FileInfoHeader(fi)
		h.Name, h.Method = filepath.ToSlash(rel), zip.Deflate
		var body []byte
		switch {
		case fi.IsDir():
			h.Name, h.Method = h.Name+"/", zip.Store
		case fi.Mode()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			body = []byte(target)
		default:
			body, err = os.ReadFile(p)
		}
		w, werr := zw.CreateHeader(h)
		if err != nil || werr != nil {
			return errors.Join(err, werr)
		}
		_, err = w.Write(body)
		return err
	})
	if err != nil || zw.Close() != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// zent is an entry for zipFile: a mode given makes it a Unix zip's entry,
// none an entry as a Windows tool writes it.
type zent struct {
	name string
	mode fs.FileMode
	body string
	flag uint16
}

func zipFile(t *testing.T, entries ...zent) string {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, e := range entries {
		h := &zip.FileHeader{Name: e.name, Method: zip.Deflate, Flags: e.flag}
		if e.mode != 0 {
			h.SetMode(e.mode)
		}
		w, err := zw.CreateHeader(h)
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(w, e.body)
	}
	zw.Close()
	p := filepath.Join(t.TempDir(), "z.zip")
	os.WriteFile(p, buf.Bytes(), 0o644)
	return p
}

// TestZipRefusesWhatTarRefuses: a zip's entries go through the same checks
// as a tar's.
func TestZipRefusesWhatTarRefuses(t *testing.T) {
	link := fs.ModeSymlink | 0o777
	for name, p := range map[string]string{
		"dot-dot":           zipFile(t, zent{name: "../x", body: "x"}),
		"nested dot-dot":    zipFile(t, zent{name: "a/../../x", body: "x"}),
		"absolute":          zipFile(t, zent{name: "/etc/x", body: "x"}),
		"control character": zipFile(t, zent{name: "a\x1b[2Jb", body: "x"}),
		"escaping link":     zipFile(t, zent{name: "a/l", mode: link, body: "../../x"}),
		"absolute link":     zipFile(t, zent{name: "l", mode: link, body: "/etc/passwd"}),
		"through a link":    zipFile(t, zent{name: "a/up", mode: link, body: ".."}, zent{name: "x", mode: link, body: "a/up/.."}),
		"beneath a link":    zipFile(t, zent{name: "l", mode: link, body: "."}, zent{name: "l/f", body: "x"}),
		"beneath a file":    zipFile(t, zent{name: "f", body: "x"}, zent{name: "f/g", body: "x"}),
		"twice":             zipFile(t, zent{name: "f", body: "x"}, zent{name: "./f", body: "y"}),
		"dir and file":      zipFile(t, zent{name: "f/"}, zent{name: "f", body: "y"}),
		"fifo":              zipFile(t, zent{name: "p", mode: fs.ModeNamedPipe | 0o644}),
		"device":            zipFile(t, zent{name: "d", mode: fs.ModeDevice | 0o644}),
		"encrypted":         zipFile(t, zent{name: "f", body: "x", flag: 1}),
		"empty":             zipFile(t),
	} {
		_, err := Open(p, "rt")
		if !errors.Is(err, ErrArtifact) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: want ErrArtifact, got %v", name, err)
		}
	}
}

// TestZipModes: a Unix zip's modes are kept, setuid and setgid stripped
// unless kept as from a tar; a zip made elsewhere has no Unix modes, and
// gets 0644 files and 0755 directories, whichever way it marks them.
func TestZipModes(t *testing.T) {
	a, err := Open(zipFile(t,
		zent{name: "bin/", mode: fs.ModeDir | 0o750},
		zent{name: "bin/su", mode: fs.ModeSetuid | 0o755, body: "x"},
		zent{name: "spool/", mode: fs.ModeDir | fs.ModeSticky | 0o777},
		zent{name: "ro", mode: 0o400, body: "y"},
	), "rt")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]fs.FileMode{"bin": 0o750, "bin/su": 0o755, "spool": fs.ModeSticky | 0o777, "ro": 0o400}
	for p, m := range want {
		if e, ok := entry(a, p); !ok || e.Mode != m {
			t.Errorf("%s: %+v, want mode %v", p, e, m)
		}
	}
	if !slices.Equal(a.Stripped, []string{"bin/su"}) || !slices.Equal(a.Writable, []string{"spool"}) {
		t.Errorf("stripped %q, writable %q", a.Stripped, a.Writable)
	}

	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	zw.Create("d/")
	w, _ := zw.Create("d/f")
	io.WriteString(w, "x")
	zw.CreateHeader(&zip.FileHeader{Name: "dosdir", ExternalAttrs: 0x10}) // MS-DOS directory attribute
	w, _ = zw.Create("e/g")
	io.WriteString(w, "x")
	zw.Close()
	p := filepath.Join(t.TempDir(), "windows.zip")
	os.WriteFile(p, buf.Bytes(), 0o644)
	b, err := Open(p, "rt")
	if err != nil {
		t.Fatal(err)
	}
	want = map[string]fs.FileMode{"d": 0o755, "d/f": 0o644, "dosdir": 0o755, "e": 0o755, "e/g": 0o644}
	for p, m := range want {
		if e, ok := entry(b, p); !ok || e.Mode != m || (e.Type == 'd') != (m == 0o755) {
			t.Errorf("%s: %+v, want mode %v", p, e, m)
		}
	}
}

// TestZipCutOrDamagedIsRefused: a zip cut anywhere has lost its directory,
// and one whose data does not match its CRC is damaged; both are refused
// in one line naming the file, as is a compression method hoist cannot read.
func TestZipCutOrDamagedIsRefused(t *testing.T) {
	whole, _ := os.ReadFile(zipFile(t, zent{name: "d/f", mode: 0o644, body: strings.Repeat("hoist ", 100)}, zent{name: "g", body: "x"}))
	p := filepath.Join(t.TempDir(), "rt.zip")
	refused := func(b []byte, why string) {
		t.Helper()
		os.WriteFile(p, b, 0o644)
		_, err := Open(p, "rt")
		if !errors.Is(err, ErrArtifact) || !strings.Contains(err.Error(), p) || !strings.Contains(err.Error(), why) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%d of %d bytes: want %q, got %v", len(b), len(whole), why, err)
		}
	}
	for _, n := range []int{4, 30, len(whole) / 2, len(whole) - 22, len(whole) - 1} {
		refused(whole[:n], "cut short")
	}
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	w, _ := zw.CreateHeader(&zip.FileHeader{Name: "f", Method: zip.Store})
	io.WriteString(w, "hello")
	zw.RegisterCompressor(99, func(w io.Writer) (io.WriteCloser, error) { return nopCloser{w}, nil })
	w, _ = zw.CreateHeader(&zip.FileHeader{Name: "odd", Method: 99})
	io.WriteString(w, "x")
	zw.Close()
	odd := buf.Bytes()
	refused(odd, "compression method hoist cannot read")
	// f comes first: its CRC fails before the odd method is met.
	refused(bytes.Replace(odd, []byte("hello"), []byte("jello"), 1), "damaged")
}

type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }
