package store_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hoistdev/hoist/lock"
	"github.com/hoistdev/hoist/store"
	"github.com/hoistdev/hoist/transport"
)

func TestResolve(t *testing.T) {
	now := time.Now()
	rts := []store.Runtime{ // newest first, as List returns them
		{ID: "app-3c0ffee00001", Name: "app", Promoted: now},
		{ID: "app-3c0ffee00002", Name: "app", Promoted: now.Add(-time.Hour)},
		{ID: "db-aaaaaaaaaaaa", Name: "db", Promoted: now.Add(-2 * time.Hour)},
		{ID: "app2-bbbbbbbbbbbb", Name: "app2", Promoted: now.Add(-3 * time.Hour)},
	}
	for _, tc := range []struct {
		ref, want string
		err       error
		cands     []string
	}{
		{ref: "app-3c0ffee00002", want: "app-3c0ffee00002"}, // a full id
		{ref: "app", want: "app-3c0ffee00001"},              // a name: its newest, not a prefix of four
		{ref: "db-a", want: "db-aaaaaaaaaaaa"},              // a unique prefix
		{ref: "app2", want: "app2-bbbbbbbbbbbb"},            // a name that is also a prefix
		{ref: "app-3c", cands: []string{"app-3c0ffee00001", "app-3c0ffee00002"}},
		{ref: "nope", err: store.ErrNotFound},
		{ref: "", err: store.ErrNotFound},
	} {
		got, err := store.Resolve(rts, tc.ref)
		var amb *store.AmbiguousError
		switch {
		case tc.cands != nil:
			if !errors.As(err, &amb) || !slices.Equal(amb.Candidates, tc.cands) {
				t.Errorf("Resolve(%q) = %q, %v; want the candidates %v", tc.ref, got, err, tc.cands)
			}
		case tc.err != nil:
			if !errors.Is(err, tc.err) {
				t.Errorf("Resolve(%q) = %q, %v; want %v", tc.ref, got, err, tc.err)
			}
		case got != tc.want || err != nil:
			t.Errorf("Resolve(%q) = %q, %v; want %q", tc.ref, got, err, tc.want)
		}
	}
}

