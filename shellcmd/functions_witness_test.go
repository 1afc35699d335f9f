package shellcmd

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The witness of a rollout in batches' plan (sh/witness.sh).

const fnRid = "20261201T000000Z-00000f"

// fnWitnessVars are the parameters of a list that ends a rollout's staging.
func fnWitnessVars(ref string) map[string]string {
	return map[string]string{"hp_hid": fnRid, "hp_hplan": " hosts=w1,w2 opts=--canary%3D0", "hp_id": ref}
}

// TestShWitnessWrittenOnce: h_witness writes the witness whole, private,
// with the runtime the REF resolves to as the client resolves it (an id,
// the newest of a name, the one id a prefix names), and says WITNESSED;
// it writes nothing on a host already on the runtime, for a REF that
// names nothing or two ids, over a witness that is there (written once),
// nor through a link or into a directory planted at its name.
func TestShWitnessWrittenOnce(t *testing.T) {
	fnShells(t, func(t *testing.T, sh []string, root string) {
		store, _, _ := fnPaths(root)
		w := filepath.Join(store, ".rollouts", ".plan-"+fnRid)
		// The list, newest first: a-3 (app), a-2 (app), b-1 (other).
		list := `h_wpick a-3 app; h_wpick a-2 app; h_wpick b-1 other; h_witness `
		for _, c := range []struct{ ref, cur, want string }{
			{"app", "b-1", "a-3"}, {"a-2", "b-1", "a-2"}, {"b", "a-3", "b-1"}, {"other", "a-3", "b-1"},
			{"app", "a-3", ""}, {"a-", "b-1", ""}, {"nothing", "b-1", ""},
		} {
			os.RemoveAll(filepath.Join(store, ".rollouts"))
			fnMkdir(t, store)
			r := fnRun{fns: []string{"h_wpick", "h_witness"}, vars: fnWitnessVars(c.ref), call: "h_wx= h_wn= h_wp= h_wc=0; " + list + c.cur}.do(t, sh, root)
			b, err := os.ReadFile(w)
			if c.want == "" {
				if err == nil || len(r.said) != 0 {
					t.Errorf("%s: REF %s on %s: wrote %q, said %q; want no witness", sh[0], c.ref, c.cur, b, r.said)
				}
				continue
			}
			line := "hoist-witness/1 id=" + fnRid + " to=" + c.want + " hosts=w1,w2 opts=--canary%3D0\n"
			if r.rc != 0 || string(b) != line || strings.Join(r.said, ",") != "WITNESSED "+fnRid+" "+c.want {
				t.Errorf("%s: REF %s: wrote %q (%v), said %q; want %q", sh[0], c.ref, b, err, r.said, line)
			}
			if fi, err := os.Stat(w); err != nil || fi.Mode().Perm() != 0o600 {
				t.Errorf("%s: the witness is not private: %v %v", sh[0], fi.Mode(), err)
			}
			left, _ := filepath.Glob(filepath.Join(store, ".rollouts", "*.t"))
			if len(left) != 0 {
				t.Errorf("%s: left %q", sh[0], left)
			}
		}
		victim := filepath.Join(root, "victim")
		for _, plant := range []func(){
			func() { fnWrite(t, w, "hoist-witness/1 id="+fnRid+" to=x-1 hosts=w1 opts=--y\n") },
			func() { fnWrite(t, victim, "mine\n"); os.Symlink(victim, w) },
			func() { fnMkdir(t, w) },
		} {
			os.RemoveAll(filepath.Join(store, ".rollouts"))
			os.Remove(victim)
			fnMkdir(t, filepath.Join(store, ".rollouts"))
			plant()
			before := fnPlain(t, root)
			r := fnRun{fns: []string{"h_wpick", "h_witness"}, vars: fnWitnessVars("app"), call: "h_wx= h_wn= h_wp= h_wc=0; " + list + "b-1"}.do(t, sh, root)
			if after := fnPlain(t, root); len(r.said) != 0 || after != before {
				t.Errorf("%s: said %q over what was there:\nbefore:\n%s\nafter:\n%s", sh[0], r.said, before, after)
			}
		}
	})
}

