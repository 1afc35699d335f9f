package e2e

import (
	"crypto/rand"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hoistdev/hoist/e2e/sshd"
	"github.com/hoistdev/hoist/transport"
)

// onDeltaHosts runs test, in parallel, on each host the delta and resume
// tests run on: GNU tools with openssl, and busybox without openssl
// (sha256sum verifies there); each with a store at root and a CLI for it.
func onDeltaHosts(t *testing.T, test func(t *testing.T, h *sshd.Host, root string, c *cli)) {
	// The busybox host needs root (mount namespaces): sshd.Start skips it
	// otherwise, and the test says so.
	hosts := map[string]sshd.Options{"gnu": {},
		"busybox-no-openssl": {Shell: "sh", Busybox: true, Hide: []string{"/usr/bin/openssl"}}}
	for name, opts := range hosts {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			h := sshd.Start(t, opts)
			root := filepath.Join(h.Dir, "store")
			test(t, h, root, newCLI(t, h, root))
		})
	}
}

// deltaTree writes n files of size bytes of random data under lib/, two
// files with the same bytes but different modes, a private directory, a
// symlink and some small files.
func deltaTree(t testing.TB, n, size int) string {
	t.Helper()
	d := t.TempDir()
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(d, "lib", "deep"), 0o755))
	must(os.Mkdir(filepath.Join(d, "private"), 0o700))
	for i := range n {
		b := make([]byte, size)
		rand.Read(b)
		must(os.WriteFile(filepath.Join(d, "lib", fmt.Sprintf("part%03d.bin", i)), b, 0o644))
	}
	same := make([]byte, 100<<10)
	rand.Read(same)
	must(os.WriteFile(filepath.Join(d, "lib", "deep", "tool"), same, 0o755))
	must(os.WriteFile(filepath.Join(d, "lib", "deep", "tool.data"), same, 0o644))
	must(os.WriteFile(filepath.Join(d, "private", "key"), []byte("secret\n"), 0o600))
	must(os.WriteFile(filepath.Join(d, "README"), []byte("a runtime\n"), 0o644))
	must(os.Symlink("lib/deep/tool", filepath.Join(d, "tool")))
	return d
}

// copyTree copies src to a new directory, modes and links kept.
func copyTree(t testing.TB, src string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "tree")
	if out, err := exec.Command("cp", "-a", src, dst).CombinedOutput(); err != nil {
		t.Fatalf("cp -a: %v %s", err, out)
	}
	return dst
}

