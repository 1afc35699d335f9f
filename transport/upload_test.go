package transport

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"testing/iotest"
	"time"
)

// modeAtFirstRead records the mode of file when the upload first reads its
// source: no byte of it can have been written yet.
type modeAtFirstRead struct {
	t    *testing.T
	file string
	r    io.Reader
	mode os.FileMode
	seen bool
}

func (m *modeAtFirstRead) Read(p []byte) (int, error) {
	if !m.seen {
		m.seen = true
		st, err := os.Stat(m.file)
		if err != nil {
			m.t.Errorf("at the first read: %v", err)
		} else {
			m.mode = st.Mode().Perm()
		}
	}
	return m.r.Read(p)
}

// Uploader promises a new file of mode 0600 from the start: the file holds
// nothing before it is 0600 (SFTP servers create files 0644, less the
// umask, when the open request carries no mode, and pkg/sftp's OpenFile
// sends none), and a path that exists already, a file or a symlink planted
// there, is refused and nothing is written through it.
func TestUploadMode0600(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	s := dialTest(t, ts.clientConfig(t))
	for name, up := range map[string]Uploader{"ssh": s, "local": &Local{}} {
		t.Run(name+"/new", func(t *testing.T) {
			t.Parallel()
			file := filepath.Join(t.TempDir(), "artifact.tar")
			data := pattern(3<<20, 'u') // several write requests
			src := &modeAtFirstRead{t: t, file: file, r: bytes.NewReader(data)}
			n, err := up.Upload(runCtx(t), file, src, UploadOptions{})
			if err != nil || n != int64(len(data)) {
				t.Fatalf("Upload: %d, %v; want %d bytes", n, err, len(data))
			}
			if src.mode != 0o600 {
				t.Errorf("mode %v before the first byte was written, want 0600", src.mode)
			}
			st, err := os.Stat(file)
			must(t, err)
			if st.Mode().Perm() != 0o600 {
				t.Errorf("mode %v after the upload, want 0600", st.Mode().Perm())
			}
			if got, err := os.ReadFile(file); err != nil || !bytes.Equal(got, data) {
				t.Errorf("contents differ (%d bytes, %v)", len(got), err)
			}
		})
		t.Run(name+"/existing", func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			victim := filepath.Join(dir, "precious")
			must(t, os.WriteFile(victim, []byte("keep"), 0o644))
			for _, planted := range []string{"file", "symlink"} {
				file := filepath.Join(dir, planted+".tar")
				if planted == "file" {
					must(t, os.WriteFile(file, []byte("keep"), 0o644))
				} else {
					must(t, os.Symlink(victim, file))
				}
				if _, err := up.Upload(runCtx(t), file, bytes.NewReader([]byte("new")), UploadOptions{}); err == nil {
					t.Errorf("an upload onto an existing %s succeeded", planted)
				}
			}
			if got, _ := os.ReadFile(victim); string(got) != "keep" {
				t.Errorf("written through the symlink: %q", got)
			}
			if got, _ := os.ReadFile(filepath.Join(dir, "file.tar")); string(got) != "keep" {
				t.Errorf("the existing file was overwritten: %q", got)
			}
		})
	}
}

// Several streams, and an existing file written from an offset: the file
// holds the bytes in order, cut to their end, whatever it held beyond.
func TestUploadStreamsAndOffset(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	s := dialTest(t, ts.clientConfig(t))
	data := pattern(3*ChunkSize+12345, 's') // chunks, and a short last one
	for name, up := range map[string]Uploader{"ssh": s, "local": &Local{}} {
		for _, streams := range []int{1, 3} {
			t.Run(fmt.Sprintf("%s/%d", name, streams), func(t *testing.T) {
				t.Parallel()
				file := filepath.Join(t.TempDir(), "artifact.tar")
				n, err := up.Upload(runCtx(t), file, bytes.NewReader(data), UploadOptions{Streams: streams})
				if err != nil || n != int64(len(data)) {
					t.Fatalf("Upload: %d, %v", n, err)
				}
				if got, _ := os.ReadFile(file); !bytes.Equal(got, data) {
					t.Fatalf("contents differ (%d bytes)", len(got))
				}
				// Resumed at 5 MiB over a longer file of other bytes.
				const at = 5 << 20
				must(t, os.WriteFile(file, pattern(len(data)+999, 'x'), 0o600))
				n, err = up.Upload(runCtx(t), file, bytes.NewReader(data[at:]), UploadOptions{Streams: streams, Existing: true, Offset: at})
				if err != nil || n != int64(len(data)-at) {
					t.Fatalf("resumed Upload: %d, %v", n, err)
				}
				got, _ := os.ReadFile(file)
				want := append(pattern(len(data)+999, 'x')[:at], data[at:]...)
				if !bytes.Equal(got, want) {
					t.Fatalf("resumed contents differ (%d bytes, want %d)", len(got), len(want))
				}
			})
		}
	}
}