// TestHistoryRecordsEverySwitch: a push --activate, an activate and a
// rollback (to previous, then to a runtime named) each append who switched
// what to what; reading it changes nothing.
func TestHistoryRecordsEverySwitch(t *testing.T) {
	ctx := context.Background()
	s, _ := localStore(t)
	if h, err := s.History(ctx); err != nil || len(h) != 0 {
		t.Fatalf("history of no store: %v %v", h, err)
	}
	a, b, c := artifact(t, "app", "1"), artifact(t, "app", "2"), artifact(t, "app", "3")
	for _, x := range []*store.Artifact{a, b} {
		if _, err := s.Push(ctx, x, store.PushOptions{Activate: true, Wait: time.Minute}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Push(ctx, c, store.PushOptions{Wait: time.Minute}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Activate(ctx, c.ID(), time.Minute, lock.Events{}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Rollback(ctx, time.Minute, lock.Events{}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.RollbackTo(ctx, a.ID(), time.Minute, lock.Events{}); err != nil {
		t.Fatal(err)
	}
	h, err := s.History(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := []store.Switched{
		{Action: "push", From: "", To: a.ID()},
		{Action: "push", From: a.ID(), To: b.ID()},
		{Action: "activate", From: b.ID(), To: c.ID()},
		{Action: "rollback", From: c.ID(), To: b.ID()},
		{Action: "rollback", From: b.ID(), To: a.ID()},
	}
	if len(h) != len(want) {
		t.Fatalf("history has %d entries, want %d: %+v", len(h), len(want), h)
	}
	for i, w := range want {
		g := h[i]
		if g.Action != w.Action || g.From != w.From || g.To != w.To || g.Who == "" || time.Since(g.When) > time.Minute {
			t.Errorf("entry %d: %+v, want %+v by someone, just now", i, g, w)
		}
	}
}

// TestSwitchesOnNoStoreCreateNothing: activate, rollback and pin on a host
// without a store say so, take no lock and create nothing.
func TestSwitchesOnNoStoreCreateNothing(t *testing.T) {
	ctx := context.Background()
	s, root := localStore(t)
	_, err1 := s.Activate(ctx, "app-000000000000", time.Minute, lock.Events{})
	_, err2 := s.Rollback(ctx, time.Minute, lock.Events{})
	err3 := s.Pin(ctx, "app-000000000000", false, time.Minute, lock.Events{})
	for i, err := range []error{err1, err2, err3} {
		if !errors.Is(err, store.ErrNoStore) {
			t.Errorf("command %d on no store: want ErrNoStore, got %v", i, err)
		}
	}
	if exists(root) {
		t.Fatal("something was created")
	}
}

func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

// countingLocal counts the host commands a Store runs.
type countingLocal struct {
	transport.Local
	n int
}

func (c *countingLocal) Run(ctx context.Context, req transport.Request) (int, error) {
	c.n++
	return c.Local.Run(ctx, req)
}

// TestByRefCostsOneCommandForAnID: an id acts at once; a name or a prefix
// is listed first; an unknown ref, and a host without a store, say so.
func TestByRefCostsOneCommandForAnID(t *testing.T) {
	ctx := context.Background()
	tr := &countingLocal{}
	s := store.New(lock.New(tr, lock.Root{Path: filepath.Join(t.TempDir(), "root")}))
	pin := func(id string) error { return s.Pin(ctx, id, false, time.Minute, lock.Events{}) }
	if _, err := s.ByRef(ctx, "app", pin); !errors.Is(err, store.ErrNoStore) {
		t.Fatalf("no store: want ErrNoStore, got %v", err)
	}
	a := artifact(t, "app", "1")
	if _, err := s.Push(ctx, a, store.PushOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		ref      string
		commands int
	}{{a.ID(), 1}, {"app", 2}, {a.ID()[:6], 2}} {
		tr.n = 0
		id, err := s.ByRef(ctx, tc.ref, pin)
		if err != nil || id != a.ID() || tr.n != tc.commands {
			t.Errorf("ByRef(%q) = %q, %v in %d host commands; want %s in %d", tc.ref, id, err, tr.n, a.ID(), tc.commands)
		}
	}
	if _, err := s.ByRef(ctx, "app-000000000000", pin); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("unknown id: want ErrNotFound, got %v", err)
	}
}

// TestPinNeverWritesThroughALink: a link at a runtime's pin path (in a store
// its group may write, a member can put one there) is not a pin, and
// pinning neither truncates nor writes what it leads to.
func TestPinNeverWritesThroughALink(t *testing.T) {
	ctx := context.Background()
	s, root := localStore(t)
	a := artifact(t, "app", "1")
	if _, err := s.Push(ctx, a, store.PushOptions{}); err != nil {
		t.Fatal(err)
	}
	victim := filepath.Join(t.TempDir(), "victim")
	if err := os.WriteFile(victim, []byte("the login's file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	pins := filepath.Join(root, "runtimes", ".pins")
	if err := os.MkdirAll(pins, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(victim, filepath.Join(pins, a.ID())); err != nil {
		t.Fatal(err)
	}
	var he *store.HostError
	if err := s.Pin(ctx, a.ID(), false, time.Minute, lock.Events{}); !errors.As(err, &he) || he.Code != "pin" {
		t.Errorf("pin through a link at the pin's path: %v; want the host to refuse (pin)", err)
	}
	if b, _ := os.ReadFile(victim); string(b) != "the login's file\n" {
		t.Fatalf("the file the link leads to was written: %q", b)
	}
	// Once the link is gone, the pin is made, and made again is still one.
	if err := os.Remove(filepath.Join(pins, a.ID())); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := s.Pin(ctx, a.ID(), false, time.Minute, lock.Events{}); err != nil {
			t.Fatal(err)
		}
	}
	if fi, err := os.Lstat(filepath.Join(pins, a.ID())); err != nil || !fi.Mode().IsRegular() {
		t.Fatalf("the pin: %v %v", fi, err)
	}
}

// TestNewestIsTheLastPromoted: runtimes of one name promoted within the
// same second are listed in the order they were promoted, newest first;
// the name resolves to the last one, and gc keeps it as the newest. A mark
// an earlier version wrote (no order) counts by its promotion time, even
// when that is ahead of the host's clock: a promotion after it is newer.
func TestNewestIsTheLastPromoted(t *testing.T) {
	ctx := context.Background()
	s, root := localStore(t)
	var pushed []string
	for i := range 8 {
		a := artifact(t, "app", strconv.Itoa(i))
		if _, err := s.Push(ctx, a, store.PushOptions{}); err != nil {
			t.Fatal(err)
		}
		pushed = append(pushed, a.ID())
	}
	rts, err := s.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var listed []string
	for _, rt := range rts {
		listed = append(listed, rt.ID)
	}
	newest := slices.Clone(pushed)
	slices.Reverse(newest)
	if !slices.Equal(listed, newest) {
		t.Errorf("list:\n%v\npushed, newest first:\n%v", listed, newest)
	}
	if id, err := s.Resolve(ctx, "app"); err != nil || id != pushed[len(pushed)-1] {
		t.Errorf("app resolves to %s (%v), want the last pushed, %s", id, err, pushed[len(pushed)-1])
	}
	g, err := s.GC(ctx, 1, true, lock.Events{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(sorted(g.Deleted), sorted(newest[1:])) {
		t.Errorf("gc --keep 1 would delete %v, want all but %s", g.Deleted, pushed[len(pushed)-1])
	}

	// An earlier version's mark, promoted an hour ahead of this clock.
	old := artifact(t, "app", "old")
	if _, err := s.Push(ctx, old, store.PushOptions{}); err != nil {
		t.Fatal(err)
	}
	writeMeta(t, root, old.ID(), fmt.Sprintf("name=app\nsize=3\npromoted=%d\ndigest=%s\n", time.Now().Add(time.Hour).Unix(), old.Digest))
	if id, _ := s.Resolve(ctx, "app"); id != old.ID() {
		t.Errorf("app resolves to %s, want the mark promoted latest, %s", id, old.ID())
	}
	after := artifact(t, "app", "after")
	if _, err := s.Push(ctx, after, store.PushOptions{}); err != nil {
		t.Fatal(err)
	}
	if id, _ := s.Resolve(ctx, "app"); id != after.ID() {
		t.Errorf("app resolves to %s, want %s, promoted after the earlier version's mark", id, after.ID())
	}
}

// TestTiedOrdersAgree: marks whose orders tie (an earlier version's,
// promoted in one second) are newest first in one way for list, a name as
// a reference and gc: the runtime activate NAME picks is the one gc --keep 1
// keeps as the newest.
func TestTiedOrdersAgree(t *testing.T) {
	ctx := context.Background()
	s, root := localStore(t)
	for _, c := range []string{"a", "b", "c", "d"} {
		a := artifact(t, "app", c)
		if _, err := s.Push(ctx, a, store.PushOptions{}); err != nil {
			t.Fatal(err)
		}
		writeMeta(t, root, a.ID(), fmt.Sprintf("name=app\nsize=1\npromoted=1700000000\ndigest=%s\n", a.Digest))
	}
	id, err := s.Resolve(ctx, "app")
	if err != nil {
		t.Fatal(err)
	}
	g, err := s.GC(ctx, 1, true, lock.Events{})
	if err != nil {
		t.Fatal(err)
	}
	var newest []string
	for _, k := range g.Kept {
		if k.Why == "newest" {
			newest = append(newest, k.ID)
		}
	}
	if len(newest) != 1 || newest[0] != id {
		t.Errorf("app resolves to %s; gc --keep 1 keeps %v as the newest", id, newest)
	}
}

// TestNoPlaceAfterTheLast: a mark at the last place a promotion can have
// (a forged one) is named when the next promotion is refused, instead of
// that promotion taking a place that reads as its promotion time, below
// the forged one, which would stay the newest for good.
func TestNoPlaceAfterTheLast(t *testing.T) {
	ctx := context.Background()
	s, root := localStore(t)
	forged := artifact(t, "app", "forged")
	if _, err := s.Push(ctx, forged, store.PushOptions{}); err != nil {
		t.Fatal(err)
	}
	writeMeta(t, root, forged.ID(), fmt.Sprintf("name=app\nsize=1\npromoted=1700000000\ndigest=%s\norder=999999999999999\n", forged.Digest))
	_, err := s.Push(ctx, artifact(t, "app", "next"), store.PushOptions{})
	if err == nil || !strings.Contains(err.Error(), "runtimes/.meta/"+forged.ID()+" records order=999999999999999") {
		t.Errorf("push after a mark at the last place: %v; want it refused, naming the mark", err)
	}
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}
