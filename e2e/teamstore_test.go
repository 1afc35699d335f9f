package e2e

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/hoistdev/hoist/cmd/hoist/output"
	"github.com/hoistdev/hoist/e2e/sshd"
	"github.com/hoistdev/hoist/store"
	"github.com/hoistdev/hoist/transport"
)

// beforeUpload runs a hook ahead of each upload on the transport.
type beforeUpload struct {
	transport.Transport
	hook func()
}

func (b beforeUpload) Upload(ctx context.Context, path string, r io.Reader, o transport.UploadOptions) (int64, error) {
	b.hook()
	return b.Transport.(transport.Uploader).Upload(ctx, path, r, o)
}

// TestTeamMemberCannotRedirectAPush: in a store whose root and runtimes/
// its group may write, a member renames a push's stage and puts something of
// their own at its name, before the upload or before the promotion, over
// real sshd and OpenSSH's sftp-server (which follows every link). The push
// fails, and the login's files the planted names lead to are unchanged:
// a file a link names, and a private directory a link to it names, holding
// what the stage held; the stage moved away and what was planted stay. (The member is played by the login itself, the
// worst case: what is planted is the login's own.)
func TestTeamMemberCannotRedirectAPush(t *testing.T) {
	t.Parallel()
	h := sshd.Start(t, sshd.Options{})
	home := filepath.Join(h.Dir, "home")
	hostSh(t, h, "mkdir -m 700 "+shq(home))
	const victim = "the login's own file\n"
	// swap moves the stage away and plants, in the store as the member:
	// "link" is a directory whose archive links to home/victim-N; "private"
	// a link to home/private-N, a directory holding copies of the stage's
	// files (all but its key, which the member cannot read).
	swap := func(t *testing.T, rt, kind, n string) {
		t.Helper()
		v, p := shq(filepath.Join(home, "victim-"+n)), shq(filepath.Join(home, "private-"+n))
		script := "cd " + shq(rt) + " && set -- .stage-* && [ $# = 1 ] && mv \"$1\" moved-" + n + " && "
		switch kind {
		case "link":
			script += "printf %s " + shq(victim) + " >" + v + " && mkdir -m 700 \"$1\" && ln -s " + v + " \"$1/artifact.tar\""
		case "private":
			script += "mkdir -m 700 " + p + " && for f in artifact.tar resume; do if [ -f moved-" + n + "/$f ]; then cp moved-" + n + "/$f " + p + "/; fi; done && ln -s " + p + " \"$1\""
		}
		hostSh(t, h, script)
	}
	// listing is what home holds, every file with its digest and date,
	// and what is in the store: the stage moved away and what was planted
	// must stay (never written, never removed). Planted before the
	// upload, the push's own command is in its stage by its working
	// directory, wherever it was moved, and gives it back there (the
	// login's own directory: what is in it is not listed).
	listing := func(t *testing.T, rt string) string {
		t.Helper()
		return hostSh(t, h, "cd "+shq(home)+" && find . -type f -exec ls -ln --time-style=+%s.%N {} + | awk '{ print $1, $6, $7 }' && find . -type f -exec sha256sum {} + | sort && "+
			"cd "+shq(rt)+" && find . ! -name '.store-lock*' ! -path './moved-[ab]/*' -exec ls -ldn {} + | awk '{ print $1, $3, $5, $NF }'")
	}
	cases := []struct {
		kind, when string
	}{{"link", "upload"}, {"private", "upload"}, {"link", "promote"}, {"private", "promote"}}
	for i, c := range cases {
		n := string(rune('a' + i))
		// A store of its own: what a case plants is left there.
		root := filepath.Join(h.Dir, "team-"+n)
		rt := filepath.Join(root, "runtimes")
		hostSh(t, h, "mkdir -p "+shq(rt)+" && chmod 775 "+shq(root)+" "+shq(rt))
		art, err := store.Open(sourceTree(t, "team-"+n), "team"+n)
		if err != nil {
			t.Fatal(err)
		}
		tr := beforeUpload{Transport: dial(t, sshConfig(h)), hook: func() {}}
		opts := store.PushOptions{}
		var before string
		if c.when == "upload" {
			tr.hook = func() { swap(t, rt, c.kind, n); before = listing(t, rt) }
		} else {
			// The promotion after the upload enters the stage then; the
			// one begun with the upload enters it before (lock's
			// onepass tests plant while it streams).
			opts.TwoPass = true
			opts.Uploaded = func(int64) { swap(t, rt, c.kind, n); before = listing(t, rt) }
		}
		_, err = storeOn(tr, root).Push(ctxT(t), art, opts)
		var he *store.HostError
		switch {
		case c.when == "upload" && !errors.Is(err, store.ErrStageReplaced):
			t.Errorf("%s planted before the upload: %v; want %v", c.kind, err, store.ErrStageReplaced)
		case c.when == "promote" && (!errors.As(err, &he) || he.Code != "stage"):
			t.Errorf("%s planted before the promotion: %v; want the host to refuse the stage", c.kind, err)
		}
		if after := listing(t, rt); after != before {
			t.Errorf("%s planted before the %s: the login's files changed:\n%s\nwant\n%s", c.kind, c.when, after, before)
		}
		if out := hostSh(t, h, "ls -a "+shq(rt)); strings.Contains(out, art.ID()) {
			t.Errorf("%s planted before the %s: %s was installed from it:\n%s", c.kind, c.when, art.ID(), out)
		}
	}
}

