package e2e

import (
	"archive/tar"
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hoistdev/hoist/cmd/hoist/output"
	"github.com/hoistdev/hoist/e2e/sshd"
	"github.com/hoistdev/hoist/store"
)

// sourceTree writes a runtime with executables, private files, nested and
// empty directories and internal symlinks; version changes one file.
func sourceTree(t testing.TB, version string) string {
	t.Helper()
	d := t.TempDir()
	for p, mode := range map[string]fs.FileMode{"bin": 0o755, "lib/deep/er": 0o750, "share/empty": 0o700} {
		if err := os.MkdirAll(filepath.Join(d, p), mode); err != nil {
			t.Fatal(err)
		}
		os.Chmod(filepath.Join(d, p), mode)
	}
	files := map[string]struct {
		body string
		mode fs.FileMode
	}{
		"bin/app":          {"#!/bin/sh\necho " + version + "\n", 0o755},
		"lib/deep/er/data": {"data \x00\xff " + version, 0o600},
		"VERSION":          {version + "\n", 0o644},
	}
	for p, f := range files {
		if err := os.WriteFile(filepath.Join(d, p), []byte(f.body), f.mode); err != nil {
			t.Fatal(err)
		}
		os.Chmod(filepath.Join(d, p), f.mode)
	}
	os.Symlink("bin/app", filepath.Join(d, "app"))
	os.Symlink("../../../VERSION", filepath.Join(d, "lib/deep/er/version"))
	// A read-only directory with a file in it: busybox tar cannot fill one
	// it created read-only, and rm -rf cannot empty one.
	os.MkdirAll(filepath.Join(d, "ro"), 0o755)
	os.WriteFile(filepath.Join(d, "ro", "file"), []byte(version), 0o444)
	os.Chmod(filepath.Join(d, "ro"), 0o555)
	t.Cleanup(func() { os.Chmod(filepath.Join(d, "ro"), 0o755) })
	return d
}

// pushJSON pushes and returns its --json object, which says what the push
// did on the host.
func pushJSON(t testing.TB, c *cli, args ...string) output.Push {
	t.Helper()
	r := c.run(append([]string{"--json", "push"}, args...)...)
	if r.code != 0 {
		t.Fatalf("push %v: %s", args, r)
	}
	obj := decodeOne[output.Push](t, "push", r.stdout)
	if obj.Pushed == nil {
		t.Fatalf("push %v: it did not say what it did on the host: %s", args, r.stdout)
	}
	return obj
}

