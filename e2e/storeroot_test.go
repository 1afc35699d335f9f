package e2e

// A store root hoist does not have to itself: one the login cannot read,
// paths others may write or that are symlinks, and files of the user's own
// under runtimes/ that gc must leave.

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/hoistdev/hoist/cmd/hoist/output"
	"github.com/hoistdev/hoist/e2e/sshd"
)

// TestUnreadableStoreIsAnError: a store the login cannot search (its root,
// or runtimes/, chmod 000 by the login itself) is an error naming the path,
// on one line and exit 1, for lock status, list and gc. Read as "missing",
// it would be reported as "free (no store yet)", "no runtimes" and "nothing
// to collect" with exit 0, which is what a broken check would print. With the
// permission back, all three work.
func TestUnreadableStoreIsAnError(t *testing.T) {
	t.Parallel()
	h := sshd.Start(t, sshd.Options{})
	root := filepath.Join(h.Dir, "store")
	c := newCLI(t, h, root)
	id := pushJSON(t, c, sourceTree(t, "1"), "--name", "app").ID
	for _, dir := range []string{root, filepath.Join(root, "runtimes")} {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			hostSh(t, h, "chmod 000 "+shq(dir))
			t.Cleanup(func() { os.Chmod(dir, 0o755) })
			for _, args := range [][]string{{"lock", "status"}, {"list"}, {"gc"}} {
				r := c.run(args...)
				oneLine(t, r, 1, h.Target(), dir+" ")
				if args[0] == "gc" {
					t.Log(strings.TrimSpace(r.stderr))
				}
				if r.stdout != "" {
					t.Fatalf("%v on an unreadable store printed a result:\n%s", args, r)
				}
				for _, bad := range []string{"free", "no runtimes", "nothing to collect", "no store"} {
					if strings.Contains(r.stderr, bad) {
						t.Fatalf("%v on an unreadable store says %q:\n%s", args, bad, r)
					}
				}
			}
			hostSh(t, h, "chmod 755 "+shq(dir))
			if r := c.run("lock", "status"); r.code != 0 || !strings.HasSuffix(r.stdout, ": free\n") {
				t.Fatalf("lock status with the permission back: %s", r)
			}
			if r := c.run("list"); r.code != 0 || !strings.Contains(r.stdout, id) {
				t.Fatalf("list with the permission back: %s", r)
			}
			if r := c.run("gc"); r.code != 0 || !strings.Contains(r.stdout, id+" (newest)") {
				t.Fatalf("gc with the permission back: %s", r)
			}
		})
	}
}

