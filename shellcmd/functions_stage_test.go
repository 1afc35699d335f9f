package shellcmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestShNewStage: h_newstage enters a stage just made and gives it the
// push's key only when it is the entry of that name in the store, the
// login's, 0700 and empty; whatever else is there (had the name been
// swapped) is never written.
func TestShNewStage(t *testing.T) {
	const key = "the-push-key"
	cases := []struct {
		name string
		make func(t *testing.T, stage, victim string)
		ok   bool
	}{
		{"made by the command", func(t *testing.T, stage, _ string) { mkdirMode(t, stage, 0o700) }, true},
		// What mkdir makes in a store a team shares (setgid, 2775).
		{"made in a setgid store", func(t *testing.T, stage, _ string) { mkdirMode(t, stage, 0o700|os.ModeSetgid) }, true},
		{"setuid", func(t *testing.T, stage, _ string) { mkdirMode(t, stage, 0o700|os.ModeSetuid) }, false},
		{"sticky", func(t *testing.T, stage, _ string) { mkdirMode(t, stage, 0o700|os.ModeSticky) }, false},
		{"setgid, open to its group", func(t *testing.T, stage, _ string) { mkdirMode(t, stage, 0o750|os.ModeSetgid) }, false},
		{"group-writable", func(t *testing.T, stage, _ string) { mkdirMode(t, stage, 0o770) }, false},
		{"open to all", func(t *testing.T, stage, _ string) { mkdirMode(t, stage, 0o755) }, false},
		{"holding a file", func(t *testing.T, stage, _ string) {
			mkdirMode(t, stage, 0o700)
			fnWrite(t, stage+"/artifact.tar", "")
		}, false},
		{"holding a dot file", func(t *testing.T, stage, _ string) {
			mkdirMode(t, stage, 0o700)
			fnWrite(t, stage+"/.x", "")
		}, false},
		{"holding a key that links out", func(t *testing.T, stage, victim string) {
			mkdirMode(t, stage, 0o700)
			if err := os.Symlink(victim, stage+"/key"); err != nil {
				t.Fatal(err)
			}
		}, false},
		// Empty, like the stage just made: only where it is tells.
		{"a symlink to an empty private directory", func(t *testing.T, stage, victim string) {
			priv := filepath.Join(filepath.Dir(victim), "private")
			mkdirMode(t, priv, 0o700)
			if err := os.Symlink(priv, stage); err != nil {
				t.Fatal(err)
			}
		}, false},
		{"a symlink to a private directory", func(t *testing.T, stage, victim string) {
			priv := filepath.Join(filepath.Dir(victim), "private")
			mkdirMode(t, priv, 0o700)
			fnWrite(t, priv+"/key", "the login's own\n")
			if err := os.Symlink(priv, stage); err != nil {
				t.Fatal(err)
			}
		}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fnShells(t, func(t *testing.T, sh []string, root string) {
				store, _, _ := fnPaths(root)
				fnMkdir(t, store)
				stage := store + "/.stage-" + fnThird
				victim := filepath.Join(t.TempDir(), "victim")
				fnWrite(t, victim, "the login's file\n")
				c.make(t, stage, victim)
				r := fnRun{fns: []string{"h_newstage"}, vars: map[string]string{"h_stage": stage, "hp_skey": key},
					call: "h_newstage"}.do(t, sh, root)
				if got := r.rc == 0; got != c.ok {
					t.Fatalf("%s: h_newstage = %d, want success %v", sh[0], r.rc, c.ok)
				}
				if b, _ := os.ReadFile(victim); string(b) != "the login's file\n" {
					t.Errorf("%s: the file a link led to was written: %q", sh[0], b)
				}
				if fi, err := os.Lstat(stage); c.ok && (err != nil || fi.Mode() != os.ModeDir|0o700) {
					t.Errorf("%s: the stage entered is %v (%v), want drwx------: what a team's store passes on is cleared", sh[0], fi.Mode(), err)
				}
				b, err := os.ReadFile(stage + "/key")
				switch {
				case c.ok && string(b) != key+"\n":
					t.Errorf("%s: the stage's key is %q (%v)", sh[0], b, err)
				case !c.ok && c.name == "a symlink to a private directory" && string(b) != "the login's own\n":
					t.Errorf("%s: the private directory's key was overwritten: %q", sh[0], b)
				case !c.ok && c.name == "a symlink to an empty private directory" && err == nil:
					t.Errorf("%s: a key was written in the private directory", sh[0])
				}
			})
		})
	}
}