// randomTree is a runtime of one file of n random bytes, which no
// compression or deduplication can shrink.
func randomTree(t testing.TB, n int64) string {
	t.Helper()
	d := t.TempDir()
	f, err := os.Create(filepath.Join(d, "blob"))
	if err == nil {
		_, err = io.CopyN(f, rand.Reader, n)
		f.Close()
	}
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// sameFile fails t unless the two files hold the same bytes.
func sameFile(t testing.TB, want, got string) {
	t.Helper()
	sum := func(p string) string {
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		h := sha256.New()
		if _, err := io.Copy(h, f); err != nil {
			t.Fatal(err)
		}
		return hex.EncodeToString(h.Sum(nil))
	}
	if a, b := sum(want), sum(got); a != b {
		t.Fatalf("%s differs from %s (sha256 %s, want %s)", got, want, b, a)
	}
}

func digestOf(t testing.TB, dir string) string {
	t.Helper()
	a, err := store.Open(dir, "x")
	if err != nil {
		t.Fatalf("reading %s: %v", dir, err)
	}
	return a.Digest
}

// TestPushTwiceUploadsNothing: a re-push of the same tree sends nothing,
// takes one host command and adds nothing.
func TestPushTwiceUploadsNothing(t *testing.T) {
	t.Parallel()
	h := sshd.Start(t, sshd.Options{})
	root := filepath.Join(h.Dir, "store")
	c := newCLI(t, h, root)
	src := sourceTree(t, "1")
	first := pushJSON(t, c, src, "--name", "app")
	if !first.Promoted || first.UploadedBytes == 0 {
		t.Fatalf("first push: %s", js(first))
	}
	again := pushJSON(t, c, src, "--name", "app")
	if !again.Present || again.UploadedBytes != 0 || again.Execs != 1 || again.ID != first.ID {
		t.Fatalf("re-push: %s", js(again))
	}
	entries, _ := os.ReadDir(filepath.Join(root, "runtimes"))
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if strings.Join(names, " ") != ".files .meta "+first.ID {
		t.Fatalf("the store holds %v", names)
	}
}

// TestPushActivateRollback: current follows activation and rollback, and
// the tree on the host is the source, byte for byte, modes and symlinks
// included.
func TestPushActivateRollback(t *testing.T) {
	t.Parallel()
	h := sshd.Start(t, sshd.Options{})
	root := filepath.Join(h.Dir, "store")
	c := newCLI(t, h, root)
	v1, v2 := sourceTree(t, "1"), sourceTree(t, "2")
	id1 := pushJSON(t, c, v1, "--name", "app", "--activate").ID
	p2 := pushJSON(t, c, v2, "--name", "app", "--activate")
	id2 := p2.ID
	if p2.Previous != id1 {
		t.Fatalf("activating v2: %s", js(p2))
	}
	if digestOf(t, filepath.Join(root, "current")+"/") != digestOf(t, v2) {
		t.Fatal("current is not v2, byte for byte")
	}
	sameTree(t, v2, filepath.Join(root, "runtimes", id2))
	if r := c.run("rollback"); r.code != 0 || !strings.Contains(r.stdout, "current is "+id1) {
		t.Fatalf("rollback: %s", r)
	}
	if digestOf(t, filepath.Join(root, "current")+"/") != digestOf(t, v1) {
		t.Fatal("after rollback current is not v1")
	}
	if r := c.run("activate", id2); r.code != 0 {
		t.Fatalf("activate: %s", r)
	}
	if got, _ := os.Readlink(filepath.Join(root, "current")); got != "runtimes/"+id2 {
		t.Fatalf("current -> %s", got)
	}
	if got, _ := os.Readlink(filepath.Join(root, "previous")); got != "runtimes/"+id1 {
		t.Fatalf("previous -> %s", got)
	}
	if r := c.run("activate", "app-000000000000"); r.code != 1 || !strings.Contains(r.stderr, "no such runtime") {
		t.Fatalf("activating an unknown id: %s", r)
	}
}

// sameTree compares two trees entry by entry, both ways: the same names,
// and for each the same type, mode, contents or link target.
func sameTree(t testing.TB, want, got string) {
	t.Helper()
	if w, g := treeNames(t, want), treeNames(t, got); w != g {
		t.Fatalf("the trees hold different names:\nsource: %s\nhost:   %s", w, g)
	}
	err := filepath.WalkDir(want, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(want, p)
		q := filepath.Join(got, rel)
		wi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		gi, err := os.Lstat(q)
		if err != nil {
			return err
		}
		if rel != "." && wi.Mode() != gi.Mode() {
			t.Errorf("%s: mode %v on the host, %v in the source", rel, gi.Mode(), wi.Mode())
		}
		switch {
		case wi.Mode()&fs.ModeSymlink != 0:
			wl, _ := os.Readlink(p)
			gl, _ := os.Readlink(q)
			if wl != gl {
				t.Errorf("%s: link %q on the host, %q in the source", rel, gl, wl)
			}
		case wi.Mode().IsRegular():
			wb, _ := os.ReadFile(p)
			gb, _ := os.ReadFile(q)
			if !bytes.Equal(wb, gb) {
				t.Errorf("%s: contents differ", rel)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("comparing trees: %v", err)
	}
}

// treeNames lists every path under dir, sorted, as one string.
func treeNames(t testing.TB, dir string) string {
	t.Helper()
	var names []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		names = append(names, rel)
		return nil
	})
	if err != nil || len(names) < 2 {
		t.Fatalf("listing %s: %v (%d names)", dir, err, len(names))
	}
	return strings.Join(names, " ")
}

// TestPushWaitsForTheLock: a push that finds the store locked waits and
// lands when it frees; 8 concurrent pushes of one id end with one runtime
// and no stage left.
func TestPushWaitsForTheLock(t *testing.T) {
	t.Parallel()
	h := sshd.Start(t, sshd.Options{})
	root := filepath.Join(h.Dir, "store")
	c := newCLI(t, h, root)
	hold := c.run("lock", "acquire")
	if hold.code != 0 {
		t.Fatal(hold)
	}
	src := sourceTree(t, "1")
	p := c.start("push", src, "--name", "app")
	waitFor(t, 30*time.Second, "push waits for the lock", func() bool {
		return strings.Contains(p.stderr(), "waiting for the store lock")
	})
	if r := c.run("lock", "release", "--token", strings.TrimSpace(hold.stdout)); r.code != 0 {
		t.Fatal(r)
	}
	if code := p.wait(t, 60*time.Second); code != 0 || !strings.Contains(p.stdout(), "promoted") {
		t.Fatalf("push after the release: exit %d\n%s%s", code, p.stdout(), p.stderr())
	}

	other := sourceTree(t, "2")
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if r := newCLI(t, h, root).run("push", other, "--name", "app"); r.code != 0 {
				t.Errorf("push %d: %s", i, r)
			}
		}()
	}
	wg.Wait()
	runtimes, stages := runtimesIn(t, root)
	if len(runtimes) != 2 || len(stages) != 0 {
		t.Fatalf("after 8 pushes of one id: runtimes %v, stages %v", runtimes, stages)
	}
}