// TestUnsafeStorePathsAreRefused: a store path that is a symlink (runtimes/
// planted in a shared root, the root itself, runs/, runtimes/.meta) or that
// others may write is refused by push, gc, list, lock acquire and run, each
// with one line naming the path, before anything is touched: every file
// where the symlinks lead is still there, unchanged, and the command of run
// never ran. A store only its group may write is accepted.
//
// Following the symlinks, gc --keep 0 would delete the planted store's
// runtimes (or sweep the planted "runs" entries), push would write into the
// planted tree and run would leave its scratch there: the snapshots would
// differ. A check that missed world-writable paths would let all five
// commands succeed (exit 0).
func TestUnsafeStorePathsAreRefused(t *testing.T) {
	t.Parallel()
	h := sshd.Start(t, sshd.Options{})
	ran := filepath.Join(h.Dir, "ran")
	// refused runs the five commands against root and wants each refused
	// naming bad; nothing in watched may change.
	refused := func(t *testing.T, root, bad, why string, watched ...string) {
		t.Helper()
		before := map[string]string{}
		for _, w := range watched {
			before[w] = snapshot(t, w)
		}
		c := newCLI(t, h, root)
		for _, args := range [][]string{
			{"push", sourceTree(t, "new"), "--name", "new"},
			{"gc", "--keep", "0"},
			{"list"},
			{"lock", "acquire"},
			{"run", "--", "touch", ran},
		} {
			r := c.run(args...)
			oneLine(t, r, 1, h.Target(), bad+" ", why)
			if args[0] == "gc" {
				t.Log(strings.TrimSpace(r.stderr))
			}
		}
		for _, w := range watched {
			if after := snapshot(t, w); after != before[w] {
				t.Errorf("%s changed:\nbefore:\n%s\nafter:\n%s", w, before[w], after)
			}
		}
		if exists(ran) {
			t.Fatal("the command of run ran")
		}
	}
	// store makes a real store under root with a current runtime and an
	// unpinned, inactive one that gc --keep 0 would delete.
	store := func(root string) {
		c := newCLI(t, h, root)
		pushJSON(t, c, sourceTree(t, "cur"), "--name", "app", "--activate")
		pushJSON(t, c, sourceTree(t, "old"), "--name", "app")
	}

	t.Run("runtimes is a symlink", func(t *testing.T) {
		root, planted := filepath.Join(h.Dir, "r1"), filepath.Join(h.Dir, "r1-planted")
		store(planted)
		hostSh(t, h, "mkdir "+shq(root)+" && ln -s "+shq(planted+"/runtimes")+" "+shq(root+"/runtimes"))
		refused(t, root, filepath.Join(root, "runtimes"), "is a symlink", planted, root)
	})
	t.Run("root is a symlink", func(t *testing.T) {
		root, planted := filepath.Join(h.Dir, "r2"), filepath.Join(h.Dir, "r2-planted")
		store(planted)
		hostSh(t, h, "ln -s "+shq(planted)+" "+shq(root))
		refused(t, root, root, "is a symlink", planted)
	})
	t.Run("runs is a symlink", func(t *testing.T) {
		root, planted := filepath.Join(h.Dir, "r3"), filepath.Join(h.Dir, "r3-planted")
		store(root)
		// What gc would sweep if it followed the link: a finished run's
		// kept output, two days old.
		tok := "0f0f0f0f-0000-4000-8000-000000000001"
		hostSh(t, h, "rm -rf "+shq(root+"/runs")+" && mkdir -p "+shq(planted+"/"+tok)+
			" && echo output >"+shq(planted+"/"+tok+"/out")+" && echo 0 >"+shq(planted+"/"+tok+"/status")+
			" && touch -d '2 days ago' "+shq(planted+"/"+tok+"/out")+" "+shq(planted+"/"+tok+"/status")+" "+shq(planted+"/"+tok)+
			" && ln -s "+shq(planted)+" "+shq(root+"/runs"))
		refused(t, root, filepath.Join(root, "runs"), "is a symlink", planted, root)
	})
	t.Run("meta is a symlink", func(t *testing.T) {
		root, planted := filepath.Join(h.Dir, "r4"), filepath.Join(h.Dir, "r4-planted")
		store(root)
		meta := filepath.Join(root, "runtimes", ".meta")
		hostSh(t, h, "mv "+shq(meta)+" "+shq(planted)+" && ln -s "+shq(planted)+" "+shq(meta))
		refused(t, root, meta, "is a symlink", planted, root)
	})
	t.Run("writable by others", func(t *testing.T) {
		root := filepath.Join(h.Dir, "r5")
		store(root)
		rt := filepath.Join(root, "runtimes")
		hostSh(t, h, "chmod o+w "+shq(rt))
		refused(t, root, rt, "is writable by others", root)

		// Writable by its group (a shared deploy group) is fine.
		hostSh(t, h, "chmod o-w,g+w "+shq(rt))
		c := newCLI(t, h, root)
		id := pushJSON(t, c, sourceTree(t, "group"), "--name", "group").ID
		if r := c.run("list"); r.code != 0 || !strings.Contains(r.stdout, id) {
			t.Fatalf("list on a group-writable store: %s", r)
		}
		if r := c.run("--json", "gc", "--keep", "0"); r.code != 0 || len(decodeOne[output.GC](t, "gc", r.stdout).Deleted) == 0 {
			t.Fatalf("gc on a group-writable store: %s", r)
		}
		hold := c.run("lock", "acquire")
		if hold.code != 0 {
			t.Fatalf("lock acquire on a group-writable store: %s", hold)
		}
		if r := c.run("lock", "release", "--token", strings.TrimSpace(hold.stdout)); r.code != 0 {
			t.Fatalf("release: %s", r)
		}
		if r := c.run("run", "--", "echo", "group-ok"); r.code != 0 || r.stdout != "group-ok\n" {
			t.Fatalf("run on a group-writable store: %s", r)
		}
		if fi, err := os.Stat(rt); err != nil || fi.Mode().Perm() != 0o775 {
			t.Fatalf("runtimes/ is %v (%v), want left at 0775", fi.Mode(), err)
		}
	})
}

