package e2e

import (
	"archive/tar"
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hoistdev/hoist/cmd/hoist/output"
	"github.com/hoistdev/hoist/e2e/sshd"
	"github.com/hoistdev/hoist/remote"
	"github.com/hoistdev/hoist/shellcmd"
	"github.com/hoistdev/hoist/store"
)

// TestContainersSharingAStoreKeepEachOthersLocks: two containers on one
// kernel (the same boot_id and /etc/machine-id, each its own PID namespace
// and PID 1) share a store volume and log in as the same user. A lock taken
// in one is held for the other, never "stale" or "previous boot": the other
// container's status says locked, its acquire and run answer busy (75), its
// gc skips, and the lock keeps the holder's token; then the other way round.
//
// A broken previous-boot rule (one that takes a different PID namespace or a
// different PID 1 start time for a reboot) would make the second container
// steal the lock at once: acquire exiting 0 with "took over ... previous
// boot", status saying stale/boot, the record carrying the thief's token.
func TestContainersSharingAStoreKeepEachOthersLocks(t *testing.T) {
	sshd.RequireRoot(t)
	t.Parallel()
	a := sshd.Start(t, sshd.Options{PIDNamespace: true})
	b := sshd.Start(t, sshd.Options{PIDNamespace: true})
	if a.User != b.User {
		t.Fatalf("the two hosts log in as %s and %s; the test needs one user for both", a.User, b.User)
	}
	// The shared volume: made by root, owned by the login both use.
	root := filepath.Join(a.Dir, "shared-store")
	if err := os.Mkdir(root, 0o755); err != nil {
		t.Fatal(err)
	}
	uid, gid := lookupIDs(t, a.User)
	if err := os.Chown(root, uid, gid); err != nil {
		t.Fatal(err)
	}

	boot := strings.TrimSpace(readFile(t, "/proc/sys/kernel/random/boot_id"))
	nsA, nsB := hostPIDNS(t, a), hostPIDNS(t, b)
	if nsA == nsB {
		t.Fatalf("both hosts are in PID namespace %s: they are not two containers", nsA)
	}

	ca, cb := newCLI(t, a, root), newCLI(t, b, root)
	for _, d := range []struct {
		name          string
		holder, other *cli
		holderNS      string
	}{
		{"A holds, B asks", ca, cb, nsA},
		{"B holds, A asks", cb, ca, nsB},
	} {
		t.Run(d.name, func(t *testing.T) {
			hold := d.holder.run("lock", "acquire")
			if hold.code != 0 {
				t.Fatalf("acquire in the holding container: %s", hold)
			}
			token := strings.TrimSpace(hold.stdout)
			defer d.holder.run("lock", "release", "--token", token)

			recPath := lockRecord(root)
			before := readFile(t, recPath)
			rec, ok := shellcmd.ParseRecord(strings.SplitN(before, "\n", 2)[0])
			if !ok || rec.Token != token || rec.BootID != boot || rec.PIDNS != d.holderNS {
				t.Fatalf("the record is not the holder's, written in its container (token %s, boot %s, pidns %s):\n%s", token, boot, d.holderNS, before)
			}

			st := d.other.run("--json", "lock", "status")
			if st.code != 0 {
				t.Fatalf("status in the other container: %s", st)
			}
			obj := decodeOne[output.LockStatus](t, "status in the other container", st.stdout)
			if held := heldOf(obj.Lock); !obj.Locked || obj.Stale || held.Why != "" || held.Token != token || held.BootMatch == nil || !*held.BootMatch {
				t.Fatalf("status in the other container: want locked by %s, not stale, same boot:\n%s", token, st.stdout)
			}
			txt := d.other.run("lock", "status")
			if txt.code != 0 || !strings.Contains(txt.stdout, "locked by") ||
				strings.Contains(txt.stdout+txt.stderr, "previous boot") || strings.Contains(txt.stdout+txt.stderr, "another boot") {
				t.Fatalf("status in the other container must say held, and nothing of a previous boot:\n%s", txt)
			}

			if r := d.other.run("lock", "acquire", "--wait", "0"); r.code != 75 || strings.Contains(r.stderr, "took over") {
				t.Fatalf("acquire --wait 0 in the other container: want 75 (busy), nothing taken over:\n%s", r)
			}
			if r := d.other.run("run", "--wait", "0", "--", "true"); r.code != 75 {
				t.Fatalf("run --wait 0 in the other container: want 75 (busy):\n%s", r)
			}
			if r := d.other.run("gc"); r.code != 0 || !strings.Contains(r.stdout, "skipped: store busy") {
				t.Fatalf("gc in the other container: want skipped, store busy:\n%s", r)
			}
			if after := readFile(t, lockRecord(root)); lockRecord(root) != recPath || after != before {
				t.Fatalf("the lock changed hands: %s held\n%s\nnow %s holds\n%s", recPath, before, lockRecord(root), after)
			}
			if r := d.holder.run("lock", "release", "--token", token); r.code != 0 {
				t.Fatalf("release by the holder: %s", r)
			}
		})
	}
}

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