// TestPushRefusesEscapingArchives: archives that would write outside the
// runtime are refused before anything reaches the host.
func TestPushRefusesEscapingArchives(t *testing.T) {
	t.Parallel()
	h := sshd.Start(t, sshd.Options{})
	for name, hdr := range map[string]*tar.Header{
		"dotdot":   {Name: "../escape", Typeflag: tar.TypeReg, Mode: 0o644},
		"absolute": {Name: "/tmp/escape", Typeflag: tar.TypeReg, Mode: 0o644},
		"symlink":  {Name: "link", Typeflag: tar.TypeSymlink, Linkname: "../../../etc", Mode: 0o777},
	} {
		root := filepath.Join(h.Dir, name)
		archive := filepath.Join(t.TempDir(), name+".tar")
		var buf bytes.Buffer
		tw := tar.NewWriter(&buf)
		tw.WriteHeader(&tar.Header{Name: "ok", Typeflag: tar.TypeReg, Mode: 0o644, Size: 2})
		tw.Write([]byte("ok"))
		tw.WriteHeader(hdr)
		tw.Close()
		os.WriteFile(archive, buf.Bytes(), 0o644)
		r := newCLI(t, h, root).run("push", archive)
		if r.code != 1 || !strings.Contains(r.stderr, "artifact refused") || !strings.Contains(r.stderr, "nothing was sent") {
			t.Fatalf("%s: %s", name, r)
		}
		if exists(root) {
			t.Fatalf("%s: something was written on the host", name)
		}
	}
}