// TestGCDeletesOnlyWhatHoistMarked: --root points at a directory whose
// runtimes/ already holds the user's own directories, files and a symlink
// (one of them named like a runtime id, one like a stage), all old. gc
// --keep 0 deletes the inactive, unpinned hoist runtimes and nothing else:
// each of the user's entries is still there, byte for byte, and those it
// lists are reported as kept, "unmarked". A gc that deleted by age or by
// name shape would delete mydata, notes.txt or app-0123456789ab, and the
// snapshot of the user's entries would differ.
func TestGCDeletesOnlyWhatHoistMarked(t *testing.T) {
	t.Parallel()
	h := sshd.Start(t, sshd.Options{})
	root := filepath.Join(h.Dir, "store")
	rt := filepath.Join(root, "runtimes")
	hostSh(t, h, "mkdir -p "+shq(rt+"/mydata/sub")+" "+shq(rt+"/app-0123456789ab")+" "+shq(rt+"/.stage-mine")+
		" && echo mine >"+shq(rt+"/mydata/sub/file")+
		" && echo notes >"+shq(rt+"/notes.txt")+
		" && echo lookalike >"+shq(rt+"/app-0123456789ab/bin")+
		" && echo staged >"+shq(rt+"/.stage-mine/artifact.tar")+
		" && ln -s /etc "+shq(rt+"/etc-link")+
		" && cd "+shq(rt)+" && touch -h -d '2 days ago' mydata mydata/sub mydata/sub/file notes.txt app-0123456789ab app-0123456789ab/bin .stage-mine .stage-mine/artifact.tar etc-link")
	mine := []string{"mydata", "notes.txt", "app-0123456789ab", ".stage-mine", "etc-link"}
	before := map[string]string{}
	for _, u := range mine {
		before[u] = snapshot(t, filepath.Join(rt, u))
	}

	c := newCLI(t, h, root)
	ids := map[string]string{}
	for _, v := range []string{"previous", "current", "pinned", "old1", "old2"} {
		args := []string{sourceTree(t, v), "--name", "app"}
		if v == "previous" || v == "current" {
			args = append(args, "--activate")
		}
		ids[v] = pushJSON(t, c, args...).ID
	}
	if r := c.run("pin", ids["pinned"]); r.code != 0 {
		t.Fatal(r)
	}

	r := c.run("--json", "gc", "--keep", "0")
	if r.code != 0 {
		t.Fatalf("gc: %s", r)
	}
	res := decodeOne[output.GC](t, "gc", r.stdout)
	sort.Strings(res.Deleted)
	want := []string{ids["old1"], ids["old2"]}
	sort.Strings(want)
	if strings.Join(res.Deleted, " ") != strings.Join(want, " ") {
		t.Errorf("deleted %v, want only the inactive, unpinned hoist runtimes %v\n%s", res.Deleted, want, r.stdout)
	}
	why := map[string]string{}
	for _, k := range res.Kept {
		why[k.ID] = k.Why
	}
	for _, u := range []string{"mydata", "notes.txt", "app-0123456789ab", "etc-link"} {
		if why[u] != "unmarked" {
			t.Errorf("%s: kept as %q, want reported as \"unmarked\"\n%s", u, why[u], r.stdout)
		}
	}
	for v, w := range map[string]string{"current": "current", "previous": "previous", "pinned": "pinned"} {
		if why[ids[v]] != w || !exists(filepath.Join(rt, ids[v])) {
			t.Errorf("%s: kept as %q (exists %v), want %q", v, why[ids[v]], exists(filepath.Join(rt, ids[v])), w)
		}
	}
	for _, v := range []string{"old1", "old2"} {
		if exists(filepath.Join(rt, ids[v])) {
			t.Errorf("%s was not deleted", v)
		}
	}
	for _, u := range mine {
		if after := snapshot(t, filepath.Join(rt, u)); after != before[u] {
			t.Errorf("the user's %s changed:\nbefore:\n%s\nafter:\n%s", u, before[u], after)
		}
	}
}

// snapshot describes everything under p (not following symlinks): each
// path with its type, mode, contents digest or link target.
func snapshot(t testing.TB, p string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.WalkDir(p, func(q string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := os.Lstat(q)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(p, q)
		fmt.Fprintf(&b, "%s %v", rel, fi.Mode())
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			l, _ := os.Readlink(q)
			fmt.Fprintf(&b, " -> %s", l)
		case fi.Mode().IsRegular():
			data, err := os.ReadFile(q)
			if err != nil {
				return err
			}
			sum := sha256.Sum256(data)
			fmt.Fprintf(&b, " %s", hex.EncodeToString(sum[:8]))
		}
		b.WriteByte('\n')
		return nil
	})
	if err != nil {
		t.Fatalf("snapshot of %s: %v", p, err)
	}
	return b.String()
}
