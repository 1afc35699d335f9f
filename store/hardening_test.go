package store_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hoistdev/hoist/lock"
	"github.com/hoistdev/hoist/store"
	"github.com/hoistdev/hoist/transport"
)

func localStore(t *testing.T) (*store.Store, string) {
	root := filepath.Join(t.TempDir(), "root")
	return store.New(lock.New(&transport.Local{}, lock.Root{Path: root})), root
}

func artifact(t *testing.T, name, content string) *store.Artifact {
	t.Helper()
	src := t.TempDir()
	if err := os.WriteFile(filepath.Join(src, "v"), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	a, err := store.Open(src, name)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func writeMeta(t *testing.T, root, id, body string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(root, "runtimes", ".meta", id), []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestPresentComparesTheFullDigest: a runtime whose id shares the 12 digits
// but whose recorded digest differs is another tree; a push of this one is
// refused, never answered "already present", and the other is left alone.
func TestPresentComparesTheFullDigest(t *testing.T) {
	ctx := context.Background()
	s, root := localStore(t)
	a := artifact(t, "app", "1")
	if _, err := s.Push(ctx, a, store.PushOptions{}); err != nil {
		t.Fatal(err)
	}
	other := a.Digest[:12] + strings.Repeat("f", 52)
	writeMeta(t, root, a.ID(), "name=app\nsize=1\npromoted=1\ndigest="+other+"\n")
	r, err := s.Push(ctx, a, store.PushOptions{})
	if !errors.Is(err, store.ErrIDTaken) || r.Present || !strings.Contains(err.Error(), other) {
		t.Fatalf("push onto a colliding id: want ErrIDTaken naming %s, got %+v %v", other, r, err)
	}
	// An earlier version's mark has no digest and is matched by id.
	writeMeta(t, root, a.ID(), "name=app\nsize=1\npromoted=1\n")
	if r, err := s.Push(ctx, a, store.PushOptions{}); err != nil || !r.Present {
		t.Fatalf("push onto an earlier version's runtime: %+v %v", r, err)
	}
}

// TestUnmarkedPathAtTheIDIsLeftAlone: runtimes/<id> that hoist did not
// promote (no mark) is never replaced or deleted; push says so.
func TestUnmarkedPathAtTheIDIsLeftAlone(t *testing.T) {
	ctx := context.Background()
	s, root := localStore(t)
	a := artifact(t, "app", "1")
	theirs := filepath.Join(root, "runtimes", a.ID())
	if err := os.MkdirAll(theirs, 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(theirs, "precious"), []byte("mine"), 0o644)
	_, err := s.Push(ctx, a, store.PushOptions{})
	if !errors.Is(err, store.ErrIDTaken) || !strings.Contains(err.Error(), "did not promote") {
		t.Fatalf("push onto an unmarked directory: want ErrIDTaken, got %v", err)
	}
	if got, _ := os.ReadFile(filepath.Join(theirs, "precious")); string(got) != "mine" {
		t.Fatal("the unmarked directory was touched")
	}
	stages, _ := filepath.Glob(filepath.Join(root, "runtimes", ".stage-*"))
	if len(stages) > 0 {
		t.Fatalf("stages left: %v", stages)
	}
}

// TestGCDeletesOnlyWhatHoistMade: in a store that also holds things hoist
// did not make (a --root that already had a "runtimes" directory), gc
// deletes only marked runtimes and leftovers with hoist's names, reports the
// rest as unmarked, and sweeps a mark whose runtime is gone.
func TestGCDeletesOnlyWhatHoistMade(t *testing.T) {
	ctx := context.Background()
	s, root := localStore(t)
	old, cur := artifact(t, "app", "1"), artifact(t, "app", "2")
	for _, a := range []*store.Artifact{old, cur} {
		if _, err := s.Push(ctx, a, store.PushOptions{Activate: true, Wait: time.Minute}); err != nil {
			t.Fatal(err)
		}
	}
	rt := filepath.Join(root, "runtimes")
	for _, p := range []string{"users-dir/data", ".hidden/x", "app-000000000000/x"} {
		os.MkdirAll(filepath.Join(rt, filepath.Dir(p)), 0o755)
		os.WriteFile(filepath.Join(rt, p), []byte("keep"), 0o644)
	}
	os.WriteFile(filepath.Join(rt, "plain-file"), []byte("keep"), 0o644)
	os.Symlink("/etc", filepath.Join(rt, "etc-link"))
	// A stage with a name that is not hoist's, however old.
	os.MkdirAll(filepath.Join(rt, ".stage-not-a-token"), 0o755)
	// A mark whose runtime is gone (a promotion cut short).
	writeMeta(t, root, "gone-0123456789ab", "name=gone\nsize=1\npromoted=1\ndigest=x\n")
	past := time.Now().Add(-2 * time.Hour)
	os.Chtimes(filepath.Join(rt, ".stage-not-a-token"), past, past)
	os.Chtimes(filepath.Join(rt, ".meta", "gone-0123456789ab"), past, past)
	if _, err := s.Rollback(ctx, time.Minute, lock.Events{}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Rollback(ctx, time.Minute, lock.Events{}); err != nil {
		t.Fatal(err)
	}
	// Now cur is current and old previous: with keep 0, a third runtime
	// goes and these two stay.
	third := artifact(t, "app", "3")
	if _, err := s.Push(ctx, third, store.PushOptions{Wait: time.Minute}); err != nil {
		t.Fatal(err)
	}
	res, err := s.GC(ctx, 0, false, lock.Events{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(res.Deleted, []string{third.ID()}) {
		t.Fatalf("deleted %v, want only %s", res.Deleted, third.ID())
	}
	unmarked := map[string]bool{}
	for _, k := range res.Kept {
		if k.Why == "unmarked" {
			unmarked[k.ID] = true
		}
	}
	for _, n := range []string{"users-dir", "app-000000000000", "plain-file", "etc-link"} {
		if !unmarked[n] {
			t.Errorf("%s was not reported as unmarked: %+v", n, res.Kept)
		}
	}
	for _, p := range []string{"users-dir/data", ".hidden/x", "app-000000000000/x", "plain-file", ".stage-not-a-token"} {
		if _, err := os.Stat(filepath.Join(rt, p)); err != nil {
			t.Errorf("gc touched %s: %v", p, err)
		}
	}
	if l, err := os.Readlink(filepath.Join(rt, "etc-link")); err != nil || l != "/etc" {
		t.Errorf("gc touched the symlink: %q %v", l, err)
	}
	if _, err := os.Stat(filepath.Join(rt, ".meta", "gone-0123456789ab")); !os.IsNotExist(err) {
		t.Errorf("the mark without a runtime was not swept: %v (swept %v)", err, res.Swept)
	}
}

// TestGCSweepsOldRunDirectories: the scratch of a command long gone is
// removed; a run's record stays for --keep-runs (a week), an earlier
// version's kept output a day; a name that is not a token is never touched.
func TestGCSweepsOldRunDirectories(t *testing.T) {
	ctx := context.Background()
	s, root := localStore(t)
	if _, err := s.Push(ctx, artifact(t, "app", "1"), store.PushOptions{}); err != nil {
		t.Fatal(err)
	}
	runs := filepath.Join(root, "runs")
	hour, week := time.Now().Add(-time.Hour), time.Now().Add(-7*24*time.Hour)
	mk := func(name string, when time.Time, files ...string) string {
		d := filepath.Join(runs, name)
		os.MkdirAll(d, 0o700)
		for _, f := range files {
			os.WriteFile(filepath.Join(d, f), []byte("x"), 0o600)
			os.Chtimes(filepath.Join(d, f), when, when)
		}
		os.Chtimes(d, when, when)
		return d
	}
	abandoned := mk("11111111-1111-4111-8111-111111111111", hour, "out", "err")
	keptRecent := mk("22222222-2222-4222-8222-222222222222", hour, "out", "status")
	keptOld := mk("33333333-3333-4333-8333-333333333333", week, "out", "status")
	sixDays, eightDays := time.Now().Add(-6*24*time.Hour), time.Now().Add(-8*24*time.Hour)
	record := mk("55555555-5555-4555-8555-555555555555", sixDays, "info", "out", "err", "status", "pgid", "guard")
	oldRecord := mk("66666666-6666-4666-8666-666666666666", eightDays, "info", "out", "err", "status", "pgid", "guard")
	// With the files of kill's messages, the run's shell's and its
	// guardian's.
	oldKilled := mk("77777777-7777-4777-8777-777777777777", eightDays, "info", "out", "err", "status", "pgid", "guard", "kill", "kill.guard")
	notOurs := mk("not-a-token", week, "data")
	// A runs/ that was there before hoist: a directory with a token's
	// name but someone else's files.
	theirs := mk("44444444-4444-4444-8444-444444444444", week, "metrics.csv")
	res, err := s.GC(ctx, 5, false, lock.Events{})
	if err != nil {
		t.Fatal(err)
	}
	for d, want := range map[string]bool{abandoned: false, keptRecent: true, keptOld: false, notOurs: true, theirs: true,
		record: true, oldRecord: false, oldKilled: false} {
		_, err := os.Stat(d)
		if (err == nil) != want {
			t.Errorf("%s: exists %v, want %v (swept %v)", filepath.Base(d), err == nil, want, res.Swept)
		}
	}
}

// TestForeignPointersAreLeftAlone: a current or previous in the root that
// hoist did not make (a file, a directory, a symlink elsewhere) is never
// replaced: activation is refused, naming it.
func TestForeignPointersAreLeftAlone(t *testing.T) {
	ctx := context.Background()
	for name, plant := range map[string]func(p string) error{
		"file":      func(p string) error { return os.WriteFile(p, []byte("important"), 0o644) },
		"directory": func(p string) error { return os.Mkdir(p, 0o755) },
		"symlink":   func(p string) error { return os.Symlink("/etc", p) },
	} {
		t.Run(name, func(t *testing.T) {
			s, root := localStore(t)
			a := artifact(t, "app", "1")
			if _, err := s.Push(ctx, a, store.PushOptions{}); err != nil {
				t.Fatal(err)
			}
			cur := filepath.Join(root, "current")
			if err := plant(cur); err != nil {
				t.Fatal(err)
			}
			before, _ := os.Lstat(cur)
			_, err := s.Activate(ctx, a.ID(), time.Minute, lock.Events{})
			if err == nil || !strings.Contains(err.Error(), "not a pointer hoist made") {
				t.Fatalf("activate over a foreign %s: %v", name, err)
			}
			after, err := os.Lstat(cur)
			if err != nil || after.Mode() != before.Mode() || after.ModTime() != before.ModTime() {
				t.Fatalf("the foreign %s was touched: %v", name, err)
			}
		})
	}
}

// TestGCSweepsAnOldStage: an upload's stage untouched for the stale period
// is swept: renamed to gc's trash first (a push of its runtime could take
// it over meanwhile, and only one rename of it succeeds), then removed,
// read-only directories and all; nothing of it is left.
func TestGCSweepsAnOldStage(t *testing.T) {
	ctx := context.Background()
	s, root := localStore(t)
	if _, err := s.Push(ctx, artifact(t, "app", "1"), store.PushOptions{}); err != nil {
		t.Fatal(err)
	}
	rt := filepath.Join(root, "runtimes")
	stage := filepath.Join(rt, ".stage-0b0c0d0e-0000-4000-8000-000000000001")
	for _, d := range []string{"", "tree", "tree/ro"} {
		if err := os.Mkdir(filepath.Join(stage, d), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(stage, "tree/ro/f"), []byte("x"), 0o400); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(stage, "tree/ro"), 0o500); err != nil {
		t.Fatal(err)
	}
	past := time.Now().Add(-2 * time.Hour)
	for _, p := range []string{"tree/ro/f", "tree/ro", "tree", ""} {
		if err := os.Chtimes(filepath.Join(stage, p), past, past); err != nil {
			t.Fatal(err)
		}
	}
	res, err := s.GC(ctx, 5, false, lock.Events{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(res.Swept, "runtimes/"+filepath.Base(stage)) {
		t.Errorf("swept %v, want the stage", res.Swept)
	}
	if m, _ := filepath.Glob(filepath.Join(rt, ".[st][tr]a*")); len(m) != 0 {
		t.Errorf("left: %v", m)
	}
}

// TestResumedStageInstallsOnlyTheArtifact: what a kept stage holds besides
// the upload (a tree/ with files of its own, a mark and a digest file that
// are links) never reaches the runtime, nor is written through: the
// promotion unpacks into a directory it made itself. The runtime holds
// exactly the artifact's entries.
func TestResumedStageInstallsOnlyTheArtifact(t *testing.T) {
	ctx := context.Background()
	s, root := localStore(t)
	a := artifact(t, "app", "1")
	stop := make(chan struct{})
	var once sync.Once
	// The upload's first read waits until the stop has cancelled it.
	halt := func(int64, int64) {
		once.Do(func() {
			close(stop)
			time.Sleep(500 * time.Millisecond)
		})
	}
	if _, err := s.Push(ctx, a, store.PushOptions{Stop: stop, Progress: halt}); !errors.Is(err, store.ErrStopped) {
		t.Fatalf("a push stopped in its upload: %v", err)
	}
	stages, _ := filepath.Glob(filepath.Join(root, "runtimes", ".stage-*"))
	if len(stages) != 1 {
		t.Fatalf("stages kept: %v", stages)
	}
	victim := filepath.Join(t.TempDir(), "victim")
	os.WriteFile(victim, []byte("keep"), 0o600)
	os.MkdirAll(filepath.Join(stages[0], "tree", "extra"), 0o755)
	os.WriteFile(filepath.Join(stages[0], "tree", "extra", "planted"), []byte("x"), 0o644)
	os.WriteFile(filepath.Join(stages[0], "tree", "planted"), []byte("x"), 0o755)
	os.Symlink(victim, filepath.Join(stages[0], "mark"))
	os.Symlink(victim, filepath.Join(stages[0], "sum"))
	r, err := s.Push(ctx, a, store.PushOptions{})
	if err != nil || !r.Promoted {
		t.Fatalf("the push that resumes the stage: %+v %v", r, err)
	}
	var got []string
	rt := filepath.Join(root, "runtimes", a.ID())
	filepath.WalkDir(rt, func(p string, _ os.DirEntry, err error) error {
		if rel, _ := filepath.Rel(rt, p); rel != "." {
			got = append(got, filepath.ToSlash(rel))
		}
		return err
	})
	var want []string
	for _, e := range a.Entries {
		want = append(want, e.Path)
	}
	if !slices.Equal(got, want) {
		t.Errorf("the runtime holds %v, the artifact %v", got, want)
	}
	if b, _ := os.ReadFile(victim); string(b) != "keep" {
		t.Errorf("a link in the stage was written through: %q", b)
	}
	if m, _ := filepath.Glob(filepath.Join(root, "runtimes", ".stage-*")); len(m) != 0 {
		t.Errorf("left: %v", m)
	}
}