// TestPushKilledMidUpload: Ctrl-C during the upload of 150 MB stops it and
// keeps the stage, which the next push of the runtime resumes. A client
// SIGKILLed while it uploads leaves no lock, a push of another runtime then
// succeeds, and gc sweeps the abandoned stage once it is old, never while
// fresh.
func TestPushKilledMidUpload(t *testing.T) {
	t.Parallel()
	h := sshd.Start(t, sshd.Options{})
	root := filepath.Join(h.Dir, "store")
	c := newCLI(t, h, root)
	src := randomTree(t, 150<<20)
	uploading := func() string {
		stage, _ := uploadedPast(t, root, 60<<20, nil)
		return stage
	}
	// Ctrl-C stops the upload and keeps its stage, marked cut.
	p := c.start("push", src, "--name", "big")
	stage := uploading()
	p.cmd.Process.Signal(syscall.SIGINT)
	if code := p.wait(t, 30*time.Second); code != 130 || !strings.Contains(p.stderr(), "resumes") {
		t.Fatalf("interrupted push: exit %d: %s", code, p.stderr())
	}
	if !exists(filepath.Join(stage, "cut")) {
		t.Fatalf("the stopped upload's stage is not kept, marked cut")
	}
	// The next push resumes it, from well past its start, and installs
	// the runtime byte for byte. Its lines say the offset, what is left to
	// send and what was sent, the numbers --json gives; the rate counts
	// only what this push sent.
	r := c.run("--json", "push", src, "--name", "big")
	if r.code != 0 {
		t.Fatalf("the resumed push: %s", r)
	}
	res := decodeOne[output.Push](t, "the resumed push", r.stdout)
	if res.Pushed == nil || !res.Promoted || res.ResumedAt < 20<<20 || res.UploadedBytes > 140<<20 {
		t.Fatalf("the resumed push: %s", r.stdout)
	}
	at, sent := res.ResumedAt, res.UploadedBytes
	for _, want := range []string{
		"hoist: " + h.Target() + ": resuming the upload at " + humanSize(at) + ": " + humanSize(sent) + " of the runtime's archive, " + humanSize(at+sent) + ", left to send\n",
		"hoist: " + h.Target() + ": uploaded " + humanSize(sent) + " in ",
	} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("the resumed push does not say %q:\n%s", want, r.stderr)
		}
	}
	m := regexp.MustCompile(`uploaded \S+ \S+ in (\S+) \(([0-9.]+) (B|KiB|MiB|GiB)/s\)`).FindStringSubmatch(r.stderr)
	if m == nil {
		t.Fatalf("no upload time and rate in:\n%s", r.stderr)
	}
	took, _ := time.ParseDuration(m[1])
	rate, _ := strconv.ParseFloat(m[2], 64)
	rate *= map[string]float64{"B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30}[m[3]]
	if want := float64(sent) / took.Seconds(); rate < want*0.95 || rate > want*1.05 {
		t.Errorf("the rate %s/s is not what this push sent over its time (%s in %s)", humanSize(int64(rate)), humanSize(sent), took)
	}
	if exists(stage) {
		t.Fatalf("the resumed stage is still there")
	}
	sameFile(t, filepath.Join(src, "blob"), filepath.Join(root, "runtimes", res.ID, "blob"))

	// SIGKILL: nothing marks the stage; a push of another runtime goes on.
	src = randomTree(t, 150<<20)
	p = c.start("push", src, "--name", "big")
	stage = uploading()
	p.cmd.Process.Signal(syscall.SIGKILL)
	p.wait(t, 10*time.Second)
	if exists(lockPath(root)) {
		t.Fatal("a lock is held after the killed upload")
	}
	if r := c.run("push", sourceTree(t, "other"), "--name", "other"); r.code != 0 {
		t.Fatalf("the next push: %s", r)
	}
	if r := c.run("gc"); r.code != 0 || !exists(stage) {
		t.Fatalf("gc swept a fresh stage: %s", r)
	}
	old := time.Now().Add(-21 * time.Minute)
	if err := filepath.WalkDir(stage, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Chtimes(p, old, old)
	}); err != nil {
		t.Fatalf("backdating the stage: %v", err)
	}
	if r := c.run("gc"); r.code != 0 || exists(stage) || !strings.Contains(r.stdout, filepath.Base(stage)) {
		t.Fatalf("gc kept an abandoned stage: %s", r)
	}
}

