package lock_test

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/hoistdev/hoist/lock"
	"github.com/hoistdev/hoist/store"
	"github.com/hoistdev/hoist/transport"
)

// onePassTests are the steps of the promotion begun with the upload
// (shellcmd/sh/stream.sh, docs/protocol.md "Promotion in one pass").
var onePassTests = []struct {
	step string
	fn   func(e *stepEnv)
}{
	// The client killed while its push's command stands after its claim
	// (the first command went on as the promotion: the upload has not
	// begun): the host command finds its input gone and gives the stage
	// back, and the next push of the runtime takes it over and promotes.
	{"promote.streaming", func(e *stepEnv) {
		art := e.bigArtifact(48 << 20)
		a := e.lock("promote.streaming")
		ctx, kill := context.WithCancel(e.ctx())
		goOn := e.stopped(a, "promote.streaming", func() error {
			_, err := store.New(a).Push(ctx, art, store.PushOptions{})
			return err
		})
		kill()
		if err := goOn(); !errors.Is(err, transport.ErrUnknownOutcome) {
			e.t.Fatalf("the killed push: %v, want an unknown outcome", err)
		}
		e.markBack()
		r, err := store.New(e.lock()).Push(e.ctx(), art, store.PushOptions{})
		if err != nil || !r.Promoted {
			e.t.Fatalf("the next push: %v %+v; want it to take the stage over and promote", err, r)
		}
		e.checkRuntime(art)
	}},
	// The client killed after its upload, before its E: the host command
	// finds its input gone and gives the stage back, and the next push
	// resumes it and promotes.
	{"promote.streaming", func(e *stepEnv) {
		art := e.bigArtifact(48 << 20)
		ctx, kill := context.WithCancel(e.ctx())
		killed, release := make(chan struct{}), make(chan struct{})
		done := make(chan error, 1)
		go func() {
			_, err := store.New(e.lock()).Push(ctx, art, store.PushOptions{Uploaded: func(int64) {
				kill()
				close(killed)
				<-release // no E before the host gave the stage back
			}})
			done <- err
		}()
		<-killed
		e.markBack()
		close(release)
		if err := <-done; !errors.Is(err, transport.ErrUnknownOutcome) {
			e.t.Fatalf("the killed push: %v, want an unknown outcome", err)
		}
		r, err := store.New(e.lock()).Push(e.ctx(), art, store.PushOptions{})
		if err != nil || !r.Promoted || r.Resumed == 0 {
			e.t.Fatalf("the next push: %v %+v; want it to resume the stage and promote", err, r)
		}
		e.checkRuntime(art)
	}},
	// A client stalled after its upload, before its E: 5 s later the host
	// gives the stage back, another push takes it over, resumes and
	// promotes. The stalled client's late E finds its command ended; the
	// promotion it runs instead finds the stage another push's.
	{"promote.streaming", func(e *stepEnv) {
		art := e.bigArtifact(48 << 20)
		stalled, resume := make(chan struct{}), make(chan struct{})
		done := make(chan error, 1)
		go func() {
			_, err := store.New(e.lock()).Push(e.ctx(), art, store.PushOptions{Uploaded: func(int64) {
				close(stalled)
				<-resume
			}})
			done <- err
		}()
		<-stalled
		e.markBack()
		r, err := store.New(e.lock()).Push(e.ctx(), art, store.PushOptions{})
		if err != nil || !r.Promoted || r.Resumed == 0 {
			e.t.Fatalf("the push that came later: %v %+v; want it to resume the stalled push's stage and promote", err, r)
		}
		close(resume)
		e.stageGone(<-done)
		e.checkRuntime(art)
	}},
	// A byte flipped on its way to the host: the digest of what the host
	// read is not the client's, the push fails as corrupt, and the stage
	// is gone.
	{"promote.streaming", func(e *stepEnv) {
		art := e.bigArtifact(8 << 20)
		l := lock.New(flipUpload{Transport: e.dial(), at: 5<<20 + 3}, lock.Root{Path: e.root})
		if _, err := store.New(l).Push(e.ctx(), art, store.PushOptions{}); !errors.Is(err, store.ErrCorrupt) {
			e.t.Fatalf("a push whose archive had a byte flipped: %v, want ErrCorrupt", err)
		}
		if m, _ := filepath.Glob(filepath.Join(e.root, "runtimes", ".stage-*")); len(m) != 0 {
			e.t.Fatalf("stages left: %v", m)
		}
		if _, err := os.Stat(filepath.Join(e.root, "runtimes", art.ID())); err == nil {
			e.t.Fatal("the corrupt runtime was promoted")
		}
	}},
	// The client says the archive is whole beyond its length (mid-way,
	// then at its end): the host's copy falls short, it reads on to E
	// without streaming, and promotes from the full pass.
	{"promote.streaming", func(e *stepEnv) {
		art := e.bigArtifact(8 << 20)
		l := lock.New(beyondUpload{e.dial()}, lock.Root{Path: e.root})
		r, err := store.New(l).Push(e.ctx(), art, store.PushOptions{})
		if err != nil || !r.Promoted {
			e.t.Fatalf("a push that said an offset beyond the archive: %v %+v; want it promoted", err, r)
		}
		e.checkRuntime(art)
	}},
	// A host command stopped once it gave its stage back (the client
	// stalled after its upload): the stage has its mark, another push
	// resumes it and promotes; the stalled push then fails, its stage
	// another's.
	{"promote.yielded", func(e *stepEnv) {
		art := e.bigArtifact(48 << 20)
		a := e.lock("promote.yielded")
		resume := make(chan struct{})
		goOn := e.stopped(a, "promote.yielded", func() error {
			_, err := store.New(a).Push(e.ctx(), art, store.PushOptions{Uploaded: func(int64) { <-resume }})
			return err
		})
		r, err := store.New(e.lock()).Push(e.ctx(), art, store.PushOptions{})
		if err != nil || !r.Promoted || r.Resumed == 0 {
			e.t.Fatalf("the other push: %v %+v; want it to resume the stage given back and promote", err, r)
		}
		close(resume)
		e.stageGone(goOn())
		e.checkRuntime(art)
	}},
	// The stage renamed and its name given to a directory of the login's
	// while the promotion streams (as a member of a team's store could):
	// an archive there that links to a file of the login's, and the
	// directory the promotion unpacks into as a link to another. The
	// promotion goes on in the stage it entered, never through the name
	// (cd -P), so nothing planted is written through; and under the lock
	// it finds its stage is not at its name: it promotes nothing.
	{"promote.streaming", func(e *stepEnv) {
		art := e.bigArtifact(4 << 20)
		victim := e.t.TempDir()
		_, err := store.New(e.lock()).Push(e.ctx(), art, store.PushOptions{Uploaded: func(int64) {
			st := e.stageOf()
			for end := time.Now().Add(20 * time.Second); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
				if m, _ := filepath.Glob(filepath.Join(st, "stream-*")); len(m) > 0 {
					break
				}
			}
			tok := strings.TrimPrefix(filepath.Base(st), ".stage-")
			if err := os.Rename(st, filepath.Join(filepath.Dir(st), "moved")); err != nil {
				e.t.Fatal(err)
			}
			os.Mkdir(st, 0o700)
			os.Symlink(filepath.Join(victim, "file"), filepath.Join(st, "artifact.tar"))
			os.Symlink(victim, filepath.Join(st, "unpack-"+tok))
		}})
		if m, _ := os.ReadDir(victim); len(m) != 0 {
			e.t.Fatalf("the promotion wrote through a planted link: %v (%v)", m, err)
		}
		if err == nil || !strings.Contains(err.Error(), "is not this push's stage any more") {
			e.t.Fatalf("a push whose stage was renamed while it streamed: %v; want it refused under the lock", err)
		}
		if _, err := os.Lstat(filepath.Join(e.root, "runtimes", art.ID())); !os.IsNotExist(err) {
			e.t.Fatalf("a push whose stage was renamed promoted it: %v", err)
		}
	}},
	// A host whose mkfifo fails: the promotion only reads the lines, and
	// at E makes the full pass and promotes.
	{"promote.streaming", func(e *stepEnv) {
		art := e.bigArtifact(8 << 20)
		if !e.pushNoFifo(art) {
			e.t.Fatal("the promotion did not try mkfifo")
		}
	}},
	// A runtime under 8 MiB is not streamed: the promotion reads the
	// lines, makes the full pass at E (no FIFO made) and promotes.
	{"promote.streaming", func(e *stepEnv) {
		art := e.bigArtifact(8<<20 - 1)
		if e.pushNoFifo(art) {
			e.t.Fatal("the promotion of a runtime under 8 MiB tried mkfifo: it streamed")
		}
	}},
}

