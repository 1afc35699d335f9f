package lock_test

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hoistdev/hoist/lock"
	"github.com/hoistdev/hoist/store"
	"github.com/hoistdev/hoist/transport"
)

// The step tests run the real fragments under dash and under busybox (with a
// busybox userland), stop one client at each step docs/protocol.md names,
// let another client steal and hold the lock meanwhile, then let the stopped
// client go on, and check that it acted on nothing but its own lock: the
// protocol's safety must not depend on how long any step takes.

// shellTransport runs commands like transport.Local, with the loader's
// /bin/sh replaced by the shell under test (and, for busybox, its applets
// first on PATH).
type shellTransport struct {
	transport.Local
	exec string // replaces "exec /bin/sh -c"
}

func (s *shellTransport) Run(ctx context.Context, req transport.Request) (int, error) {
	req.Command = strings.Replace(req.Command, "exec /bin/sh -c", s.exec, 1)
	return s.Local.Run(ctx, req)
}

func stepShells(t *testing.T) map[string]func() transport.Transport {
	for _, c := range []string{"dash", "busybox"} {
		if _, err := exec.LookPath(c); err != nil {
			t.Fatalf("%s is not installed: run make test, which installs the shells hoist is tested with", c)
		}
	}
	bin := t.TempDir()
	if out, err := exec.Command("busybox", "--install", "-s", bin).CombinedOutput(); err != nil {
		t.Fatalf("busybox --install: %v %s", err, out)
	}
	return map[string]func() transport.Transport{
		"dash": func() transport.Transport { return &shellTransport{exec: "exec dash -c"} },
		"busybox": func() transport.Transport {
			return &shellTransport{exec: "PATH=" + bin + ":/usr/bin:/bin; export PATH; exec busybox sh -c"}
		},
	}
}

// stepEnv is one store and the clients of one step test.
type stepEnv struct {
	t    *testing.T
	dial func() transport.Transport
	root string
}

func newStepEnv(t *testing.T, dial func() transport.Transport) *stepEnv {
	return &stepEnv{t: t, dial: dial, root: filepath.Join(t.TempDir(), "root")}
}

// onStepShells runs test in parallel under each of stepShells, with a
// store of its own.
func onStepShells(t *testing.T, test func(t *testing.T, e *stepEnv)) {
	for name, dial := range stepShells(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			test(t, newStepEnv(t, dial))
		})
	}
}

func (e *stepEnv) lock(pause ...string) *lock.Lock {
	l := lock.New(e.dial(), lock.Root{Path: e.root})
	l.Owner.Command = e.t.Name()
	if len(pause) > 0 {
		lock.SetPause(l, e.t.TempDir(), pause...)
	}
	return l
}

func (e *stepEnv) ctx() context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	e.t.Cleanup(cancel)
	return ctx
}

func (e *stepEnv) lockDir() string { return filepath.Join(e.root, "runtimes", ".store-lock") }

// holder is the token whose record the lock holds, "" when none.
func (e *stepEnv) holder() string {
	m, _ := filepath.Glob(filepath.Join(e.lockDir(), "*", "rec"))
	if len(m) != 1 {
		return ""
	}
	return filepath.Base(filepath.Dir(m[0]))
}

func (e *stepEnv) acquire(l *lock.Lock) *lock.Held {
	e.t.Helper()
	h, err := l.Acquire(e.ctx(), 0, lock.Events{})
	if err != nil {
		e.t.Fatalf("acquire: %v", err)
	}
	return h
}

// age makes the lock's record look untouched for 21 minutes.
func (e *stepEnv) age() {
	e.t.Helper()
	m, _ := filepath.Glob(filepath.Join(e.lockDir(), "*", "rec"))
	if len(m) != 1 {
		e.t.Fatalf("no single record to age: %v", m)
	}
	old := time.Now().Add(-21 * time.Minute)
	if err := os.Chtimes(m[0], old, old); err != nil {
		e.t.Fatal(err)
	}
}

