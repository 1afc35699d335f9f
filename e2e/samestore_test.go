package e2e

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/hoistdev/hoist/cmd/hoist/output"
	"github.com/hoistdev/hoist/e2e/sshd"
)

// TestTwoAliasesOfOneStoreAreWorkedOnOnce: two aliases of one sshd, in one
// command, reach one store (the same machine, boot and login, and root):
// it is worked on once, and one line names both targets. rollback goes
// back once, not twice (which would end where it started); lock acquire
// holds once, instead of the second waiting behind the first's hold until
// --wait ends (75). The same target given twice is worked on once and said
// so; two logins with their own ~/ roots are two stores, both worked on;
// doctor, which looks at the connection too, checks every target.
func TestTwoAliasesOfOneStoreAreWorkedOnOnce(t *testing.T) {
	t.Parallel()
	h := sshd.Start(t, sshd.Options{})
	cfg := writeConfig(t, hostBlock("web-a", h), hostBlock("web-b", h))
	root := filepath.Join(h.Dir, "store")
	c := sshConfigCLI(t, cfg, root)
	idA := pushJSON(t, c, "-H", "web-a", "--activate", "--name", "app", sourceTree(t, "a")).ID
	pushJSON(t, c, "-H", "web-a", "--activate", "--name", "app", sourceTree(t, "b"))
	current := func() string {
		t.Helper()
		cur, err := os.Readlink(filepath.Join(root, "current"))
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimPrefix(cur, "runtimes/")
	}
	once := func(t *testing.T, r run, first, second string) {
		t.Helper()
		want := "hoist: " + second + ": the same store as " + first
		if n := strings.Count(r.stderr, "the same store as"); n != 1 || !strings.Contains(r.stderr, want) {
			t.Errorf("want one line %q on stderr:\n%s", want, r)
		}
	}

	r := c.run("-H", "web-a,web-b", "rollback")
	first, _, _ := strings.Cut(r.stdout, ":")
	if r.code != 0 || current() != idA || strings.Count(r.stdout, "\n") != 1 || !strings.Contains(r.stdout, ": current is "+idA) {
		t.Errorf("rollback on both aliases: want exit 0, current %s (rolled back once), one result line; current %s:\n%s", idA, current(), r)
	}
	once(t, r, first, map[string]string{"web-a": "web-b", "web-b": "web-a"}[first])
	if hist := c.run("-H", "web-a", "history"); len(regexp.MustCompile(`(?m)^\S+ \S+\s+rollback\s`).FindAllString(hist.stdout, -1)) != 1 {
		t.Errorf("history: want one rollback:\n%s", hist)
	}

	r = c.run("-H", "web-b,web-a", "lock", "acquire", "--wait", "3s")
	tokens := strings.Fields(r.stdout)
	if r.code != 0 || len(tokens) != 2 {
		t.Fatalf("lock acquire on both aliases: want exit 0 and one hold:\n%s", r)
	}
	// The first to reach the store works on it: a slow host holds up no
	// other.
	other := map[string]string{"web-a": "web-b", "web-b": "web-a"}[tokens[0]]
	once(t, r, tokens[0], other)
	if rel := c.run("-H", "web-b", "lock", "release", "--token", tokens[1]); rel.code != 0 {
		t.Fatalf("release: %s", rel)
	}

	r = c.run("--json", "-H", "web-a,web-b", "lock", "status")
	objs := decodeLines[output.LockStatus](t, "--json lock status", r.stdout)
	if r.code != 0 || len(objs) != 2 {
		t.Fatalf("--json lock status: want two objects:\n%s", r)
	}
	if objs[0].SameStoreAs != "" {
		objs[0], objs[1] = objs[1], objs[0]
	}
	// The other target's object is its Result alone: no status of its own.
	if objs[0].Locked || !objs[0].Store || objs[1].SameStoreAs != objs[0].Host || !objs[1].OK || objs[1].Exit != 0 ||
		objs[1].Store || objs[1].Held != nil {
		t.Errorf("--json lock status: want one status, and the other target's object naming it as the same store:\n%s", r)
	}

	// doctor looks at each target as reached: both.
	if r := c.run("-H", "web-a,web-b", "doctor"); strings.Contains(r.stderr, "same store") ||
		!strings.Contains(r.stdout, "web-a:") || !strings.Contains(r.stdout, "web-b:") {
		t.Errorf("doctor on both aliases: want a checklist for each:\n%s", r)
	}

	r = c.run("-H", "web-a,web-a", "lock", "status")
	if r.code != 0 || strings.Count(r.stdout, "\n") != 1 || !strings.Contains(r.stderr, "hoist: web-a: given more than once") {
		t.Errorf("the same target twice: want one result and a line saying so:\n%s", r)
	}

	t.Run("two logins, each its own store", func(t *testing.T) {
		sshd.RequireRoot(t)
		d := sshd.Start(t, sshd.Options{Shell: "dash"})
		cfg := writeConfig(t, hostBlock("web-a", h), hostBlock("web-d", d))
		rel := "samestore-" + filepath.Base(h.Dir)
		for _, home := range []string{h.Home, d.Home} {
			t.Cleanup(func() { os.RemoveAll(filepath.Join(home, rel)) })
		}
		c := sshConfigCLI(t, cfg, "~/"+rel)
		r := c.run("-H", "web-a,web-d", "lock", "status")
		if r.code != 0 || strings.Count(r.stdout, "\n") != 2 || strings.Contains(r.stderr, "same store") {
			t.Errorf("two logins, ~/ roots: want both worked on:\n%s", r)
		}
	})
}