// TestShMkStage: a stage the push just made and then refused (h_mkstage)
// is removed when its name still holds it, the login's and empty, and only
// then: an empty directory of someone else's put at the name is theirs;
// the refusal says what was found and that it was removed or left. In a
// setgid store (a team's) the stage is accepted, and private.
func TestShMkStage(t *testing.T) {
	cases := []struct {
		name string
		// mkdir is the double for the stage's mkdir ($1 its path): what
		// the file system or someone else makes of it.
		mkdir  string
		setgid bool
		ok     bool
		left   []string // in the store
		said   string   // in the refusal
	}{
		{name: "made as asked", ok: true, left: []string{".stage-" + fnThird + "/", ".stage-" + fnThird + "/key"}},
		{name: "in a setgid store", setgid: true, ok: true, left: []string{".stage-" + fnThird + "/", ".stage-" + fnThird + "/key"}},
		{name: "a file system that makes it open to all", mkdir: `command mkdir "$1" && chmod 755 "$1"`,
			said: "was removed"},
		// Not to be told from the next case: left for gc.
		{name: "a file system that gives it another owner", mkdir: `command mkdir "$1" && chown 1:1 "$1"`,
			left: []string{".stage-" + fnThird + "/"}, said: "was left as it is"},
		{name: "renamed, and an empty directory of someone's put there", mkdir: `command mkdir "$1" && mv "$1" "$1.x" && command mkdir -m 700 "$1" && chown 1:1 "$1"`,
			left: []string{".stage-" + fnThird + "/", ".stage-" + fnThird + ".x/"}, said: "was left as it is"},
		{name: "renamed, and a directory of someone's put there", mkdir: `command mkdir "$1" && mv "$1" "$1.x" && command mkdir -m 755 "$1" && : >"$1/theirs"`,
			left: []string{".stage-" + fnThird + "/", ".stage-" + fnThird + "/theirs", ".stage-" + fnThird + ".x/"}, said: "was left as it is"},
		{name: "renamed, and a symlink to an empty private directory put there", mkdir: `command mkdir "$1" && mv "$1" "$1.x" && command mkdir -m 700 "$h_root/private" && ln -s "$h_root/private" "$1"`,
			left: []string{".stage-" + fnThird + "@", ".stage-" + fnThird + ".x/"}, said: "was left as it is"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fnShells(t, func(t *testing.T, sh []string, root string) {
				store, _, _ := fnPaths(root)
				fnMkdir(t, store)
				if c.setgid {
					if err := os.Chmod(store, 0o775|os.ModeSetgid); err != nil {
						t.Fatal(err)
					}
				}
				defs := ""
				if c.mkdir != "" {
					defs = "mkdir() {\n" + c.mkdir + "\n}"
				}
				r := fnRun{fns: []string{"h_mkstage"}, vars: map[string]string{"h_stage": store + "/.stage-" + fnThird,
					"hp_stok": fnThird, "hp_skey": "k"}, defs: defs, call: "h_mkstage"}.do(t, sh, root)
				if got := r.rc == 0; got != c.ok {
					t.Fatalf("%s: h_mkstage = %d (said %q), want success %v", sh[0], r.rc, r.said, c.ok)
				}
				if !c.ok {
					if len(r.said) != 1 || !strings.HasPrefix(r.said[0], "ERROR stage "+StoreDir+"/.stage-"+fnThird+", just made by this push, was not ") ||
						!strings.Contains(r.said[0], c.said) || strings.Contains(r.said[0], "renames entries") {
						t.Errorf("%s: said %q, want one ERROR stage that says it %s", sh[0], r.said, c.said)
					}
				}
				fnWantTree(t, store, c.left...)
			})
		})
	}
}

func mkdirMode(t *testing.T, dir string, mode os.FileMode) {
	t.Helper()
	if err := os.Mkdir(dir, mode); err != nil {
		t.Fatal(err)
	}
	// Whatever the umask.
	if err := os.Chmod(dir, mode); err != nil {
		t.Fatal(err)
	}
}

// TestShCollidesWhileGCDeletes: the runtime at the push's id is deleted by
// gc between h_collides' look at the path and its read of the mark (the
// tree moved aside, then the mark removed): that is no foreign path. One
// that is still there without a mark is.
func TestShCollidesWhileGCDeletes(t *testing.T) {
	const id = "app-0123456789ab"
	for _, c := range []struct {
		name    string
		deletes bool // the double deletes the runtime at the first read of the mark
		rc      int
		said    []string
	}{
		{"deleted between the looks", true, 1, nil},
		{"there, without a mark", false, 0, []string{"ERROR foreign " + StoreDir + "/" + id}},
	} {
		t.Run(c.name, func(t *testing.T) {
			fnShells(t, func(t *testing.T, sh []string, root string) {
				store, _, _ := fnPaths(root)
				fnMkdir(t, store+"/"+id)
				del := ""
				if c.deletes {
					del = `if [ "$h_t_n" = 1 ]; then rm -rf "$h_store/$1"; fi`
				}
				// h_meta's double: no mark (the delete has removed it, or
				// there never was one).
				defs := "h_t_n=0\nh_meta() { h_t_n=$((h_t_n + 1)); " + del + "\n return 1; }"
				r := fnRun{fns: []string{"h_collides"}, vars: map[string]string{"hp_id": id}, defs: defs, call: "h_collides"}.do(t, sh, root)
				if r.rc != c.rc || strings.Join(r.said, "\n") != strings.Join(c.said, "\n") {
					t.Fatalf("%s: h_collides = %d, said %q; want %d, %q", sh[0], r.rc, r.said, c.rc, c.said)
				}
			})
		})
	}
}

