package lock_test

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/hoistdev/hoist/lock"
	"github.com/hoistdev/hoist/store"
	"github.com/hoistdev/hoist/transport"
)

// In a store a team shares, runtimes/ is writable by the group and not
// sticky: a member may rename a push's stage between two of its commands and
// put something of their own at its name. These tests do that, as the login
// itself (the worst case: what the member plants looks like the login's
// own), and check that the push refuses the stage and writes through nothing
// planted there.

// victims is a directory outside the store, as the login's home would be,
// whose files a planted stage links to.
type victims struct {
	dir  string
	want []string // its listing and contents, to compare after
}

func newVictims(t *testing.T) *victims {
	t.Helper()
	v := &victims{dir: t.TempDir()}
	for _, f := range []string{"bashrc", "key", "sum", "pool.map", "resume.t", "cut"} {
		if err := os.WriteFile(filepath.Join(v.dir, f), []byte("the login's "+f+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(v.dir, "private"), 0o700); err != nil {
		t.Fatal(err)
	}
	v.want = v.list(t)
	return v
}

func (v *victims) list(t *testing.T) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(v.dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(v.dir, p)
		if d.Type().IsRegular() {
			b, _ := os.ReadFile(p)
			rel += "=" + string(b)
		}
		out = append(out, rel)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func (v *victims) untouched(t *testing.T) {
	t.Helper()
	if got := v.list(t); !slices.Equal(got, v.want) {
		t.Fatalf("the login's files outside the store changed:\n  %q\nwant\n  %q", got, v.want)
	}
}

// plant fills dir (a directory put at a stage's name) as a stage looks to
// a command that trusts names: copies of the real stage's archive and
// resume mark (from real, when there is one), and links to the victims
// under every other name a stage command writes.
func (v *victims) plant(t *testing.T, dir, real string) {
	t.Helper()
	for _, f := range []string{"artifact.tar", "resume"} {
		b, err := os.ReadFile(filepath.Join(real, f))
		if err == nil {
			err = os.WriteFile(filepath.Join(dir, f), b, 0o600)
		}
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
	}
	for name, to := range map[string]string{"key": "key", "sum": "sum", "pool.map": "pool.map",
		"resume.t": "resume.t", "cut": "cut", "tree": "private", "pool": "private"} {
		if err := os.Symlink(filepath.Join(v.dir, to), filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
}

// stageOf is the one stage in the store.
func (e *stepEnv) stageOf() string {
	e.t.Helper()
	m, _ := filepath.Glob(filepath.Join(e.root, "runtimes", ".stage-*"))
	if len(m) != 1 {
		e.t.Fatalf("want one stage, found %v", m)
	}
	return m[0]
}

// wantStageRefused fails unless err is the host refusing the stage.
func wantStageRefused(t *testing.T, err error) {
	t.Helper()
	var he *store.HostError
	if !errors.As(err, &he) || he.Code != "stage" {
		t.Fatalf("the push: %v; want the host to refuse the stage (stage)", err)
	}
}

// TestStageReplacedBeforePromotion: between the upload and the promotion,
// the stage's name is given to something else. The promotion refuses it,
// writes nothing through it, and installs nothing. The promotion after the
// upload (TwoPass) enters the stage then; the one begun with the upload
// enters it by the same checks (h_pclaim), before the first byte is read.
func TestStageReplacedBeforePromotion(t *testing.T) {
	cases := []struct {
		name string
		root bool
		swap func(t *testing.T, stage string, v *victims)
	}{
		// A directory of the login's, 0700, with the stage's archive and
		// mark, links to the login's files, and no key.
		{"a directory with links", false, func(t *testing.T, stage string, v *victims) {
			away := moveAway(t, stage)
			if err := os.Mkdir(stage, 0o700); err != nil {
				t.Fatal(err)
			}
			v.plant(t, stage, away)
		}},
		// A symlink to a private directory of the login's that holds the
		// stage's files and a key, another push's: only the stage holds
		// this push's.
		{"a symlink to a private directory", false, func(t *testing.T, stage string, v *victims) {
			away := moveAway(t, stage)
			priv := filepath.Join(v.dir, "private")
			for _, f := range []string{"artifact.tar", "resume", "key"} {
				b, err := os.ReadFile(filepath.Join(away, f))
				if f == "key" {
					b, err = []byte("another push's key\n"), nil
				}
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(priv, f), b, 0o600); err != nil {
					t.Fatal(err)
				}
			}
			v.want = v.list(t)
			if err := os.Symlink(priv, stage); err != nil {
				t.Fatal(err)
			}
		}},
		// The stage itself, key and all, but writable by its group: a
		// member could swap any name in it between two looks.
		{"the stage, group-writable", false, func(t *testing.T, stage string, v *victims) {
			if err := os.Chmod(stage, 0o770); err != nil {
				t.Fatal(err)
			}
		}},
		// The stage, key and all, owned by someone else.
		{"the stage, another user's", true, func(t *testing.T, stage string, v *victims) {
			if err := os.Chown(stage, 65534, 65534); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			onSwapCase(t, c.root, func(t *testing.T, e *stepEnv, art *store.Artifact, v *victims) {
				_, err := store.New(e.lock()).Push(e.ctx(), art, store.PushOptions{TwoPass: true, Uploaded: func(int64) {
					c.swap(t, e.stageOf(), v)
				}})
				wantStageRefused(t, err)
				v.untouched(t)
				if _, err := os.Lstat(filepath.Join(e.root, "runtimes", art.ID())); !os.IsNotExist(err) {
					t.Fatalf("a runtime was installed from a replaced stage (%v)", err)
				}
			})
		})
	}
}

// onSwapCase runs test under each step shell, with an artifact of 1 MiB and
// the login's files a planted stage may lead to; a case that plants
// something of another user's needs root.
func onSwapCase(t *testing.T, root bool, test func(t *testing.T, e *stepEnv, art *store.Artifact, v *victims)) {
	t.Helper()
	if root && os.Geteuid() != 0 {
		t.Skip("needs root, to give a planted file or the stage to another user; CI runs as root")
	}
	onStepShells(t, func(t *testing.T, e *stepEnv) { test(t, e, e.bigArtifact(1<<20), newVictims(t)) })
}

// moveAway renames stage out of the way, as a member would, and returns
// where it went.
func moveAway(t *testing.T, stage string) string {
	t.Helper()
	away := filepath.Join(filepath.Dir(stage), "moved-away")
	if err := os.Rename(stage, away); err != nil {
		t.Fatal(err)
	}
	return away
}

// TestStageReplacedWhileTakenOver: a push that took over a cut upload's
// stage (its resume mark renamed) stops before it moves the stage to its own
// name, and the stage's name is given to a directory with links to the
// login's files. The push moves that directory, finds no claim of its own
// in it, refuses it and writes through nothing.
func TestStageReplacedWhileTakenOver(t *testing.T) {
	onStepShells(t, func(t *testing.T, e *stepEnv) {
		art := e.bigArtifact(8 << 20)
		e.cutStage(art)
		cut := e.stageOf()
		v := newVictims(t)
		a := e.lock("resume.taken")
		goOn := e.stopped(a, "resume.taken", func() error {
			_, err := store.New(a).Push(e.ctx(), art, store.PushOptions{})
			return err
		})
		away := moveAway(t, cut)
		if err := os.Mkdir(cut, 0o700); err != nil {
			t.Fatal(err)
		}
		v.plant(t, cut, away)
		wantStageRefused(t, goOn())
		v.untouched(t)
	})
}

// uploadHook runs before, with the path, ahead of each upload.
type uploadHook struct {
	transport.Transport
	before func(path string)
}

func (u uploadHook) Upload(ctx context.Context, path string, r io.Reader, o transport.UploadOptions) (int64, error) {
	u.before(path)
	return u.Transport.(transport.Uploader).Upload(ctx, path, r, o)
}

// TestStageReplacedBeforeTheUpload: in a store others may rename things in
// (its root and runtimes/ writable by the group), the stage's name is given
// to something else between the push's first command and its upload, which
// opens the archive by that name. The upload writes nothing through it (the
// file it opened is not the login's plain file of the date the host gave
// the archive, or the open fails), and nothing at the name or moved away is
// removed. Without a swap, the same store takes the push.
func TestStageReplacedBeforeTheUpload(t *testing.T) {
	cases := []struct {
		name string
		root bool
		swap func(t *testing.T, e *stepEnv, stage string, v *victims)
	}{
		{"none", false, nil},
		{"nothing", false, func(t *testing.T, e *stepEnv, stage string, v *victims) { moveAway(t, stage) }},
		{"a directory with a link", false, func(t *testing.T, e *stepEnv, stage string, v *victims) {
			moveAway(t, stage)
			if err := os.Mkdir(stage, 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(filepath.Join(v.dir, "bashrc"), filepath.Join(stage, "artifact.tar")); err != nil {
				t.Fatal(err)
			}
		}},
		{"a symlink to a private directory", false, func(t *testing.T, e *stepEnv, stage string, v *victims) {
			away := moveAway(t, stage)
			priv := filepath.Join(v.dir, "private")
			b, err := os.ReadFile(filepath.Join(away, "artifact.tar"))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(priv, "artifact.tar"), b, 0o600); err != nil {
				t.Fatal(err)
			}
			v.want = v.list(t)
			if err := os.Symlink(priv, stage); err != nil {
				t.Fatal(err)
			}
		}},
		// Nothing in it is the stage's, and a removal of the stage by its
		// name would take it.
		{"a runtime of the login's", false, func(t *testing.T, e *stepEnv, stage string, v *victims) {
			other := e.bigArtifact(4 << 10)
			if _, err := store.New(e.lock()).Push(e.ctx(), other, store.PushOptions{}); err != nil {
				t.Fatal(err)
			}
			moveAway(t, stage)
			if err := os.Rename(filepath.Join(e.root, "runtimes", other.ID()), stage); err != nil {
				t.Fatal(err)
			}
		}},
		// A member's own plain file with the date the host gave the
		// archive (touch's argv shows it): not the login's.
		{"another user's file of that date", true, func(t *testing.T, e *stepEnv, stage string, v *victims) {
			away := moveAway(t, stage)
			fi, err := os.Stat(filepath.Join(away, "artifact.tar"))
			if err != nil {
				t.Fatal(err)
			}
			f := filepath.Join(stage, "artifact.tar")
			err = os.Mkdir(stage, 0o777)
			if err == nil {
				err = os.WriteFile(f, []byte("the member's file\n"), 0o666)
			}
			for _, p := range []string{stage, f} {
				if err == nil {
					err = os.Chown(p, 65534, 65534)
				}
			}
			if err == nil {
				err = os.Chtimes(f, fi.ModTime(), fi.ModTime())
			}
			if err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			onSwapCase(t, c.root, func(t *testing.T, e *stepEnv, art *store.Artifact, v *victims) {
				for _, d := range []string{e.root, filepath.Join(e.root, "runtimes")} {
					if err := os.Mkdir(d, 0o775); err != nil {
						t.Fatal(err)
					}
					if err := os.Chmod(d, 0o775); err != nil {
						t.Fatal(err)
					}
				}
				var stage string
				var planted []string
				tr := uploadHook{Transport: e.dial(), before: func(string) {
					if c.swap != nil {
						stage = e.stageOf()
						c.swap(t, e, stage, v)
						planted = tree(t, stage)
					}
				}}
				l := lock.New(tr, lock.Root{Path: e.root})
				r, err := store.New(l).Push(e.ctx(), art, store.PushOptions{})
				if c.swap == nil {
					if err != nil || !r.Promoted {
						t.Fatalf("a push into a shared store: %v %+v", err, r)
					}
					e.checkRuntime(art)
					return
				}
				// A link or nothing at the archive's own name is not
				// even opened here (the local transport opens with
				// O_NOFOLLOW); through sftp-server a link is, and the
				// check refuses it (TestTeamMemberCannotRedirectAPush).
				if err == nil || (c.name != "a directory with a link" && c.name != "nothing" && c.name != "a runtime of the login's" && !errors.Is(err, store.ErrStageReplaced)) {
					t.Fatalf("the push: %v; want %v", err, store.ErrStageReplaced)
				}
				v.untouched(t)
				if _, err := os.Lstat(filepath.Join(e.root, "runtimes", "moved-away", "artifact.tar")); err != nil {
					t.Fatalf("the stage moved away: %v", err)
				}
				if got := tree(t, stage); !slices.Equal(got, planted) {
					t.Fatalf("what was put at the stage's name changed:\n  %q\nwant\n  %q", got, planted)
				}
			})
		})
	}
}

// tree lists p (not followed when a link) and what it holds, with the
// contents of files: what a test expects to find unchanged.
func tree(t *testing.T, p string) []string {
	t.Helper()
	fi, err := os.Lstat(p)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	if !fi.IsDir() {
		return []string{fi.Mode().Type().String()}
	}
	var out []string
	err = filepath.WalkDir(p, func(q string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(p, q)
		if d.Type().IsRegular() {
			b, _ := os.ReadFile(q)
			rel += "=" + string(b)
		}
		out = append(out, rel+" "+d.Type().String())
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