// TestPushDelta: a push of a tree that shares files with a runtime on the
// host uploads only the files the host lacks, and every runtime is its
// source byte for byte, modes and links included. The copies are the new
// runtime's own files, not links to the old one's. A list of files on the
// host that lies (a digest under another file's path, a mode that is not
// the file's, a path climbing out, a FIFO, a list planted as a symlink)
// costs only a file that travels again.
func TestPushDelta(t *testing.T) {
	t.Parallel()
	onDeltaHosts(t, func(t *testing.T, h *sshd.Host, root string, c *cli) {
		v1 := deltaTree(t, 48, 256<<10) // 12 MiB
		r1 := pushJSON(t, c, v1, "--name", "app")
		if !r1.Promoted || r1.ReusedFiles != 0 {
			t.Fatalf("first push: %s", js(r1))
		}
		id1 := r1.ID

		// 4 bytes of one file change, and a file is added.
		v2 := copyTree(t, v1)
		f, err := os.OpenFile(filepath.Join(v2, "lib", "part007.bin"), os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		f.WriteAt([]byte("HOIS"), 1000)
		f.Close()
		os.WriteFile(filepath.Join(v2, "NEWS"), []byte("v2\n"), 0o644)
		r2 := pushJSON(t, c, v2, "--name", "app")
		// 47 shared parts and the two modes of the shared tool.
		if !r2.Promoted || r2.ReusedFiles != 49 {
			t.Fatalf("second push: %s", js(r2))
		}
		if up := r2.UploadedBytes; up > 256<<10+64<<10 {
			t.Fatalf("the second push uploaded %d bytes; the changed file is %d", up, 256<<10)
		}
		id2 := r2.ID
		rt := func(id string) string { return filepath.Join(root, "runtimes", id) }
		sameTree(t, v1, rt(id1))
		sameTree(t, v2, rt(id2))
		for _, p := range []string{"lib/part000.bin", "lib/deep/tool", "lib/deep/tool.data"} {
			a, _ := os.Stat(filepath.Join(rt(id1), p))
			b, _ := os.Stat(filepath.Join(rt(id2), p))
			if a == nil || b == nil || os.SameFile(a, b) {
				t.Fatalf("%s: the new runtime's file is the old runtime's (or missing)", p)
			}
			if b.Sys().(*syscall.Stat_t).Nlink != 1 {
				t.Fatalf("%s: %d links, want 1", p, b.Sys().(*syscall.Stat_t).Nlink)
			}
		}
		if _, stages := runtimesIn(t, root); len(stages) > 0 {
			t.Fatalf("stages are left: %v", stages)
		}

		// The list of v2's files lies: part000's digest under part001's
		// path, a digest under a path out of the store, and a planted
		// symlink list.
		list := filepath.Join(root, "runtimes", ".files", id2)
		b, err := os.ReadFile(list)
		if err != nil {
			t.Fatalf("the runtime's file list: %v", err)
		}
		lines := strings.Split(strings.TrimSpace(string(b)), "\n")
		sums := map[string]string{} // path to "<sha256> <mode>"
		for _, l := range lines {
			f := strings.SplitN(l, " ", 3)
			sums[f[2]] = f[0] + " " + f[1]
		}
		lied := []string{
			sums["lib/part000.bin"] + " lib/part001.bin",
			sums["lib/part002.bin"] + " ../../../../../etc/passwd",
			// tool.data's digest and mode, under the path of tool,
			// which has those bytes but mode 0755 (and no line of
			// its own).
			sums["lib/deep/tool.data"] + " lib/deep/tool",
			// part003's, under a FIFO planted in the runtime: a copy
			// that read it would never end.
			sums["lib/part003.bin"] + " lib/fifo",
			// part005's, under a symlink planted in the runtime to a
			// directory of the login's, and part004's under a file
			// reached through it: a copy of the link into the pool
			// could have the file's copy written through it, over the
			// login's own file. GNU tar already refuses to write
			// through a link it made; hoist copies no symlink at all,
			// so part004 lands in a directory of the pool (the count
			// below tells).
			sums["lib/part005.bin"] + " lib/evil",
			sums["lib/part004.bin"] + " lib/evil/f",
		}
		if err := syscall.Mkfifo(filepath.Join(rt(id2), "lib", "fifo"), 0o644); err != nil {
			t.Fatal(err)
		}
		victim := filepath.Join(h.Dir, "victim")
		if out, code := h.SSH(t, "exec /bin/sh -c 'mkdir "+victim+" && cp "+filepath.Join(rt(id2), "lib", "part004.bin")+" "+victim+"/f'"); code != 0 {
			t.Fatalf("making the login's victim file: %d %s", code, out)
		}
		before, _ := os.Stat(filepath.Join(victim, "f"))
		if err := os.Symlink(victim, filepath.Join(rt(id2), "lib", "evil")); err != nil {
			t.Fatal(err)
		}
		for _, l := range lines {
			switch strings.SplitN(l, " ", 3)[2] {
			case "lib/part000.bin", "lib/part001.bin", "lib/part002.bin", "lib/part003.bin", "lib/part004.bin", "lib/part005.bin",
				"lib/deep/tool.data", "lib/deep/tool":
			default:
				lied = append(lied, l)
			}
		}
		if err := os.WriteFile(list, []byte(strings.Join(lied, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Remove(filepath.Join(root, "runtimes", ".files", id1)); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(list, filepath.Join(root, "runtimes", ".files", id1)); err != nil {
			t.Fatal(err)
		}
		v3 := copyTree(t, v2)
		os.WriteFile(filepath.Join(v3, "NEWS"), []byte("v3\n"), 0o644)
		r3 := pushJSON(t, c, v3, "--name", "app")
		if after, err := os.Stat(filepath.Join(victim, "f")); err != nil || after.ModTime() != before.ModTime() || after.Size() != before.Size() {
			t.Fatalf("the login's file reached through a planted symlink was written: %v", err)
		}
		// part000 (its copy fails the digest), part001 (no list
		// has its digest), part002 (its path climbs out), part003
		// (its path is a FIFO), part005 (its path is a symlink),
		// tool.data (its copy has another mode) and tool (no list
		// has it) travel; part004 is read through the symlink and
		// copied into a directory of the pool: 43 parts are copied.
		if !r3.Promoted || r3.ReusedFiles != 43 {
			t.Fatalf("third push: %s", js(r3))
		}
		sameTree(t, v3, rt(r3.ID))
		os.Remove(filepath.Join(rt(id2), "lib", "fifo"))
		os.Remove(filepath.Join(rt(id2), "lib", "evil"))
		sameTree(t, v2, rt(id2))
	})
}

// TestPushResumesAfterCut: an upload over four streams through a proxy
// that cuts the connection once the archive on the host is past 80 % ends
// with an unknown outcome (79) that says the next push resumes, never a
// runtime; the next
// push of the same tree resumes the stage from well past its start and
// installs the tree byte for byte.
func TestPushResumesAfterCut(t *testing.T) {
	t.Parallel()
	onDeltaHosts(t, func(t *testing.T, h *sshd.Host, root string, c *cli) {
		p := sshd.NewProxy(t, h.Addr)
		viaProxy := *c
		viaProxy.flags = cliFlags(t, h, p.Addr, root)
		const size = 96 << 20
		src := randomTree(t, size)
		push := viaProxy.start("--json", "push", src, "--name", "big", "--streams", "4")
		stage, cutAt := uploadedPast(t, root, size*8/10, push)
		p.Cut()
		// The host may have received everything: the outcome is
		// unknown, and the next push resumes.
		code := push.wait(t, 60*time.Second)
		if code != 79 || !strings.Contains(push.stdout(), "resumes it") {
			t.Fatalf("the cut push: exit %d, want 79 (outcome unknown) saying the next push resumes: %s %s", code, push.stdout(), push.stderr())
		}
		if ids, _ := filepath.Glob(filepath.Join(root, "runtimes", "big-*")); len(ids) != 0 {
			t.Fatalf("the cut push left a runtime: %v", ids)
		}
		if !exists(stage) {
			t.Fatalf("the cut push's stage is gone: nothing to resume")
		}
		// Nothing marks a cut connection's stage: it is resumed once
		// nothing has written to it for 5 s.
		time.Sleep(6 * time.Second)
		r := pushJSON(t, c, src, "--name", "big")
		// The upload keeps how far its bytes are whole; what was in
		// flight (transport.Window) may be sent again, and the last
		// mark written may lag a chunk or two.
		least := cutAt - transport.Window - 2*transport.ChunkSize
		if !r.Promoted || r.ResumedAt < least || r.ResumedAt+r.UploadedBytes < size {
			t.Fatalf("the resumed push: %s", js(r))
		}
		t.Logf("cut at %.0f%% (the archive's length on the host); resumed at %.0f%%, uploaded %.0f%% again",
			100*float64(cutAt)/size, 100*float64(r.ResumedAt)/size, 100*float64(r.UploadedBytes)/size)
		sameFile(t, filepath.Join(src, "blob"), filepath.Join(root, "runtimes", r.ID, "blob"))
		if exists(stage) {
			t.Fatalf("the resumed stage is still there")
		}
	})
}