// stopped runs fn in the background and returns once l's command stands at
// step; go lets it on and waits for fn's error.
func (e *stepEnv) stopped(l *lock.Lock, step string, fn func() error) (goOn func() error) {
	e.t.Helper()
	p := e.start(l, fn)
	p.reach(step)
	return func() error {
		p.let(step)
		return p.wait()
	}
}

// pausedRun is fn running in the background with l's command stopping at
// each step l.Pause names, which the test lets go one by one.
type pausedRun struct {
	e    *stepEnv
	l    *lock.Lock
	done chan error
}

func (e *stepEnv) start(l *lock.Lock, fn func() error) *pausedRun {
	p := &pausedRun{e: e, l: l, done: make(chan error, 1)}
	go func() { p.done <- fn() }()
	return p
}

// reach returns once the command stands at step.
func (p *pausedRun) reach(step string) {
	p.e.t.Helper()
	at := filepath.Join(lock.PauseDir(p.l), step+".at")
	end := time.Now().Add(20 * time.Second)
	for {
		if _, err := os.Stat(at); err == nil {
			return
		}
		select {
		case err := <-p.done:
			p.e.t.Fatalf("the command ended before reaching %s: %v", step, err)
		default:
		}
		if time.Now().After(end) {
			p.e.t.Fatalf("the command did not reach %s", step)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// let lets the command on from step (and past it whenever it comes again).
func (p *pausedRun) let(step string) {
	p.e.t.Helper()
	if err := os.WriteFile(filepath.Join(lock.PauseDir(p.l), step+".go"), nil, 0o600); err != nil {
		p.e.t.Fatal(err)
	}
}

// wait returns fn's error.
func (p *pausedRun) wait() error {
	p.e.t.Helper()
	select {
	case err := <-p.done:
		return err
	case <-time.After(30 * time.Second):
		p.e.t.Fatal("the command did not finish")
		return nil
	}
}

// debris lists what the store holds besides the lock.
func (e *stepEnv) debris() []string {
	entries, _ := os.ReadDir(filepath.Join(e.root, "runtimes"))
	var out []string
	for _, d := range entries {
		if d.Name() != ".store-lock" {
			out = append(out, d.Name())
		}
	}
	inside, _ := os.ReadDir(e.lockDir())
	for _, d := range inside {
		if d.Name() != e.holder() {
			out = append(out, ".store-lock/"+d.Name())
		}
	}
	return out
}

// checkHeldBy fails unless want holds the lock and nothing else is left.
func (e *stepEnv) checkHeldBy(want string) {
	e.t.Helper()
	if got := e.holder(); got != want {
		e.t.Fatalf("the lock is held by %q, want %q", got, want)
	}
	if d := e.debris(); len(d) > 0 {
		e.t.Fatalf("left in the store: %v", d)
	}
}

func wantBusyErr(t *testing.T, err error) {
	t.Helper()
	if !errors.Is(err, lock.ErrBusy) {
		t.Fatalf("want busy, got %v", err)
	}
}

var stepTests = []struct {
	step string
	fn   func(e *stepEnv)
}{
	// A creator stopped after preparing its lock: there is no lock yet
	// (a lock never exists without its record); another client takes it;
	// the creator then finds it held and removes what it prepared.
	{"create.prepared", func(e *stepEnv) {
		a := e.lock("create.prepared")
		goOn := e.stopped(a, "create.prepared", func() error { _, err := a.Acquire(e.ctx(), 0, lock.Events{}); return err })
		if s, err := e.lock().Status(e.ctx()); err != nil || s.Locked {
			e.t.Fatalf("while a creation is prepared the lock must not exist: %+v %v", s, err)
		}
		b := e.acquire(e.lock())
		wantBusyErr(e.t, goOn())
		e.checkHeldBy(b.Token)
	}},
	// A creator stopped just before its rename: its rename then meets a
	// held lock and never replaces it; mv moves its directory into the
	// lock, where it stays, holding nothing, until the lock is cleared.
	{"create.publish", func(e *stepEnv) {
		a := e.lock("create.publish")
		goOn := e.stopped(a, "create.publish", func() error { _, err := a.Acquire(e.ctx(), 0, lock.Events{}); return err })
		bl := e.lock()
		b := e.acquire(bl)
		wantBusyErr(e.t, goOn())
		if got := e.holder(); got != b.Token {
			e.t.Fatalf("the lock is held by %q, want %q", got, b.Token)
		}
		if err := bl.Release(e.ctx(), b.Token); err != nil {
			e.t.Fatal(err)
		}
		if d := e.debris(); len(d) > 0 || e.holder() != "" {
			e.t.Fatalf("after the release: holder %q, left in the store: %v", e.holder(), d)
		}
	}},
	// A creator stopped after its rename and before its look, long enough
	// for its new lock to be taken as stale: its token is spent, and the
	// acquire goes on with a spare token instead of publishing a second
	// lock of that one, which a steal judged on the first could take from
	// a live holder.
	{"create.renamed", func(e *stepEnv) {
		a := e.lock("create.renamed")
		var held *lock.Held
		goOn := e.stopped(a, "create.renamed", func() (err error) { held, err = a.Acquire(e.ctx(), time.Minute, lock.Events{}); return err })
		first := e.holder()
		e.age()
		bl := e.lock()
		b := e.acquire(bl)
		// Released before the creator looks: a creator that published
		// again would now hold a second lock of its spent token.
		if err := bl.Release(e.ctx(), b.Token); err != nil {
			e.t.Fatal(err)
		}
		if err := goOn(); err != nil {
			e.t.Fatalf("the creator whose lock was taken, with its wait left and the lock free: %v", err)
		}
		if held.Token == first {
			e.t.Fatalf("the creator holds the lock with %s, its spent token %s", held.Token, first)
		}
		e.checkHeldBy(held.Token)
	}},
	// A stealer stopped after judging a stale lock: another client steals
	// it and holds a fresh lock; the first one's move then fails.
	{"steal.judged", func(e *stepEnv) {
		e.acquire(e.lock())
		e.age()
		a := e.lock("steal.judged")
		goOn := e.stopped(a, "steal.judged", func() error { _, err := a.Acquire(e.ctx(), 0, lock.Events{}); return err })
		b := e.acquire(e.lock())
		wantBusyErr(e.t, goOn())
		e.checkHeldBy(b.Token)
	}},
	// A stealer stopped after moving the stale record out: the lock is
	// dead, another client clears it and holds; the first one's clearing
	// and creating then fail.
	{"steal.moved", func(e *stepEnv) {
		e.acquire(e.lock())
		e.age()
		a := e.lock("steal.moved")
		goOn := e.stopped(a, "steal.moved", func() error { _, err := a.Acquire(e.ctx(), 0, lock.Events{}); return err })
		b := e.acquire(e.lock())
		wantBusyErr(e.t, goOn())
		e.checkHeldBy(b.Token)
	}},
	// A client stopped before clearing a dead lock: another clears it and
	// holds; the rmdir of the first cannot remove a lock with a record.
	{"clear.judged", func(e *stepEnv) {
		if err := os.MkdirAll(filepath.Join(e.lockDir(), "0f0e0d0c-0b0a-4908-8706-050403020100"), 0o755); err != nil {
			e.t.Fatal(err)
		}
		a := e.lock("clear.judged")
		goOn := e.stopped(a, "clear.judged", func() error { _, err := a.Acquire(e.ctx(), 0, lock.Events{}); return err })
		b := e.acquire(e.lock())
		wantBusyErr(e.t, goOn())
		e.checkHeldBy(b.Token)
	}},
	// A holder stopped before its release, long enough for its lock to be
	// taken as stale: its release then finds the lock lost and leaves the
	// new holder alone.
	{"release.cas", func(e *stepEnv) {
		a := e.lock("release.cas")
		ha := e.acquire(e.lock())
		goOn := e.stopped(a, "release.cas", func() error { return a.Release(e.ctx(), ha.Token) })
		e.age()
		b := e.acquire(e.lock())
		var lost *lock.LostError
		if err := goOn(); !errors.As(err, &lost) || lost.Holder.Record.Token != b.Token {
			e.t.Fatalf("release of a taken lock: want LostError naming %s, got %v", b.Token, err)
		}
		e.checkHeldBy(b.Token)
	}},
	// A holder stopped between moving its record out and clearing: the
	// dead lock is taken by another; the late clearing leaves it alone.
	{"release.moved", func(e *stepEnv) {
		a := e.lock("release.moved")
		ha := e.acquire(e.lock())
		goOn := e.stopped(a, "release.moved", func() error { return a.Release(e.ctx(), ha.Token) })
		b := e.acquire(e.lock())
		if err := goOn(); err != nil {
			e.t.Fatalf("release: %v", err)
		}
		e.checkHeldBy(b.Token)
	}},
	// A break stopped after judging a stale lock: another client steals
	// it first; the break's move then fails and the new lock stays.
	{"break.judged", func(e *stepEnv) {
		e.acquire(e.lock())
		e.age()
		a := e.lock("break.judged")
		goOn := e.stopped(a, "break.judged", func() error { _, err := a.Break(e.ctx(), false, ""); return err })
		b := e.acquire(e.lock())
		var he *lock.HostError
		if err := goOn(); !errors.As(err, &he) || he.Code != "changed" {
			e.t.Fatalf("a break of a lock that changed: want the changed error, got %v", err)
		}
		e.checkHeldBy(b.Token)
	}},
	// A forced break stopped after matching the token: the holder releases
	// and another client takes the lock; the break then touches nothing.
	{"break.judged", func(e *stepEnv) {
		x := e.lock()
		hx := e.acquire(x)
		a := e.lock("break.judged")
		goOn := e.stopped(a, "break.judged", func() error { _, err := a.Break(e.ctx(), true, hx.Token); return err })
		if err := x.Release(e.ctx(), hx.Token); err != nil {
			e.t.Fatal(err)
		}
		b := e.acquire(e.lock())
		var he *lock.HostError
		if err := goOn(); !errors.As(err, &he) || he.Code != "changed" {
			e.t.Fatalf("a forced break of a released lock: want the changed error, got %v", err)
		}
		e.checkHeldBy(b.Token)
	}},
	// A store mutation stopped after its fence check, long enough for its
	// lock to be taken as stale: the mutation is late (its lease ran out,
	// which the protocol allows), but its release leaves the new holder
	// alone and reports the lock lost.
	{"fence.checked", func(e *stepEnv) {
		src := e.t.TempDir()
		if err := os.WriteFile(filepath.Join(src, "f"), []byte("x"), 0o644); err != nil {
			e.t.Fatal(err)
		}
		art, err := store.Open(src, "rt")
		if err != nil {
			e.t.Fatal(err)
		}
		if _, err := store.New(e.lock()).Push(e.ctx(), art, store.PushOptions{}); err != nil {
			e.t.Fatal(err)
		}
		a := e.lock("fence.checked")
		goOn := e.stopped(a, "fence.checked", func() error {
			return store.New(a).Pin(e.ctx(), art.ID(), false, 0, lock.Events{})
		})
		e.age()
		b := e.acquire(e.lock())
		var lost *lock.LostError
		if err := goOn(); !errors.As(err, &lost) || lost.Holder.Record.Token != b.Token {
			e.t.Fatalf("a fenced mutation whose lock was taken: want LostError naming %s, got %v", b.Token, err)
		}
		if got := e.holder(); got != b.Token {
			e.t.Fatalf("the lock is held by %q, want %q", got, b.Token)
		}
	}},
	// A push stopped after it took over a cut upload's stage (its resume
	// mark renamed, the stage not yet renamed): another push of the same
	// runtime finds no mark, makes a stage of its own and promotes; the
	// stopped one goes on and finds the runtime present. Its archive now
	// links to the copy of the blob the host has, so its first bytes are
	// not the cut upload's: the digest of the prefix tells, and it starts
	// over (a few KiB) instead of resuming. One runtime, byte for byte,
	// and no stage left.
	{"resume.taken", func(e *stepEnv) {
		art := e.bigArtifact(8 << 20)
		e.cutStage(art)
		a := e.lock("resume.taken")
		var ra *store.PushResult
		goOn := e.stopped(a, "resume.taken", func() (err error) {
			ra, err = store.New(a).Push(e.ctx(), art, store.PushOptions{})
			return err
		})
		rb, err := store.New(e.lock()).Push(e.ctx(), art, store.PushOptions{})
		if err != nil || !rb.Promoted || rb.Resumed != 0 {
			e.t.Fatalf("the other push: %v %+v; want it promoted from a stage of its own", err, rb)
		}
		if err := goOn(); err != nil || !ra.Present || ra.Resumed != 0 || ra.Reused != 1 || ra.Uploaded > 64<<10 {
			e.t.Fatalf("the push that took the stage over: %v %+v; want it started over, the blob copied on the host, and present", err, ra)
		}
		e.checkRuntime(art)
	}},
	// A promotion stopped once it entered its stage, before it claimed it,
	// long enough for the stage to look abandoned: another push of the
	// runtime takes it over (renames it, writes its own key and mark). The
	// stopped promotion, in that directory by its working directory, goes
	// on: its claim finds the other push's key, puts the mark back and
	// stops (stage); the other push promotes from the stage it took.
	{"stage.entered", func(e *stepEnv) {
		art := e.bigArtifact(8 << 20)
		a := e.lock("stage.entered")
		goOn := e.stopped(a, "stage.entered", func() error {
			_, err := store.New(a).Push(e.ctx(), art, store.PushOptions{})
			return err
		})
		e.takeOverWhileStopped(art, goOn, true)
	}},
	// The same for the removal of a stage whose upload failed: the stopped
	// push leaves the stage the other took over alone. (A push in two
	// commands: in one, the first command enters its stage, and stops
	// there, before the upload.)
	{"stage.entered", func(e *stepEnv) {
		art := e.bigArtifact(8 << 20)
		a := lock.New(failingUpload{e.dial()}, lock.Root{Path: e.root})
		lock.SetPause(a, e.t.TempDir(), "stage.entered")
		goOn := e.stopped(a, "stage.entered", func() error {
			_, err := store.New(a).Push(e.ctx(), art, store.PushOptions{TwoPass: true})
			return err
		})
		e.takeOverWhileStopped(art, goOn, false)
	}},
	// A promotion after the upload (TwoPass) stopped after it removed its
	// stage's resume mark: a push of the same runtime meanwhile cannot take
	// that stage over (it makes its own), and both end with the one runtime.
	{"promote.marked", func(e *stepEnv) {
		art := e.bigArtifact(8 << 20)
		a := e.lock("promote.marked")
		var ra *store.PushResult
		goOn := e.stopped(a, "promote.marked", func() (err error) {
			ra, err = store.New(a).Push(e.ctx(), art, store.PushOptions{TwoPass: true})
			return err
		})
		time.Sleep(6 * time.Second) // the stage's archive is quiet long enough to be resumed, had it its mark
		rb, err := store.New(e.lock()).Push(e.ctx(), art, store.PushOptions{})
		if err != nil || !rb.Promoted || rb.Resumed != 0 {
			e.t.Fatalf("the other push: %v %+v; want it promoted from a stage of its own", err, rb)
		}
		if err := goOn(); err != nil || !ra.Present {
			e.t.Fatalf("the stopped promotion: %v %+v; want it to find the runtime present", err, ra)
		}
		e.checkRuntime(art)
	}},
}

// takeOverWhileStopped: a push stopped in its stage (goOn lets it go on)
// has its stage taken over, 6 s later, by another push of art, which lets
// the stopped one go on just before its own upload. The other push must
// promote from the stage it took; the stopped one must end with the host
// saying the stage is not its own (promoting) or with its upload's failure
// (dropping).
func (e *stepEnv) takeOverWhileStopped(art *store.Artifact, goOn func() error, promoting bool) {
	e.t.Helper()
	time.Sleep(6 * time.Second) // quiet long enough to be resumed
	var stopped error
	tr := uploadHook{Transport: e.dial(), before: func(string) { stopped = goOn() }}
	l := lock.New(tr, lock.Root{Path: e.root})
	rb, err := store.New(l).Push(e.ctx(), art, store.PushOptions{})
	if err != nil || !rb.Promoted {
		e.t.Fatalf("the push that took the stage over: %v %+v", err, rb)
	}
	if promoting {
		e.stageGone(stopped)
	} else if !errors.Is(stopped, errFailingUpload) {
		e.t.Fatalf("the stopped push: %v; want its upload's failure", stopped)
	}
	e.checkRuntime(art)
}

// failingUpload is a transport whose uploads fail at once, writing
// nothing: the push then drops its stage.
type failingUpload struct{ transport.Transport }

var errFailingUpload = errors.New("the test's upload failure")

func (failingUpload) Upload(context.Context, string, io.Reader, transport.UploadOptions) (int64, error) {
	return 0, errFailingUpload
}

// bigArtifact is a tree of size bytes of random data, large enough for a
// push to be stopped in its upload.
func (e *stepEnv) bigArtifact(size int) *store.Artifact {
	e.t.Helper()
	src := e.t.TempDir()
	b := make([]byte, size)
	rand.Read(b)
	if err := os.WriteFile(filepath.Join(src, "blob"), b, 0o644); err != nil {
		e.t.Fatal(err)
	}
	art, err := store.Open(src, "rt")
	if err != nil {
		e.t.Fatal(err)
	}
	return art
}

// cutStage leaves an upload of art stopped half way in the store: its
// stage, marked cut.
func (e *stepEnv) cutStage(art *store.Artifact) {
	e.t.Helper()
	stop := make(chan struct{})
	var once sync.Once
	_, err := store.New(e.lock()).Push(e.ctx(), art, store.PushOptions{Stop: stop, Progress: func(sent, total int64) {
		if sent > total/2 {
			// The upload reads nothing more until the stop has ended
			// it: a fast one would otherwise end first, and its
			// promotion be what is stopped.
			once.Do(func() { close(stop); time.Sleep(500 * time.Millisecond) })
		}
	}})
	if !errors.Is(err, store.ErrStopped) {
		e.t.Fatalf("the push to stop: %v, want it stopped", err)
	}
	if m, _ := filepath.Glob(filepath.Join(e.root, "runtimes", ".stage-*", "cut")); len(m) != 1 {
		e.t.Fatalf("no stopped upload's stage: %v", m)
	}
}

// checkRuntime: the store holds art's runtime, its blob byte for byte,
// and no stage.
func (e *stepEnv) checkRuntime(art *store.Artifact) {
	e.t.Helper()
	want, _ := os.ReadFile(filepath.Join(art.Source, "blob"))
	got, err := os.ReadFile(filepath.Join(e.root, "runtimes", art.ID(), "blob"))
	if err != nil || !bytes.Equal(got, want) {
		e.t.Fatalf("the runtime's blob differs from the source (%d bytes, %v)", len(got), err)
	}
	if m, _ := filepath.Glob(filepath.Join(e.root, "runtimes", ".stage-*")); len(m) != 0 {
		e.t.Fatalf("stages left: %v", m)
	}
}

// stallUpload starts a push of art that stalls once 3/4 of its archive is
// sent, and returns 6 s later, when nothing has written the stage's archive
// for long enough that another push of the runtime may take it over; goOn
// lets the push go on and returns its error.
func (e *stepEnv) stallUpload(art *store.Artifact) (goOn func() error) {
	e.t.Helper()
	half, resume := make(chan struct{}), make(chan struct{})
	var once sync.Once
	stalled := make(chan error, 1)
	go func() {
		_, err := store.New(e.lock()).Push(e.ctx(), art, store.PushOptions{Progress: func(sent, total int64) {
			if sent > total*3/4 {
				once.Do(func() { close(half); <-resume })
			}
		}})
		stalled <- err
	}()
	<-half
	time.Sleep(6 * time.Second)
	// The promotion begun with the upload gives the stage back (its
	// mark) once it has had no word for 5 s.
	e.markBack()
	return func() error {
		close(resume)
		return <-stalled
	}
}

// stageGone fails unless err is the host saying the push's stage is gone.
func (e *stepEnv) stageGone(err error) {
	e.t.Helper()
	var he *store.HostError
	if !errors.As(err, &he) || he.Code != "stage" {
		e.t.Fatalf("the stalled push: %v; want the host to say its stage is gone", err)
	}
}

// renewStalled starts a run with a 2 s lease whose guardian stops between
// its look at the record and its touch (renew.looked), and returns once it
// stands there, with the run's result to read after goOn.
func (e *stepEnv) renewStalled() (res **lock.RunResult, goOn func() error) {
	a := e.lock("renew.looked")
	a.Lease = 2 * time.Second
	res = new(*lock.RunResult)
	goOn = e.stopped(a, "renew.looked", func() error {
		r, err := a.Run(e.ctx(), []string{"sleep", "30"}, lock.RunOptions{})
		*res = r
		return err
	})
	return res, goOn
}

var renewTests = []struct {
	step string
	fn   func(e *stepEnv)
}{
	// A guardian stopped past its lease between its look and its touch: a
	// waiter takes the lock as stale meanwhile. The late touch finds the
	// record gone (touch -c creates nothing), the command is stopped at
	// once, and the run reports the lock lost, leaving the new holder
	// alone.
	{"renew.looked", func(e *stepEnv) {
		res, goOn := e.renewStalled()
		held, err := e.lock().Acquire(e.ctx(), 20*time.Second, lock.Events{})
		if err != nil {
			e.t.Fatalf("a waiter must take a lock whose heartbeats stopped for its lease: %v", err)
		}
		start := time.Now()
		if err := goOn(); err != nil {
			e.t.Fatal(err)
		}
		r := *res
		if !r.Fenced || r.Lost == nil || r.Lost.Holder.Record.Token != held.Token {
			e.t.Fatalf("want the run fenced and its lock lost to %s, got %+v (lost %v)", held.Token, r, r.Lost)
		}
		if took := time.Since(start); took > 15*time.Second {
			e.t.Fatalf("the fenced command was not stopped at once: the run took %s more", took)
		}
		e.checkHeldBy(held.Token)
	}},
	// The same stall with nobody waiting: the touch lands after the lease
	// ran out, so it is disowned (a waiter may have judged the lock stale
	// meanwhile): the command is stopped and the lock released.
	{"renew.looked", func(e *stepEnv) {
		res, goOn := e.renewStalled()
		time.Sleep(3 * time.Second)
		if err := goOn(); err != nil {
			e.t.Fatal(err)
		}
		if r := *res; !r.Fenced || !r.Exited {
			e.t.Fatalf("a renewal after the lease ran out must be disowned: want the run fenced, got %+v", r)
		}
		e.checkHeldBy("")
	}},
}

func init() { stepTests = append(stepTests, renewTests...) }

// TestStepsUnderStalls runs every step test under dash and busybox.
func TestStepsUnderStalls(t *testing.T) {
	for name, dial := range stepShells(t) {
		for i, st := range stepTests {
			t.Run(name+"/"+st.step+"/"+string(rune('a'+i)), func(t *testing.T) {
				t.Parallel()
				st.fn(newStepEnv(t, dial))
			})
		}
	}
}

// TestStalledUploadTakenOver: a push whose client stalls in the middle of
// its upload, long enough for its stage to look abandoned, has it taken
// over by another push of the same runtime, which resumes it and promotes.
// The stalled client then writes the rest of its archive (into the file the
// other push took the name from) and comes to its promotion: it fails,
// saying so, and the runtime is the source byte for byte.
func TestStalledUploadTakenOver(t *testing.T) {
	onStepShells(t, func(t *testing.T, e *stepEnv) {
		// Stalled past 3/4 of 48 MiB: beyond the window a cut upload
		// is resumed below its length by.
		art := e.bigArtifact(48 << 20)
		goOn := e.stallUpload(art)
		r, err := store.New(e.lock()).Push(e.ctx(), art, store.PushOptions{})
		if err != nil || !r.Promoted || r.Resumed == 0 {
			t.Fatalf("the push that came later: %v %+v; want it to resume the stalled upload and promote", err, r)
		}
		e.stageGone(goOn())
		e.checkRuntime(art)
	})
}

// TestStalledUploadWritesOn: as TestStalledUploadTakenOver, but the push
// that takes the stage over sends the same tree from a tar archive whose
// times differ (another archive, the same id), and the stalled client
// writes the rest of its own archive while the other's promotion stands
// before it reads the stage (a promotion after the upload, TwoPass, stopped
// at promote.marked). The taker kept the stalled upload's bytes in
// a file of its own, so what the stalled client writes lands in a file
// nobody reads: the taker promotes, and the runtime is the source.
func TestStalledUploadWritesOn(t *testing.T) {
	onStepShells(t, func(t *testing.T, e *stepEnv) {
		art := e.bigArtifact(48 << 20)
		blob, err := os.ReadFile(filepath.Join(art.Source, "blob"))
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		tw := tar.NewWriter(&buf)
		tw.WriteHeader(&tar.Header{Name: "blob", Mode: 0o644, Size: int64(len(blob)), ModTime: time.Unix(1e9, 0)})
		tw.Write(blob)
		tw.Close()
		archive := filepath.Join(t.TempDir(), "rt.tar")
		if err := os.WriteFile(archive, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		other, err := store.Open(archive, "rt")
		if err != nil || other.ID() != art.ID() {
			t.Fatalf("the archive of the tree: %v, id %s, want %s", err, other.ID(), art.ID())
		}
		goOnStalled := e.stallUpload(art)
		b := e.lock("promote.marked")
		var rb *store.PushResult
		goOn := e.stopped(b, "promote.marked", func() (err error) {
			rb, err = store.New(b).Push(e.ctx(), other, store.PushOptions{TwoPass: true})
			return err
		})
		e.stageGone(goOnStalled())
		if err := goOn(); err != nil || !rb.Promoted {
			t.Fatalf("the push that took the stage over: %v %+v; want it promoted", err, rb)
		}
		e.checkRuntime(art)
	})
}

// TestEveryNamedStepIsTested: every step the fragments can stop at
// (h_step NAME in shellcmd/sh) is named in docs/protocol.md (the lock's) or
// docs/rollout.md (a health-checked switch's) and has a test here, or, for
// fence.checked, in the store's tests.
func TestEveryNamedStepIsTested(t *testing.T) {
	var doc []byte
	for _, f := range []string{"../docs/protocol.md", "../docs/rollout.md"} {
		d, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		doc = append(doc, d...)
	}
	tested := map[string]bool{}
	for _, st := range stepTests {
		tested[st.step] = true
	}
	files, _ := filepath.Glob("../shellcmd/sh/*.sh")
	steps := map[string]bool{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range regexp.MustCompile(`h_step ([a-z]+\.[a-z]+)`).FindAllStringSubmatch(string(data), -1) {
			steps[m[1]] = true
		}
	}
	if len(steps) < 8 {
		t.Fatalf("found only %d steps in the fragments: %v", len(steps), steps)
	}
	for s := range steps {
		if !tested[s] {
			t.Errorf("the fragments stop at %s, which no step test uses", s)
		}
		if !strings.Contains(string(doc), "`"+s+"`") {
			t.Errorf("the fragments stop at %s, which neither docs/protocol.md nor docs/rollout.md names", s)
		}
	}
}