// TestGCKeepsWhatIsNeeded: gc keeps current, previous, pinned, in-use (a
// process runs from it, or works in it) and the N newest; deletes the rest;
// skips a held store touching nothing; and is inert on a missing store.
func TestGCKeepsWhatIsNeeded(t *testing.T) {
	t.Parallel()
	h := sshd.Start(t, sshd.Options{})
	root := filepath.Join(h.Dir, "store")
	c := newCLI(t, h, root)
	if r := c.run("gc"); r.code != 0 || !strings.Contains(r.stdout, "nothing to collect") || exists(root) {
		t.Fatalf("gc on a missing store: %s (root created: %v)", r, exists(root))
	}
	ids := map[string]string{}
	for _, v := range []string{"old1", "old2", "pinned", "exe", "cwd", "newest", "previous", "current"} {
		src := sourceTree(t, v)
		if v == "exe" {
			sleep, _ := exec.LookPath("sleep")
			data, _ := os.ReadFile(sleep)
			os.WriteFile(filepath.Join(src, "bin", "sleeper"), data, 0o755)
		}
		args := []string{src, "--name", "app"}
		if v == "previous" || v == "current" {
			args = append(args, "--activate")
		}
		ids[v] = pushJSON(t, c, args...).ID
		time.Sleep(1100 * time.Millisecond) // distinct promotion times
	}
	if r := c.run("pin", ids["pinned"]); r.code != 0 {
		t.Fatal(r)
	}
	rt := func(v string) string { return filepath.Join(root, "runtimes", ids[v]) }
	// Started on the host as its login, like the services that use a
	// runtime; the harness stops them with the host.
	h.SSH(t, "exec /bin/sh -c 'nohup "+filepath.Join(rt("exe"), "bin", "sleeper")+" 300 >/dev/null 2>&1 &'")
	h.SSH(t, "exec /bin/sh -c 'cd "+rt("cwd")+" && nohup sleep 301 >/dev/null 2>&1 &'")

	hold := c.run("lock", "acquire")
	before := c.run("list").stdout
	r := c.run("gc", "--keep", "1")
	if r.code != 0 || !strings.Contains(r.stdout, "skipped: store busy") || c.run("list").stdout != before {
		t.Fatalf("gc on a held store: %s", r)
	}
	c.run("lock", "release", "--token", strings.TrimSpace(hold.stdout))

	r = c.run("gc", "--keep", "1", "--dry-run")
	if r.code != 0 || !strings.Contains(r.stdout, "would delete") || !exists(rt("old1")) {
		t.Fatalf("dry run: %s", r)
	}
	r = c.run("--json", "gc", "--keep", "1")
	if r.code != 0 {
		t.Fatalf("gc: %s", r)
	}
	res := decodeOne[output.GC](t, "gc", r.stdout)
	why := map[string]string{}
	for _, k := range res.Kept {
		why[k.ID] = k.Why
	}
	for v, want := range map[string]string{"current": "current", "previous": "previous", "pinned": "pinned", "exe": "in-use", "cwd": "in-use", "newest": "newest"} {
		if why[ids[v]] != want || !exists(rt(v)) {
			t.Errorf("%s: kept as %q (exists %v), want %q", v, why[ids[v]], exists(rt(v)), want)
		}
	}
	if strings.Join(res.Deleted, " ") != ids["old2"]+" "+ids["old1"] && strings.Join(res.Deleted, " ") != ids["old1"]+" "+ids["old2"] {
		t.Errorf("deleted %v, want the two old ones", res.Deleted)
	}
	if exists(rt("old1")) || exists(rt("old2")) {
		t.Error("a deleted runtime is still there")
	}
	// A deleted runtime's file list goes with it; a kept one's stays.
	files := func(v string) string { return filepath.Join(root, "runtimes", ".files", ids[v]) }
	if exists(files("old1")) || exists(files("old2")) || !exists(files("newest")) {
		t.Errorf("file lists after gc: old1 %v, old2 %v, newest %v; want only newest's", exists(files("old1")), exists(files("old2")), exists(files("newest")))
	}
	leftovers, _ := filepath.Glob(filepath.Join(root, "runtimes", ".trash-*"))
	if len(leftovers) > 0 {
		t.Errorf("gc left %v", leftovers)
	}
}