// fnPlain is every path under root with its kind and contents.
func fnPlain(t *testing.T, root string) string {
	t.Helper()
	var b strings.Builder
	filepath.Walk(root, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		b.WriteString(p + " " + fi.Mode().String())
		if fi.Mode().IsRegular() {
			c, _ := os.ReadFile(p)
			b.WriteString(" " + string(c))
		} else if fi.Mode()&os.ModeSymlink != 0 {
			v, _ := os.Readlink(p)
			b.WriteString(" -> " + v)
		}
		b.WriteString("\n")
		return nil
	})
	return b.String()
}

// TestShResumeSaysTheWitness: h_rwitness says the witness as it is
// (altered or not: the client compares it), "-" for each field when it is
// not as hoist writes it (a link, a directory, a file others may write,
// not one line of its form), and nothing when there is none or it is
// another login's.
func TestShResumeSaysTheWitness(t *testing.T) {
	fnShells(t, func(t *testing.T, sh []string, root string) {
		store, _, _ := fnPaths(root)
		w := filepath.Join(store, ".rollouts", ".plan-"+fnRid)
		good := "hoist-witness/1 id=" + fnRid + " to=a-2 hosts=w1,w2 opts=--canary%3D0\n"
		none := "WITNESS " + fnRid + " - - -"
		for _, c := range []struct {
			plant func()
			want  string
		}{
			{func() {}, ""},
			{func() { fnWrite(t, w, good); os.Chmod(w, 0o600) }, "WITNESS " + fnRid + " a-2 w1,w2 --canary%3D0"},
			{func() { fnWrite(t, w, strings.Replace(good, "%3D0", "%3D1", 1)) }, "WITNESS " + fnRid + " a-2 w1,w2 --canary%3D1"},
			{func() { fnWrite(t, w, good); os.Chmod(w, 0o666) }, none},
			{func() { fnWrite(t, w, good+good) }, none},
			{func() { fnWrite(t, w, strings.Replace(good, fnRid, "20261201T000000Z-000001", 1)) }, none},
			{func() { fnWrite(t, w, good+"x") }, none},
			{func() { fnWrite(t, filepath.Join(root, "v"), good); os.Symlink(filepath.Join(root, "v"), w) }, none},
			{func() { fnMkdir(t, w) }, none},
			{func() { fnWrite(t, w, good); os.Chown(w, 65534, 65534) }, "theirs"},
		} {
			if c.want == "theirs" {
				if os.Geteuid() != 0 {
					continue
				}
				c.want = ""
			}
			os.RemoveAll(filepath.Join(store, ".rollouts"))
			fnMkdir(t, filepath.Join(store, ".rollouts"))
			c.plant()
			r := fnRun{fns: []string{"h_rwitness"}, vars: map[string]string{"hp_hid": fnRid}, call: "h_rwitness"}.do(t, sh, root)
			if strings.Join(r.said, "\n") != c.want {
				t.Errorf("%s: said %q, want %q", sh[0], r.said, c.want)
			}
		}
	})
}