// TestUploadTakesThePreparedStream: the stream Prepare opened is the
// upload's first (one channel fewer to open), and one no upload took is
// closed by the function Prepare returned.
func TestUploadTakesThePreparedStream(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	s := dialTest(t, ts.clientConfig(t))
	sftps := func() (served, now int) {
		ts.mu.Lock()
		defer ts.mu.Unlock()
		return ts.sftps, ts.sftpNow
	}
	discard := s.Prepare()
	data := pattern(2*ChunkSize+7, 'p')
	file := filepath.Join(t.TempDir(), "artifact.tar")
	n, err := s.Upload(runCtx(t), file, bytes.NewReader(data), UploadOptions{Streams: 2})
	discard() // the upload took it: nothing to close
	if err != nil || n != int64(len(data)) {
		t.Fatalf("Upload: %d, %v", n, err)
	}
	if got, _ := os.ReadFile(file); !bytes.Equal(got, data) {
		t.Fatalf("contents differ (%d bytes)", len(got))
	}
	if served, _ := sftps(); served != 2 {
		t.Errorf("a prepared upload of 2 streams opened %d SFTP sessions, want 2", served)
	}
	s.Prepare()()
	deadline := time.Now().Add(10 * time.Second)
	for {
		served, now := sftps()
		if served == 3 && now == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a prepared stream no upload took: %d SFTP sessions served, %d still open; want 3 and 0", served, now)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// An upload that fails on this side (its reader fails mid-way) or before it
// wrote (its file cannot be made) is a failure, not an unknown outcome:
// only a broken connection leaves what the host holds unknown.
func TestUploadFailuresThatAreNotUnknown(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	s := dialTest(t, ts.clientConfig(t))
	file := filepath.Join(t.TempDir(), "artifact.tar")
	errSource := errors.New("the source failed")
	src := io.MultiReader(bytes.NewReader(make([]byte, 3*ChunkSize)), iotest.ErrReader(errSource))
	_, err := s.Upload(runCtx(t), file, src, UploadOptions{})
	if !errors.Is(err, errSource) || errors.Is(err, ErrUnknownOutcome) {
		t.Errorf("a reader that fails: %v, want the reader's error and not an unknown outcome", err)
	}
	_, err = s.Upload(runCtx(t), filepath.Join(t.TempDir(), "no", "such", "dir", "a.tar"), bytes.NewReader([]byte("x")), UploadOptions{})
	if err == nil || errors.Is(err, ErrUnknownOutcome) {
		t.Errorf("into a directory that is not there: %v, want a failure, not an unknown outcome", err)
	}
}

// TestUploadChecksEveryFileFirst: with Check, every file the upload opened
// is looked at before a byte is written through any: a refusal leaves the
// file as it was, and the refusal is the error.
func TestUploadChecksEveryFileFirst(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	s := dialTest(t, ts.clientConfig(t))
	data := pattern(3*ChunkSize, 'c')
	stamp := time.Date(2011, 3, 4, 5, 6, 7, 0, time.UTC)
	refused := errors.New("not the file the host made")
	for name, up := range map[string]Uploader{"ssh": s, "local": &Local{}} {
		for _, streams := range []int{1, 3} {
			t.Run(fmt.Sprintf("%s/%d", name, streams), func(t *testing.T) {
				t.Parallel()
				file := filepath.Join(t.TempDir(), "artifact.tar")
				before := []byte("the login's file\n")
				must(t, os.WriteFile(file, before, 0o600))
				var looks atomic.Int32
				check := func(fi fs.FileInfo) error {
					looks.Add(1)
					if !fi.Mode().IsRegular() || !fi.ModTime().Equal(stamp) {
						return refused
					}
					return nil
				}
				o := UploadOptions{Streams: streams, Existing: true, Check: check}
				n, err := up.Upload(runCtx(t), file, bytes.NewReader(data), o)
				if !errors.Is(err, refused) || n != 0 {
					t.Fatalf("Upload into a file of another date: %d, %v; want %v", n, err, refused)
				}
				if got, _ := os.ReadFile(file); !bytes.Equal(got, before) {
					t.Fatalf("the refused file was written (%d bytes)", len(got))
				}
				if name == "ssh" && int(looks.Load()) != streams {
					t.Fatalf("%d files looked at, want one per stream (%d)", looks.Load(), streams)
				}
				must(t, os.Chtimes(file, stamp, stamp))
				if n, err := up.Upload(runCtx(t), file, bytes.NewReader(data), o); err != nil || n != int64(len(data)) {
					t.Fatalf("Upload into the file of the right date: %d, %v", n, err)
				}
				if got, _ := os.ReadFile(file); !bytes.Equal(got, data) {
					t.Fatalf("contents differ (%d bytes)", len(got))
				}
			})
		}
	}
}

// TestContextReaderStops: a copy through ContextReader gives ctx's error
// at the first read after ctx ends, and reads nothing more; the store's
// hashing and archive reading and the uploads here all stop this way.
func TestContextReaderStops(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var reads atomic.Int32
	src := iotest.OneByteReader(readFunc(func(p []byte) (int, error) {
		if reads.Add(1) == 3 {
			cancel()
		}
		p[0] = 'x'
		return 1, nil
	}))
	n, err := io.Copy(io.Discard, ContextReader(ctx, src))
	if !errors.Is(err, context.Canceled) || n != 3 || reads.Load() != 3 {
		t.Errorf("copied %d bytes in %d reads, error %v: want 3, 3 and context.Canceled", n, reads.Load(), err)
	}
}

type readFunc func([]byte) (int, error)

func (f readFunc) Read(p []byte) (int, error) { return f(p) }