// TestTeamStoreOfTheDocumentedLayout: two logins of one group share a store
// made as docs/protocol.md says: the root, runtimes/, .meta/, .pins/ and
// .files/ owned by root, group the team's, mode 2775, and runs/ mode 3775. A new
// directory in a setgid directory inherits the bit, stages included; each
// login pushes, activates and lists there, the other's runtimes too, with
// the artifact's modes (the stage does not pass the bit on), and no stage
// is left behind nor any warning said. A check that wants a new
// stage to be exactly 0700 refuses every push here, blaming someone who
// renames entries, and leaves the empty stage.
func TestTeamStoreOfTheDocumentedLayout(t *testing.T) {
	sshd.RequireRoot(t)
	t.Parallel()
	a := sshd.Start(t, sshd.Options{Shell: "bash"})
	b := sshd.Start(t, sshd.Options{Shell: "dash"})
	gid := sshd.Group(t, "hoist-team", a, b)
	root := filepath.Join(a.Dir, "team") // a.Dir is open to b's login
	for _, d := range []struct {
		path string
		mode uint32
	}{{root, 0o2775}, {root + "/runtimes", 0o2775}, {root + "/runtimes/.meta", 0o2775},
		{root + "/runtimes/.pins", 0o2775}, {root + "/runtimes/.files", 0o2775}, {root + "/runs", 0o3775}} {
		if err := os.Mkdir(d.path, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(d.path, 0, gid); err != nil {
			t.Fatal(err)
		}
		if err := syscall.Chmod(d.path, d.mode); err != nil {
			t.Fatal(err)
		}
	}
	ca, cb := newCLI(t, a, root), newCLI(t, b, root)
	ids := map[string]string{}
	for i, c := range []*cli{ca, cb, ca, cb} {
		who := []string{"a", "b"}[i%2]
		r := c.run("--json", "push", "--activate", "--name", "app-"+who, sourceTree(t, who+strconv.Itoa(i)))
		if r.code != 0 || strings.Contains(r.stderr, "WARNING") || strings.Contains(r.stderr, "renames") {
			t.Fatalf("push %d by login %s: %s", i, who, r)
		}
		id := decodeOne[output.Push](t, fmt.Sprintf("push %d", i), r.stdout).ID
		ids[id] = who
		if cur, err := os.Readlink(filepath.Join(root, "current")); err != nil || cur != "runtimes/"+id {
			t.Fatalf("after push %d by %s: current is %q (%v), want runtimes/%s", i, who, cur, err, id)
		}
		// The runtime's modes are the artifact's: not the setgid bit the
		// store passes on.
		if fi, err := os.Lstat(filepath.Join(root, "runtimes", id, "lib")); err != nil || fi.Mode() != os.ModeDir|0o750 {
			t.Errorf("after push %d by %s: %s/lib is %v (%v), want drwxr-x--- as in the artifact", i, who, id, fi.Mode(), err)
		}
		if left, _ := filepath.Glob(filepath.Join(root, "runtimes", ".stage-*")); len(left) > 0 {
			t.Fatalf("after push %d by %s: stages left: %q", i, who, left)
		}
	}
	for _, c := range []*cli{ca, cb} {
		r := c.run("list")
		for id := range ids {
			if r.code != 0 || !strings.Contains(r.stdout, id) {
				t.Errorf("list: want %s in it:\n%s", id, r)
			}
		}
	}
	// Each activates a runtime the other pushed.
	for id, who := range ids {
		c := ca
		if who == "a" {
			c = cb
		}
		if r := c.run("activate", id); r.code != 0 {
			t.Errorf("activate %s (pushed by %s) by the other login: %s", id, who, r)
		}
	}
}