// TestTwoStoresAtOnePathAreTwoStores: two hosts on one machine, boot and
// login, each with a tmpfs of its own mounted at the same path (two
// containers with a volume each), in one command with the store's root
// there, not made yet: the same path, and two stores. Both are worked on,
// and each holds the runtime. Two aliases of one host whose PID namespace
// cannot be read (its /proc is not its namespace's) may be one store, but
// that cannot be proven: both are worked on, and -v says why. Two aliases
// of one host with a root not made yet are one store (its parent is
// there): worked on once.
func TestTwoStoresAtOnePathAreTwoStores(t *testing.T) {
	sshd.RequireRoot(t)
	t.Parallel()
	mnt, err := os.MkdirTemp("/tmp", "hoist-two-stores-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(mnt) })
	if err := os.Chmod(mnt, 0o755); err != nil {
		t.Fatal(err)
	}
	a := sshd.Start(t, sshd.Options{Tmpfs: []string{mnt}})
	b := sshd.Start(t, sshd.Options{Tmpfs: []string{mnt}})
	cfg := writeConfig(t, hostBlock("box-a", a), hostBlock("box-b", b))
	c := sshConfigCLI(t, cfg, filepath.Join(mnt, "store"))
	r := c.run("-H", "box-a,box-b", "push", "--activate", "--name", "app", sourceTree(t, "a"))
	if r.code != 0 || strings.Contains(r.stderr, "same store") || strings.Count(r.stdout, "\n") != 2 {
		t.Errorf("push to two stores at one path: want exit 0 and a result from each:\n%s", r)
	}
	for _, box := range []string{"box-a", "box-b"} {
		if l := c.run("-H", box, "list"); l.code != 0 || !strings.Contains(l.stdout, "app-") {
			t.Errorf("%s holds no runtime after the push:\n%s", box, l)
		}
	}

	t.Run("a PID namespace that cannot be read", func(t *testing.T) {
		h := foreignProcHost(t)
		cfg := writeConfig(t, hostBlock("web-a", h), hostBlock("web-b", h))
		r := sshConfigCLI(t, cfg, filepath.Join(h.Dir, "store")).run("-v", "-H", "web-a,web-b", "lock", "status")
		if r.code != 0 || strings.Contains(r.stderr, "same store") || strings.Count(r.stdout, "\n") != 2 ||
			strings.Count(r.stderr, "worked on as a store of its own: the PID namespace is unknown") != 2 {
			t.Errorf("two aliases of a host without a readable PID namespace: want both worked on, -v saying why:\n%s", r)
		}
	})

	t.Run("a root not made yet, two aliases", func(t *testing.T) {
		h := sshd.Start(t, sshd.Options{})
		cfg := writeConfig(t, hostBlock("web-a", h), hostBlock("web-b", h))
		root := filepath.Join(h.Dir, "fresh")
		r := sshConfigCLI(t, cfg, root).run("-H", "web-a,web-b", "lock", "acquire", "--wait", "2s")
		if r.code != 0 || strings.Count(r.stderr, "the same store as") != 1 || len(strings.Fields(r.stdout)) != 2 {
			t.Errorf("lock acquire on two aliases of a root not made yet: want one hold, and a line saying so:\n%s", r)
		}
	})
}
