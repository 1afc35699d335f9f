package transporttest

import (
	"bytes"
	"errors"
	"io/fs"
	"strings"
	"testing"

	"github.com/hoistdev/hoist/transport"
)

// The Uploader contract, for transports that have it.

func (e *env) uploader() transport.Uploader {
	e.t.Helper()
	up, ok := e.tr.(transport.Uploader)
	if !ok {
		e.t.Skipf("%T is no transport.Uploader", e.tr)
	}
	return up
}

// mode is the file's mode as ls -l shows it.
func (e *env) mode(name string) string {
	e.t.Helper()
	f := strings.Fields(e.sh("ls -ld " + e.path(name)))
	if len(f) == 0 {
		e.t.Fatalf("ls -ld %s printed nothing", name)
	}
	return f[0]
}

// An upload makes a new file of mode 0600, whatever the umask, holding
// every byte, in order, over one stream or several.
func testUploadCreates(t *testing.T, e *env) {
	up := e.uploader()
	for name, streams := range map[string]int{"one": 1, "four": 4} {
		data := yes(name, 3*transport.ChunkSize+12345)
		n, err := up.Upload(e.ctx(), e.path(name), bytes.NewReader(data), transport.UploadOptions{Streams: streams})
		if err != nil || n != int64(len(data)) {
			t.Fatalf("Upload over %d streams: %d, %v; want %d bytes", streams, n, err, len(data))
		}
		if got := e.sh("cat " + e.path(name)); got != string(data) {
			t.Errorf("over %d streams: the file holds %d bytes, not the %d uploaded", streams, len(got), len(data))
		}
		if m := e.mode(name); m != "-rw-------" {
			t.Errorf("over %d streams: mode %s, want -rw-------", streams, m)
		}
	}
}

// A path that exists, a file or a symlink, is refused, and nothing is
// written through it.
func testUploadRefusesExisting(t *testing.T, e *env) {
	up := e.uploader()
	e.sh("echo old >" + e.path("file") + "; echo kept >" + e.path("target") + "; ln -s " + e.path("target") + " " + e.path("link"))
	for _, name := range []string{"file", "link"} {
		if _, err := up.Upload(e.ctx(), e.path(name), strings.NewReader("new\n"), transport.UploadOptions{}); err == nil {
			t.Errorf("Upload to an existing %s: no error", name)
		}
	}
	if got := e.sh("cat " + e.path("file") + " " + e.path("target")); got != "old\nkept\n" {
		t.Errorf("after the refused uploads the files hold %q, want them untouched", got)
	}
}

// With Existing, the bytes go into the file from Offset on, and the file is
// cut to their end.
func testUploadExisting(t *testing.T, e *env) {
	up := e.uploader()
	e.sh("printf 0123456789 >" + e.path("cut") + "; chmod 600 " + e.path("cut"))
	n, err := up.Upload(e.ctx(), e.path("cut"), strings.NewReader("ab"), transport.UploadOptions{Existing: true, Offset: 4})
	if err != nil || n != 2 {
		t.Fatalf("Upload with Existing at 4: %d, %v; want 2 bytes", n, err)
	}
	if got := e.sh("cat " + e.path("cut")); got != "0123ab" {
		t.Errorf("the file holds %q, want 0123ab", got)
	}
}

// Check sees the file opened before a byte goes through it; its error stops
// the upload with nothing written.
func testUploadCheck(t *testing.T, e *env) {
	up := e.uploader()
	refuse := errors.New("not this file")
	var seen fs.FileInfo
	_, err := up.Upload(e.ctx(), e.path("checked"), strings.NewReader("data"), transport.UploadOptions{
		Check: func(fi fs.FileInfo) error { seen = fi; return refuse }})
	if !errors.Is(err, refuse) {
		t.Errorf("Upload whose Check refused: %v, want the Check's error", err)
	}
	if seen == nil || !seen.Mode().IsRegular() {
		t.Errorf("Check saw %v, want the regular file opened", seen)
	}
	if got := e.sh("cat " + e.path("checked") + " 2>/dev/null; true"); got != "" {
		t.Errorf("a refused upload wrote %q", got)
	}
}