// pushNoFifo pushes art to a host whose mkfifo fails, wants it promoted
// from the full pass, and reports whether mkfifo was tried.
func (e *stepEnv) pushNoFifo(art *store.Artifact) bool {
	shims := e.t.TempDir()
	called := filepath.Join(shims, "called")
	if err := os.WriteFile(filepath.Join(shims, "mkfifo"), []byte("#!/bin/sh\n: >"+called+"\nexit 1\n"), 0o755); err != nil {
		e.t.Fatal(err)
	}
	tr := e.dial().(*shellTransport)
	tr.exec = strings.Replace(tr.exec, "exec ", "PATH="+shims+":$PATH; export PATH; exec ", 1)
	r, err := store.New(lock.New(tr, lock.Root{Path: e.root})).Push(e.ctx(), art, store.PushOptions{})
	if err != nil || !r.Promoted {
		e.t.Fatalf("a push to a host without a working mkfifo: %v %+v; want it promoted from the full pass", err, r)
	}
	e.checkRuntime(art)
	_, err = os.Stat(called)
	return err == nil
}

func init() { stepTests = append(stepTests, onePassTests...) }

// markBack returns once the store's one stage has its resume mark and no
// claim on it: its promotion gave it back.
func (e *stepEnv) markBack() {
	e.t.Helper()
	end := time.Now().Add(30 * time.Second)
	for time.Now().Before(end) {
		marks, _ := filepath.Glob(filepath.Join(e.root, "runtimes", ".stage-*", "resume"))
		claims, _ := filepath.Glob(filepath.Join(e.root, "runtimes", ".stage-*", "claimed-*"))
		if len(marks) == 1 && len(claims) == 0 {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	e.t.Fatal("the stage did not get its mark back")
}

// flipUpload flips the byte at offset at of what it uploads.
type flipUpload struct {
	transport.Transport
	at int64
}

func (f flipUpload) Upload(ctx context.Context, path string, r io.Reader, o transport.UploadOptions) (int64, error) {
	return f.Transport.(transport.Uploader).Upload(ctx, path, &flipReader{r: r, at: f.at - o.Offset}, o)
}

type flipReader struct {
	r  io.Reader
	at int64
}

func (f *flipReader) Read(p []byte) (int, error) {
	n, err := f.r.Read(p)
	if f.at >= 0 && f.at < int64(n) {
		p[f.at] ^= 0x20
	}
	f.at -= int64(n)
	return n, err
}

// beyondUpload tells the push its archive is whole 64 MiB beyond what it
// wrote, once a MiB is written and once the upload is done, each for long
// enough for the push to say so to the host.
type beyondUpload struct{ transport.Transport }

func (b beyondUpload) Upload(ctx context.Context, path string, r io.Reader, o transport.UploadOptions) (int64, error) {
	whole := o.Whole
	said := false
	o.Whole = func(at int64) {
		if at >= 1<<20 && !said {
			said = true
			whole(at + 64<<20)
			time.Sleep(300 * time.Millisecond)
			return
		}
		whole(at)
	}
	n, err := b.Transport.(transport.Uploader).Upload(ctx, path, r, o)
	whole(o.Offset + n + 64<<20)
	time.Sleep(300 * time.Millisecond)
	return n, err
}