// TestFleetPushOneHostDown: a push to three hosts, one of them stopped: two
// succeed, one reports unreachable, and the exit status is non-zero.
func TestFleetPushOneHostDown(t *testing.T) {
	t.Parallel()
	// As root each host logs in as its own user, so "~/" is a different
	// store on each; otherwise they share one, and the second finds the
	// runtime present.
	opts := []sshd.Options{{}, {}, {}}
	if isRoot() {
		opts = []sshd.Options{{Shell: "bash"}, {Shell: "dash"}, {Shell: "zsh"}}
	}
	var hosts []*sshd.Host
	for _, o := range opts {
		hosts = append(hosts, sshd.Start(t, o))
	}
	hosts[2].Stop()
	kh := filepath.Join(t.TempDir(), "known_hosts")
	var lines, targets []string
	flags := []string{}
	for _, h := range hosts {
		b, _ := os.ReadFile(h.KnownHosts)
		lines = append(lines, string(b))
		targets = append(targets, h.Target())
		flags = append(flags, "-i", h.KeyFile)
	}
	os.WriteFile(kh, []byte(strings.Join(lines, "")), 0o600)
	c := newCLI(t, hosts[0], "")
	root := "~/fleet-" + strings.ReplaceAll(t.Name(), "/", "-")
	c.flags = append([]string{"-H", strings.Join(targets, ","), "--known-hosts", kh, "--root", root}, flags...)
	// -q: stderr holds the errors only, not the progress of the live hosts.
	r := c.run("-q", "push", sourceTree(t, "1"), "--name", "app", "--activate")
	if r.code != 1 {
		t.Fatalf("want exit 1 (one host down):\n%s", r)
	}
	done := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if len(done) != 2 {
		t.Fatalf("want one line for each live host:\n%s", r)
	}
	for _, h := range hosts[:2] {
		if !strings.HasPrefix(done[0], h.Target()+": ") && !strings.HasPrefix(done[1], h.Target()+": ") {
			t.Fatalf("no result line for %s:\n%s", h.Target(), r)
		}
	}
	for _, h := range hosts[:2] {
		t.Cleanup(func() {
			dir := strings.TrimPrefix(root, "~/")
			h.SSH(t, "exec /bin/sh -c 'chmod -R u+w "+dir+"; rm -rf "+dir+"'")
		})
	}
	if strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 || !strings.Contains(r.stderr, hosts[2].Target()) || !strings.Contains(r.stderr, "cannot connect") {
		t.Fatalf("want one line naming the stopped host:\n%s", r)
	}
}

// TestStoreOnBusybox: the whole store cycle on a host whose /bin/sh and
// userland (mv -T, tar, sha256sum, find, ps, readlink) are busybox.
func TestStoreOnBusybox(t *testing.T) {
	t.Parallel()
	h := sshd.Start(t, sshd.Options{Shell: "sh", Busybox: true})
	root := filepath.Join(h.Dir, "store")
	c := newCLI(t, h, root)
	v1, v2 := sourceTree(t, "1"), sourceTree(t, "2")
	id1 := pushJSON(t, c, v1, "--name", "app", "--activate").ID
	if again := pushJSON(t, c, v1, "--name", "app", "--activate"); !again.Present || again.Execs != 1 {
		t.Fatalf("re-push: %s", js(again))
	}
	id2 := pushJSON(t, c, v2, "--name", "app", "--activate").ID
	sameTree(t, v2, filepath.Join(root, "runtimes", id2))
	if r := c.run("rollback"); r.code != 0 || !strings.Contains(r.stdout, "current is "+id1) {
		t.Fatalf("rollback: %s", r)
	}
	v3 := sourceTree(t, "3")
	id3 := pushJSON(t, c, v3, "--name", "app").ID
	r := c.run("--json", "gc", "--keep", "0")
	if r.code != 0 || !slices.Equal(decodeOne[output.GC](t, "gc", r.stdout).Deleted, []string{id3}) || exists(filepath.Join(root, "runtimes", id3)) {
		t.Fatalf("gc on busybox: %s", r)
	}
}

