package store_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/hoistdev/hoist/lock"
	"github.com/hoistdev/hoist/store"
	"github.com/hoistdev/hoist/transport"
)

func TestLocalPushActivateRollbackGC(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	s := store.New(lock.New(&transport.Local{}, lock.Root{Path: root}))
	src := t.TempDir()
	os.WriteFile(filepath.Join(src, "v"), []byte("1"), 0o755)
	a1, err := store.Open(src, "app")
	if err != nil {
		t.Fatal(err)
	}
	r, err := s.Push(ctx, a1, store.PushOptions{Activate: true, Wait: time.Minute})
	if err != nil || !r.Promoted || !r.Activated || r.Uploaded == 0 {
		t.Fatalf("push 1: %+v %v", r, err)
	}
	r, err = s.Push(ctx, a1, store.PushOptions{Wait: time.Minute})
	if err != nil || !r.Present || r.Uploaded != 0 || r.Execs != 1 {
		t.Fatalf("re-push: %+v %v", r, err)
	}
	os.WriteFile(filepath.Join(src, "v"), []byte("2"), 0o755)
	a2, _ := store.Open(src, "app")
	if r, err = s.Push(ctx, a2, store.PushOptions{Activate: true, Wait: time.Minute}); err != nil || r.Previous != a1.ID() {
		t.Fatalf("push 2: %+v %v", r, err)
	}
	if got, _ := os.ReadFile(filepath.Join(root, "current", "v")); string(got) != "2" {
		t.Fatalf("current/v = %q", got)
	}
	sw, err := s.Rollback(ctx, time.Minute, lock.Events{})
	if err != nil || sw.Current != a1.ID() || sw.Previous != a2.ID() {
		t.Fatalf("rollback: %+v %v", sw, err)
	}
	list, err := s.List(ctx)
	if err != nil || len(list) != 2 {
		t.Fatalf("list: %+v %v", list, err)
	}
	g, err := s.GC(ctx, 0, false, lock.Events{})
	if err != nil || len(g.Deleted) != 0 {
		t.Fatalf("gc deleted current or previous: %+v %v", g, err)
	}
	t.Logf("%+v", g)
}