// TestShClaim: h_claim takes the stage's resume mark when the stage holds
// this push's key; it takes over a mark another push claimed for an
// instant (or died holding) when the key is this push's, read again once
// it holds that mark (a takeover between the looks: the mark goes back);
// and it touches nothing when the key is another's.
func TestShClaim(t *testing.T) {
	const key, tok = "the-push-key", "t1"
	// h_ourkey as if the key changed after its first look.
	const takenOver = `h_looks=0
h_ourkey() {
	h_looks=$((h_looks + 1))
	[ "$h_looks" -eq 1 ] && return 0
	h_k=
	{ IFS= read -r h_k <key; } 2>/dev/null
	[ "$h_k" = "$hp_skey" ]
}`
	for _, c := range []struct {
		name  string
		key   string
		files []string // besides key
		rc    int
		left  []string
		defs  string
	}{
		{"its own mark", key, []string{"resume"}, 0, []string{"claimed-" + tok, "key"}, ""},
		{"a mark another push holds", key, []string{"claimed-t0"}, 0, []string{"claimed-" + tok, "key"}, ""},
		{"no mark", key, nil, 1, []string{"key"}, ""},
		{"another push's stage", "other", []string{"resume"}, 1, []string{"key", "resume"}, ""},
		// The first look saw this push's key; a takeover wrote its own,
		// its mark and claimed it before this push's loop took it.
		{"a takeover between the looks", "other", []string{"claimed-t0"}, 1, []string{"claimed-t0", "key"}, takenOver},
	} {
		t.Run(c.name, func(t *testing.T) {
			fnShells(t, func(t *testing.T, sh []string, root string) {
				store, _, _ := fnPaths(root)
				stage := store + "/.stage-x"
				fnWrite(t, stage+"/key", c.key+"\n")
				for _, f := range c.files {
					fnWrite(t, stage+"/"+f, "x\n")
				}
				r := fnRun{fns: []string{"h_claim"}, vars: map[string]string{"hp_skey": key, "hp_stok": tok}, defs: c.defs,
					call: "cd \"$h_store/.stage-x\" && h_claim"}.do(t, sh, root)
				if r.rc != c.rc {
					t.Errorf("%s: h_claim = %d, want %d", sh[0], r.rc, c.rc)
				}
				fnWantTree(t, stage, c.left...)
			})
		})
	}
}

// TestShPromoteFromItsStage: h_promote, under the lock, promotes only from
// the stage at its name: a promotion whose stage gc moved aside to sweep
// (it stalled past the stale period) says ERROR stage and moves nothing
// into the store, whatever is left of its tree.
func TestShPromoteFromItsStage(t *testing.T) {
	const tok, id = "t1", "app-0123456789ab"
	for _, c := range []struct {
		name, dir, said string
	}{
		{"at its name", ".stage-" + tok, "PROMOTED " + id},
		{"moved aside by gc", ".trash-gc-stage-" + tok, "ERROR stage"},
	} {
		t.Run(c.name, func(t *testing.T) {
			fnShells(t, func(t *testing.T, sh []string, root string) {
				store, _, _ := fnPaths(root)
				stage := store + "/" + c.dir
				fnWrite(t, stage+"/unpack-"+tok+"/tree/bin/app", "x\n")
				r := fnRun{fns: []string{"h_promote"}, vars: map[string]string{"hp_stok": tok, "hp_id": id,
					"hp_digest": "sha256:00", "hp_name": "app", "hp_size": "2", "h_ud": "unpack-" + tok},
					defs: "h_fence() { :; }", call: "cd \"$h_store/" + c.dir + "\" && h_promote"}.do(t, sh, root)
				if len(r.said) != 1 || !strings.HasPrefix(r.said[0], c.said) {
					t.Fatalf("%s: rc %d, said %q, want %q\n%s", sh[0], r.rc, r.said, c.said, r.stderr)
				}
				_, err := os.Stat(store + "/" + id + "/bin/app")
				if promoted := err == nil; promoted != (c.said != "ERROR stage") {
					t.Errorf("%s: runtime in the store: %v, want %v", sh[0], promoted, !promoted)
				}
			})
		})
	}
}