// TestPushWithoutSHA256Tool: a host with none of the tools that verify an
// upload (openssl, sha256sum, shasum) refuses the push with a clear error
// before anything is uploaded, and keeps nothing on the host.
func TestPushWithoutSHA256Tool(t *testing.T) {
	if !isRoot() {
		t.Skip("needs root, to hide the host's tools (a mount namespace): run make test as root (CI does)")
	}
	t.Parallel()
	var hide []string
	for _, tool := range []string{"openssl", "sha256sum", "shasum"} {
		if p, err := exec.LookPath(tool); err == nil {
			hide = append(hide, p)
		}
	}
	h := sshd.Start(t, sshd.Options{Hide: hide})
	root := filepath.Join(h.Dir, "store")
	src := t.TempDir()
	if err := os.WriteFile(filepath.Join(src, "f"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := newCLI(t, h, root).run("push", src)
	if r.code != 1 || !strings.Contains(r.stderr, "could not verify the upload") || !strings.Contains(r.stderr, "install openssl or coreutils") ||
		strings.Contains(r.stderr, "uploading") {
		t.Fatalf("push to a host without a SHA-256 tool: %s", r)
	}
	if runtimes, stages := runtimesIn(t, root); len(runtimes) != 0 || len(stages) != 0 {
		t.Errorf("left runtimes %v and stages %v", runtimes, stages)
	}
}

// TestPushOneSessionAtATime: a host whose sshd allows one session per
// connection (MaxSessions 1) takes fresh pushes and re-pushes: the stream
// a push opens while its first command runs is refused there, never the
// command.
func TestPushOneSessionAtATime(t *testing.T) {
	t.Parallel()
	h := sshd.Start(t, sshd.Options{MaxSessions: 1})
	root := filepath.Join(h.Dir, "store")
	c := newCLI(t, h, root)
	for i := range 4 {
		src := t.TempDir()
		if err := os.WriteFile(filepath.Join(src, "f"), []byte(strings.Repeat("x", i+1)), 0o644); err != nil {
			t.Fatal(err)
		}
		for _, what := range []string{"fresh push", "re-push"} {
			if r := c.run("push", src, "--activate"); r.code != 0 {
				t.Fatalf("%s %d to a host with MaxSessions 1: %s", what, i, r)
			}
		}
	}
	if runtimes, stages := runtimesIn(t, root); len(runtimes) != 4 || len(stages) != 0 {
		t.Errorf("runtimes %v, stages %v; want 4 and none", runtimes, stages)
	}
}

// uploadedPast waits until the one stage of the store under root holds an
// archive of more than n bytes, and returns the stage and that size. A push
// that ends first (push, when given) fails the test.
func uploadedPast(t *testing.T, root string, n int64, push *started) (stage string, size int64) {
	t.Helper()
	waitFor(t, 60*time.Second, fmt.Sprintf("the upload past %d bytes", n), func() bool {
		m, _ := filepath.Glob(filepath.Join(root, "runtimes", ".stage-*", "artifact.tar"))
		if len(m) == 1 {
			if fi, err := os.Stat(m[0]); err == nil && fi.Size() > n {
				stage, size = filepath.Dir(m[0]), fi.Size()
				return true
			}
		}
		if push != nil {
			select {
			case <-push.done:
				t.Fatalf("the push ended first: %d %s", push.code, push.stderr())
			default:
			}
		}
		return false
	})
	return stage, size
}

// humanSize is a size as hoist prints it.
func humanSize(n int64) string {
	for _, u := range []struct {
		unit string
		size int64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if n >= u.size {
			return strconv.FormatFloat(float64(n)/float64(u.size), 'f', 1, 64) + " " + u.unit
		}
	}
	return strconv.FormatInt(n, 10) + " B"
}

// TestBusyPromotionRemovesItsStage: a push whose promotion unpacked a tree
// with a read-only directory and then found the lock held (--wait 0)
// removes its whole stage, the directory it unpacked into with it: the
// login is not root, and rm -rf alone cannot empty a read-only directory.
func TestBusyPromotionRemovesItsStage(t *testing.T) {
	t.Parallel()
	h := sshd.Start(t, sshd.Options{})
	root := filepath.Join(h.Dir, "store")
	c, other := newCLI(t, h, root), newCLI(t, h, root)
	pushJSON(t, c, sourceTree(t, "1"), "--name", "app")
	tok := acquireHold(t, other, "-m", "busy")
	if r := c.run("push", sourceTree(t, "2"), "--name", "app", "--wait", "0"); r.code != 75 {
		t.Fatalf("a push while the lock is held, --wait 0: %s", r)
	}
	if _, stages := runtimesIn(t, root); len(stages) != 0 {
		t.Errorf("left stages %v", stages)
	}
	if r := other.run("lock", "release", "--token", tok); r.code != 0 {
		t.Fatalf("release: %s", r)
	}
}