// TestImpliedDirectoriesAre0755OnTheHost: a .tar that lists only files
// ("a/b/c/file", no directory entries) installs a, a/b and a/b/c as 0755,
// never 0777 (the host unpacks under umask 0, so a directory the archive
// does not describe would otherwise get tar's 0777); and setuid and setgid
// files, from a tar or a directory tree, arrive without those bits (4755
// and 2755 become 0755). A broken packer shows "777 a" or "4755 ...".
func TestImpliedDirectoriesAre0755OnTheHost(t *testing.T) {
	t.Parallel()
	h := sshd.Start(t, sshd.Options{})
	root := filepath.Join(h.Dir, "store")
	c := newCLI(t, h, root)

	archive := filepath.Join(t.TempDir(), "files.tar")
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, f := range []struct {
		name string
		mode int64
	}{{"a/b/c/file", 0o644}, {"a/b/c/suid", 0o4755}, {"a/b/c/sgid", 0o2755}} {
		body := "body of " + f.name + "\n"
		if err := tw.WriteHeader(&tar.Header{Name: f.name, Typeflag: tar.TypeReg, Mode: f.mode, Size: int64(len(body)), ModTime: time.Now()}); err != nil {
			t.Fatal(err)
		}
		tw.Write([]byte(body))
	}
	tw.Close()
	if err := os.WriteFile(archive, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	id := pushJSON(t, c, archive, "--name", "files").ID
	got := hostSh(t, h, "cd "+shq(filepath.Join(root, "runtimes", id))+" && stat -c '%a %n' a a/b a/b/c a/b/c/file a/b/c/suid a/b/c/sgid")
	if want := "755 a\n755 a/b\n755 a/b/c\n644 a/b/c/file\n755 a/b/c/suid\n755 a/b/c/sgid\n"; got != want {
		t.Errorf("modes installed from a tar without directory entries:\n%swant:\n%s", got, want)
	}

	// The same tree twice, once with setuid and setgid files, once with
	// those files 0755.
	tree := func(special bool) string {
		src := sourceTree(t, "suid")
		for name, mode := range map[string]fs.FileMode{"bin/suid": fs.ModeSetuid | 0o755, "bin/sgid": fs.ModeSetgid | 0o755} {
			if !special {
				mode = 0o755
			}
			p := filepath.Join(src, name)
			if err := os.WriteFile(p, []byte("#!/bin/sh\n"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(p, mode); err != nil {
				t.Fatal(err)
			}
			if fi, err := os.Lstat(p); err != nil || fi.Mode() != mode {
				t.Fatalf("source %s is %v (%v), want %v", name, fi.Mode(), err, mode)
			}
		}
		return src
	}
	id = pushJSON(t, c, tree(true), "--name", "tree").ID
	got = hostSh(t, h, "cd "+shq(filepath.Join(root, "runtimes", id))+" && stat -c '%a %n' bin/suid bin/sgid")
	if want := "755 bin/suid\n755 bin/sgid\n"; got != want {
		t.Errorf("setuid and setgid files of a tree were installed as:\n%swant:\n%s", got, want)
	}
	// A login that is not root cannot keep a setuid bit through tar
	// anyway (the kernel drops it when the file is written), so the
	// installed modes alone do not show who stripped it. The id does: it
	// covers the modes as installed, and the stripped tree is the plain
	// one.
	plain, err := store.Open(tree(false), "tree")
	if err != nil {
		t.Fatal(err)
	}
	if id != plain.ID() {
		t.Errorf("the setuid tree was pushed as %s, the same tree without setuid is %s: the client did not strip the bits", id, plain.ID())
	}
}

// TestProcessListShowsNoFragment: while a run waits for the lock on the
// host, no process of the host's user shows, in its command line, the
// run's command (with its secret), the waiting run's token or any of
// hoist's shell function names; the fixed loader is all there is. Once the
// holder releases, the run runs and prints the secret. A fragment passed as
// an argument (sh -c "<fragment>") would show all three.
func TestProcessListShowsNoFragment(t *testing.T) {
	t.Parallel()
	h := sshd.Start(t, sshd.Options{})
	root := filepath.Join(h.Dir, "store")
	c := newCLI(t, h, root)
	secret := "SECRET-" + randomHex(t, 12)
	funcs := shellFunctions(t)

	hold := c.run("lock", "acquire")
	if hold.code != 0 {
		t.Fatalf("acquire: %s", hold)
	}
	w := c.start("run", "--wait", "60", "--", "echo", secret)
	waitFor(t, 30*time.Second, "the run waits for the lock", func() bool {
		return strings.Contains(w.stderr(), "waiting for the store lock")
	})
	scratch, _ := filepath.Glob(filepath.Join(root, "runs", "*"))
	if len(scratch) != 1 {
		t.Fatalf("want the waiting run's scratch directory alone in runs/, found %v", scratch)
	}
	token := filepath.Base(scratch[0])
	loader := strings.TrimSuffix(strings.TrimPrefix(remote.Loader, "exec /bin/sh -c '"), "'")
	loader = "/bin/sh -c " + loader

	ours := hostProcesses(t, h)
	sawLoader := false
	for range 10 {
		for _, args := range ours() {
			if args == loader {
				sawLoader = true
			}
		}
		// Every process of the user, this host's or not.
		for pid, args := range userProcesses(t, h.User) {
			if pid == w.cmd.Process.Pid {
				continue // the client itself, when the host's user is the caller
			}
			for _, bad := range append([]string{secret, token}, funcs...) {
				if strings.Contains(args, bad) {
					t.Fatalf("process %d of %s shows %q: %s", pid, h.User, bad, args)
				}
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	if !sawLoader {
		t.Fatalf("no process of the host runs the loader %q:\n%v", loader, ours())
	}

	if r := c.run("lock", "release", "--token", strings.TrimSpace(hold.stdout)); r.code != 0 {
		t.Fatalf("release: %s", r)
	}
	if code := w.wait(t, 30*time.Second); code != 0 || w.stdout() != secret+"\n" {
		t.Fatalf("the run after the release: exit %d, stdout %q, stderr %s", code, w.stdout(), w.stderr())
	}
}

// TestRelayEndsWhenScratchVanishes: the command removes its own scratch
// directory (runs/<token>) and goes on for a second. hoist still returns,
// with the command's status (7), and within a few seconds no process of the
// host that was started for the run is left. A relay that waited for
// "done" in the scratch directory would poll for ever: hoist would hang
// (the host shell waits for it) and a sleep loop would stay behind.
func TestRelayEndsWhenScratchVanishes(t *testing.T) {
	t.Parallel()
	h := sshd.Start(t, sshd.Options{})
	root := filepath.Join(h.Dir, "store")
	c := newCLI(t, h, root)
	ours := hostProcesses(t, h)
	before := ours()

	s := c.start("run", "--", "sh", "-c", "rm -rf "+shq(root)+"/runs/*; sleep 1; echo done; exit 7")
	// While it runs, the filter must see the run's processes: else an
	// empty list afterwards would prove nothing.
	during := 0
	deadline := time.Now().Add(30 * time.Second)
	for running := true; running && time.Now().Before(deadline); {
		select {
		case <-s.done:
			running = false
		case <-time.After(50 * time.Millisecond):
			for pid := range ours() {
				if _, old := before[pid]; !old {
					during++
				}
			}
		}
	}
	if during == 0 {
		t.Fatal("no process of the run was ever seen: the process filter is broken")
	}
	// Checked after the processes below, so that a failure shows both.
	code := s.wait(t, 30*time.Second)
	defer func() {
		if code != 7 {
			t.Errorf("hoist exited %d, want the command's status 7 (reported by the host); stdout %q, stderr:\n%s", code, s.stdout(), s.stderr())
		}
	}()
	var left map[int]string
	deadline = time.Now().Add(5 * time.Second)
	for {
		left = map[int]string{}
		for pid, args := range ours() {
			if _, old := before[pid]; !old {
				left[pid] = args
			}
		}
		if len(left) == 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if len(left) > 0 {
		t.Fatalf("5s after hoist returned, processes of the run are still there: %v", left)
	}
	if exists(lockPath(root)) {
		t.Errorf("the lock is still held after the run")
	}
}

// TestKeptRunOutputIsPrivate: a run whose client is killed (SIGKILL) keeps
// its record on the host in runs/<id>/ once the command is done: the
// directory 0700, info, out, err and status 0600, and complete. A scratch made
// under the login's umask would be 0755/0644, readable by every user of the
// host.
func TestKeptRunOutputIsPrivate(t *testing.T) {
	t.Parallel()
	h := sshd.Start(t, sshd.Options{})
	root := filepath.Join(h.Dir, "store")
	c := newCLI(t, h, root)
	s := c.start("run", "--", "sh", "-c", "sleep 2; echo kept-out; echo kept-err >&2")
	waitStarted(t, s, root)
	dirs, _ := filepath.Glob(filepath.Join(root, "runs", "*"))
	if len(dirs) != 1 {
		t.Fatalf("want one scratch directory, found %v", dirs)
	}
	scr := dirs[0]
	if err := s.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	s.wait(t, 10*time.Second)
	waitFor(t, 30*time.Second, "the host keeps the output with its status", func() bool {
		return exists(filepath.Join(scr, "status"))
	})
	waitFor(t, 10*time.Second, "the host releases", func() bool { return !exists(lockPath(root)) })
	got := hostSh(t, h, "cd "+shq(scr)+" && stat -c '%a %n' . out err status info && cat out err && cut -d' ' -f1 status")
	if want := "700 .\n600 out\n600 err\n600 status\n600 info\nkept-out\nkept-err\n0\n"; got != want {
		t.Fatalf("the kept output on the host:\n%swant:\n%s", got, want)
	}
}

// TestUnpackOnFullDiskSaysWhy: the store's filesystem has room for the
// bytes but too few inodes for the tree. The push fails with one line that
// carries the write error ("No space left on device"), not a wrong cause
// such as "no sha256sum", and short enough to be a verdict; no stage is
// left and current is unchanged, byte for byte.
func TestUnpackOnFullDiskSaysWhy(t *testing.T) {
	sshd.RequireRoot(t)
	t.Parallel()
	h := sshd.Start(t, sshd.Options{})
	dir := filepath.Join(h.Dir, "few-inodes")
	mountTmpfs(t, h, dir, "size=64m,nr_inodes=200,mode=0755")
	c := newCLI(t, h, dir)
	v1 := sourceTree(t, "1")
	id1 := pushJSON(t, c, v1, "--name", "app", "--activate").ID

	many := t.TempDir()
	for d := range 4 {
		sub := filepath.Join(many, "d"+strconv.Itoa(d))
		os.Mkdir(sub, 0o755)
		for f := range 250 {
			if err := os.WriteFile(filepath.Join(sub, "f"+strconv.Itoa(f)), []byte("x\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	// -q: stderr holds the error only, not the lines of the upload's progress.
	r := c.run("-q", "push", many, "--name", "many", "--activate")
	line := strings.TrimSuffix(r.stderr, "\n")
	t.Logf("%d bytes: %.300s", len(line), line)
	if stages, _ := filepath.Glob(filepath.Join(dir, "runtimes", ".stage-*")); len(stages) > 0 {
		t.Errorf("stages left: %v", stages)
	}
	if got, _ := os.Readlink(filepath.Join(dir, "current")); got != "runtimes/"+id1 {
		t.Errorf("current -> %q, want runtimes/%s", got, id1)
	} else {
		sameTree(t, v1, filepath.Join(dir, "runtimes", id1))
	}
	if r.code != 1 || strings.Contains(line, "\n") || !strings.HasPrefix(line, "hoist: "+h.Target()+": ") ||
		!strings.Contains(line, "No space left on device") || strings.Contains(line, "sha256") {
		t.Fatalf("push of 1000 files onto 200 inodes: want one line with the write error:\n%.2000s", r)
	}
	// The error travels as one verdict line, which the client bounds at
	// 64 KiB (remote.maxVerdict): a longer one is a protocol error, taken
	// for an "unrecognized reply" whenever it arrives in several pieces.
	// A tree of many files makes tar complain once per file, so the host
	// must cut its complaint short.
	if len(line) > 64<<10 {
		t.Errorf("the error line is %d bytes, over the protocol's 64 KiB verdict bound; the host sends tar's whole output (one complaint per file)", len(line))
	}
}

// TestPushRefusedWhenTooBigSaysBothNumbers: an 8 MiB runtime and a 4 MiB
// filesystem. The push is refused before the upload, in one line that gives
// the MiB it needs and the MiB free (the filesystem's real free space), and
// nothing is uploaded: uploaded_bytes 0, no stage, and the active runtime
// intact. A push that only found out by filling the disk would report bytes
// uploaded, or an error without the numbers.
func TestPushRefusedWhenTooBigSaysBothNumbers(t *testing.T) {
	sshd.RequireRoot(t)
	t.Parallel()
	h := sshd.Start(t, sshd.Options{})
	dir := filepath.Join(h.Dir, "small")
	mountTmpfs(t, h, dir, "size=4m,mode=0755")
	c := newCLI(t, h, dir)
	v1 := sourceTree(t, "1")
	id1 := pushJSON(t, c, v1, "--name", "app", "--activate").ID
	big := randomTree(t, 8<<20)

	r := c.run("-q", "push", big, "--name", "big", "--activate")
	line := strings.TrimSuffix(r.stderr, "\n")
	t.Log(line)
	m := regexp.MustCompile(`needs ([0-9.]+) MiB\b.* ([0-9.]+) MiB free`).FindStringSubmatch(line)
	if r.code != 1 || strings.Contains(line, "\n") || !strings.HasPrefix(line, "hoist: "+h.Target()+": ") || m == nil ||
		!strings.Contains(line, "free space") {
		t.Fatalf("push of 8 MiB onto 4 MiB: want one line with the MiB needed and free:\n%s", r)
	}
	need, _ := strconv.ParseFloat(m[1], 64)
	free, _ := strconv.ParseFloat(m[2], 64)
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		t.Fatal(err)
	}
	avail := float64(st.Bavail) * float64(st.Bsize) / (1 << 20)
	if need < 8 || free > 4 || free < avail-0.2 || free > avail+0.2 {
		t.Fatalf("needs %.1f MiB, %.1f MiB free; want at least 8 needed and the filesystem's %.2f MiB free:\n%s", need, free, avail, line)
	}

	r = c.run("--json", "push", big, "--name", "big")
	if r.code != 1 {
		t.Fatalf("push --json: %s", r)
	}
	if obj := decodeOne[output.Push](t, "push --json", r.stdout); obj.Pushed == nil || obj.UploadedBytes != 0 {
		t.Fatalf("push --json: want uploaded_bytes 0:\n%s", r.stdout)
	}
	if stages, _ := filepath.Glob(filepath.Join(dir, "runtimes", ".stage-*")); len(stages) > 0 {
		t.Errorf("stages left: %v", stages)
	}
	if got, _ := os.Readlink(filepath.Join(dir, "current")); got != "runtimes/"+id1 {
		t.Fatalf("current -> %q, want %s", got, id1)
	}
	sameTree(t, v1, filepath.Join(dir, "runtimes", id1))
}

// hostSh runs script with /bin/sh as the host's login and fails the test
// unless it succeeds; it returns the standard output.
func hostSh(t testing.TB, h *sshd.Host, script string) string {
	t.Helper()
	out, status := h.SSH(t, "exec /bin/sh -c "+shq(script))
	if status != 0 {
		t.Fatalf("on the host: %s: status %d, output %q", script, status, out)
	}
	return out
}

func shq(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

func readFile(t testing.TB, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func lookupIDs(t testing.TB, name string) (uid, gid int) {
	t.Helper()
	u, err := user.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	uid, _ = strconv.Atoi(u.Uid)
	gid, _ = strconv.Atoi(u.Gid)
	return uid, gid
}

// hostPIDNS is the number of the host's PID namespace, as a lock record
// carries it.
func hostPIDNS(t testing.TB, h *sshd.Host) string {
	t.Helper()
	out := hostSh(t, h, "readlink /proc/self/ns/pid")
	ns := strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(out), "pid:["), "]")
	if _, err := strconv.ParseUint(ns, 10, 64); err != nil {
		t.Fatalf("PID namespace of %s: %q", h.Addr, out)
	}
	return ns
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

func randomHex(t testing.TB, n int) string {
	t.Helper()
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

// shellFunctions lists the names of hoist's host-side shell functions.
func shellFunctions(t testing.TB) []string {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join("..", "shellcmd", "sh", "*.sh"))
	re := regexp.MustCompile(`(?m)^(h_[A-Za-z0-9_]+)\(\)`)
	var names []string
	for _, f := range files {
		for _, m := range re.FindAllStringSubmatch(readFile(t, f), -1) {
			names = append(names, m[1])
		}
	}
	have := strings.Join(names, " ")
	if len(names) < 20 || !strings.Contains(have, "h_acquire") || !strings.Contains(have, "h_op_run") {
		t.Fatalf("found only these shell functions in ../shellcmd/sh: %v", names)
	}
	return names
}

// userProcesses maps the pid of every process of user to its command line.
func userProcesses(t testing.TB, user string) map[int]string {
	t.Helper()
	out, err := exec.Command("ps", "-ww", "-u", user, "-o", "pid=,args=").Output()
	if err != nil && len(out) == 0 {
		// ps exits 1 when it lists nothing.
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
			t.Fatalf("ps -u %s: %v", user, err)
		}
	}
	procs := map[int]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		line = strings.TrimSpace(line)
		pid, args, ok := strings.Cut(line, " ")
		if !ok {
			continue
		}
		n, err := strconv.Atoi(pid)
		if err != nil {
			continue
		}
		procs[n] = strings.TrimSpace(args)
	}
	return procs
}

// hostProcesses returns a function that lists the processes of h (pid and
// command line): those of its user whose environment carries the marker
// every login of h gets from the harness (HOIST_E2E_HOST), which tells them
// from other hosts' and other tests'.
func hostProcesses(t testing.TB, h *sshd.Host) func() map[int]string {
	t.Helper()
	marker, status := h.SSH(t, "echo $HOIST_E2E_HOST")
	marker = strings.TrimSpace(marker)
	if status != 0 || marker == "" {
		t.Fatalf("the logins of %s carry no HOIST_E2E_HOST (status %d)", h.Addr, status)
	}
	entry := []byte("\x00HOIST_E2E_HOST=" + marker + "\x00")
	return func() map[int]string {
		out := map[int]string{}
		for pid, args := range userProcesses(t, h.User) {
			env, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
			if err == nil && bytes.Contains(append([]byte{0}, env...), entry) {
				out[pid] = args
			}
		}
		return out
	}
}

// mountTmpfs mounts a tmpfs with opts at dir, owned by the host's login,
// until the test ends.
func mountTmpfs(t testing.TB, h *sshd.Host, dir, opts string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", opts, "tmpfs", dir).CombinedOutput(); err != nil {
		t.Fatalf("mount tmpfs -o %s: %v %s", opts, err, out)
	}
	t.Cleanup(func() { exec.Command("umount", "-l", dir).Run() })
	uid, gid := lookupIDs(t, h.User)
	if err := os.Chown(dir, uid, gid); err != nil {
		t.Fatal(err)
	}
}

// TestUnreadTokenIsNotKept: a manual hold whose token could not be handed
// on (stdout a pipe nobody reads: hoist lock acquire | true) is released by
// the host, not kept under a token nobody knows. The token is printed
// before the host is told the hold is taken.
func TestUnreadTokenIsNotKept(t *testing.T) {
	t.Parallel()
	h := sshd.Start(t, sshd.Options{})
	root := filepath.Join(h.Dir, "store")
	c := newCLI(t, h, root)
	cmd := c.command("lock", "acquire")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	out.Close() // the reader is gone before anything is written
	// Killed by SIGPIPE as it printed the token: the host had taken the
	// lock, so the test below sees a release, not an acquire that never
	// happened.
	err = cmd.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGPIPE {
		t.Fatalf("lock acquire with nowhere to print its token: want it ended by SIGPIPE, got %v", err)
	}
	waitFor(t, 10*time.Second, "the host releases the unconfirmed hold", func() bool {
		r := c.run("--json", "lock", "status")
		return r.code == 0 && !decodeOne[output.LockStatus](t, "lock status", r.stdout).Locked
	})
}