// TestShWitnessIsNoRecord: a witness is not an unfinished record: the
// local rule settles nothing and refuses nothing for it, gc keeps nothing
// for it (h_journaled), and the latest rollout recorded is not its. gc
// sweeps one nothing wrote to for --keep-runs, and a half-written one
// after the stale period; it keeps a fresh one, and one that is a link
// (following nothing), a directory or another login's.
func TestShWitnessIsNoRecord(t *testing.T) {
	fnShells(t, func(t *testing.T, sh []string, root string) {
		store, _, _ := fnPaths(root)
		rs := filepath.Join(store, ".rollouts")
		fnMkdir(t, filepath.Join(store, "a-1"))
		fnMkdir(t, filepath.Join(store, "a-2"))
		os.Symlink(StoreDir+"/a-1", filepath.Join(root, "current"))
		old, fresh := "20261101T000000Z-", "20261201T000000Z-"
		wit := func(id string) string {
			p := filepath.Join(rs, ".plan-"+id)
			fnWrite(t, p, "hoist-witness/1 id="+id+" from=a-1 to=a-2 hosts=w1 opts=--canary%3D0\n")
			os.Chmod(p, 0o600)
			return p
		}
		wit(old + "000001")
		wit(fresh + "000002")
		fnWrite(t, filepath.Join(rs, ".plan-"+old+"000003.77.t"), "hoist-witness/1")
		victim := filepath.Join(root, "victim")
		fnWrite(t, victim, "mine\n")
		os.Symlink(victim, filepath.Join(rs, ".plan-"+old+"000004"))
		fnMkdir(t, filepath.Join(rs, ".plan-"+old+"000005"))
		theirs := ""
		if os.Geteuid() == 0 {
			theirs = wit(old + "000006")
			os.Chown(theirs, 65534, 65534)
		}
		for _, p := range []string{rs + "/.plan-" + old + "*", victim} {
			paths, _ := filepath.Glob(p)
			for _, q := range paths {
				if out, err := exec.Command("touch", "-h", "-d", "10 days ago", q).CombinedOutput(); err != nil {
					t.Fatalf("touch %s: %v %s", q, err, out)
				}
			}
		}
		r := fnRun{fns: []string{"h_settle", "h_journaled", "h_rlatest"}, defs: "h_fence() { :; }",
			call: `h_settle || return 1; if h_journaled a-2; then h_say JOURNALED; fi; h_say LATEST "$(h_rlatest)"`}.do(t, sh, root)
		if r.rc != 0 || strings.Join(r.said, ",") != "LATEST " {
			t.Errorf("%s: a witness taken for a record: rc %d, said %q", sh[0], r.rc, r.said)
		}
		r = fnRun{fns: []string{"h_gc_records"}, defs: "h_owned() { :; }", call: "h_gc_records"}.do(t, sh, root)
		want := "SWEEP runtimes/.rollouts/.plan-" + old + "000001 done,SWEEP runtimes/.rollouts/.plan-" + old + "000003.77.t done"
		if r.rc != 0 || strings.Join(r.said, ",") != want {
			t.Errorf("%s: gc said %q, want %q", sh[0], r.said, want)
		}
		for _, p := range []string{rs + "/.plan-" + fresh + "000002", rs + "/.plan-" + old + "000004", rs + "/.plan-" + old + "000005", victim, theirs} {
			if _, err := os.Lstat(p); p != "" && err != nil {
				t.Errorf("%s: %s was removed", sh[0], p)
			}
		}
	})
}

// TestShWitnessLatest: h_wlatest says the greatest id of a witness that
// is a regular file (RWITNESS), for a resume without ID; a link, a
// directory, a half-written one or a name not shaped like an id is not
// counted, and nothing is said when none is there.
func TestShWitnessLatest(t *testing.T) {
	fnShells(t, func(t *testing.T, sh []string, root string) {
		store, _, _ := fnPaths(root)
		dir := filepath.Join(store, ".rollouts")
		os.RemoveAll(dir)
		fnMkdir(t, dir)
		r := fnRun{fns: []string{"h_isrid", "h_wlatest"}, call: "h_wlatest"}.do(t, sh, root)
		if r.rc != 0 || len(r.said) != 0 {
			t.Errorf("%s: no witness: said %q (%d)", sh[0], r.said, r.rc)
		}
		fnWrite(t, filepath.Join(dir, ".plan-20261201T000000Z-00000a"), "w\n")
		fnWrite(t, filepath.Join(dir, ".plan-20261202T000000Z-00000b"), "w\n")
		fnWrite(t, filepath.Join(dir, ".plan-20261209T000000Z-00000c.1.t"), "w\n")
		fnWrite(t, filepath.Join(dir, ".plan-29991209T000000Z-bad"), "w\n")
		fnMkdir(t, filepath.Join(dir, ".plan-20261205T000000Z-00000d"))
		os.Symlink(filepath.Join(dir, ".plan-20261201T000000Z-00000a"), filepath.Join(dir, ".plan-20261206T000000Z-00000e"))
		r = fnRun{fns: []string{"h_isrid", "h_wlatest"}, call: "h_wlatest"}.do(t, sh, root)
		if got := strings.Join(r.said, ","); r.rc != 0 || got != "RWITNESS 20261202T000000Z-00000b" {
			t.Errorf("%s: said %q (%d), want the latest regular file's id", sh[0], got, r.rc)
		}
	})
}
