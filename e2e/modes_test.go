package e2e

// The modes of what hoist makes on the host: directories an archive implies
// are 0755, a kept run's record is the login's own.

import (
	"archive/tar"
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/hoistdev/hoist/e2e/sshd"
	"github.com/hoistdev/hoist/store"
)

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
