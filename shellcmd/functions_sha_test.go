package shellcmd

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestShSHA256Tools: h_sha256 picks the fastest tool the host has (openssl,
// then sha256sum, GNU or busybox) and gives the same digest with each; a
// host with none of them has no tool (h_shatool fails, push says nosha256);
// one that is there but fails is passed over. Both ways: probed first
// (h_shatool), and tried on the file itself (h_sha256 alone, as a
// promotion does).
// PATH holds only the tool under test (and printf), as links in a
// directory of its own.
func TestShSHA256Tools(t *testing.T) {
	data := []byte("hoist verifies every upload\n")
	sum := sha256.Sum256(data)
	want := hex.EncodeToString(sum[:])
	busybox, _ := exec.LookPath("busybox")
	tools := map[string]map[string]string{} // case -> link name -> target
	for _, c := range []struct{ name, link, target string }{
		{"openssl", "openssl", "openssl"},
		{"coreutils sha256sum", "sha256sum", "sha256sum"},
		{"busybox sha256sum", "sha256sum", busybox},
		{"none", "", ""},
	} {
		m := map[string]string{}
		if c.link != "" {
			target, err := exec.LookPath(c.target)
			if err != nil {
				t.Fatalf("%s is not installed: run make test, which installs the tools hoist is tested with", c.target)
			}
			m[c.link] = target
		}
		tools[c.name] = m
	}
	// An openssl that is there but does not work (a missing library) is
	// passed over for the next tool.
	broken, err := exec.LookPath("false")
	if err != nil {
		t.Fatal(err)
	}
	tools["broken openssl"] = map[string]string{"openssl": broken, "sha256sum": tools["busybox sha256sum"]["sha256sum"]}
	for name, links := range tools {
		t.Run(name, func(t *testing.T) {
			fnShells(t, func(t *testing.T, sh []string, root string) {
				dir := filepath.Join(t.TempDir(), "bin")
				if err := os.MkdirAll(dir, 0o755); err != nil {
					t.Fatal(err)
				}
				// printf is not a builtin everywhere (mksh).
				printf, err := exec.LookPath("printf")
				if err != nil {
					t.Fatal(err)
				}
				if err := os.Symlink(printf, filepath.Join(dir, "printf")); err != nil {
					t.Fatal(err)
				}
				for link, target := range links {
					if err := os.Symlink(target, filepath.Join(dir, link)); err != nil {
						t.Fatal(err)
					}
				}
				file := filepath.Join(t.TempDir(), "artifact")
				if err := os.WriteFile(file, data, 0o600); err != nil {
					t.Fatal(err)
				}
				r := fnRun{fns: []string{"h_shatool", "h_sha256"}, vars: map[string]string{"h_f": file},
					defs: "PATH=" + dir,
					call: fnCall(`h_direct=
h_sha256 "$h_f" >"$h_f.sum"
h_direct=$?:$h_shacmd
{ IFS= read -r h_got2 <"$h_f.sum"; } 2>/dev/null
h_shacmd=
h_shatool && h_got=$(h_sha256 "$h_f")`, "h_shacmd", "h_got", "h_direct", "h_got2")}.do(t, sh, root)
				v, _ := fnShown(r)
				if name == "none" {
					if r.rc == 0 {
						t.Errorf("%s: h_shatool found %q on a PATH without any tool", sh[0], v["h_shacmd"])
					}
					if v["h_direct"] != "3:" {
						t.Errorf("%s: h_sha256 alone on a PATH without any tool: status:tool %q, want 3:", sh[0], v["h_direct"])
					}
					return
				}
				if v["h_direct"] != "0:"+v["h_shacmd"] || v["h_got2"] != want {
					t.Errorf("%s: with %s, h_sha256 alone: status:tool %q, digest %q; want 0:%s, %q", sh[0], name, v["h_direct"], v["h_got2"], v["h_shacmd"], want)
				}
				if r.rc != 0 || v["h_got"] != want {
					t.Errorf("%s: with %s, h_shatool %d, tool %q, digest %q, want %q", sh[0], name, r.rc, v["h_shacmd"], v["h_got"], want)
				}
				if name == "broken openssl" && v["h_shacmd"] != "sha256sum" {
					t.Errorf("%s: openssl fails, but h_sha256 uses %q", sh[0], v["h_shacmd"])
				}
				if name == "openssl" && v["h_shacmd"] != "openssl" {
					t.Errorf("%s: openssl is there, but h_sha256 uses %q", sh[0], v["h_shacmd"])
				}
			})
		})
	}
}

// TestShRunsListsOwnRecordsOnly: in a runs/ a team shares, a directory of
// another login's, however much it looks like a run's record, is not
// listed as one of ours.
func TestShRunsListsOwnRecordsOnly(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root, to give a record to another uid: run make test as root (CI does)")
	}
	fnShells(t, func(t *testing.T, sh []string, root string) {
		_, _, runs := fnPaths(root)
		for _, id := range []string{fnMe, fnOther} {
			fnWrite(t, runs+"/"+id+"/info", "hoist-run/1 id="+id+" start=1700000000 pid=1 who=w cmd=c\n")
		}
		if err := os.Chown(filepath.Join(runs, fnOther), 65534, 65534); err != nil {
			t.Fatal(err)
		}
		r := fnRun{fns: []string{"h_op_runs"}, call: "h_op_runs"}.do(t, sh, root)
		if got, want := fmt.Sprint(r.said), fmt.Sprint([]string{"RUN " + fnMe + " 1700000000 - - w c", "LISTED"}); got != want {
			t.Errorf("%s: said %s, want %s", sh[0], got, want)
		}
	})
}
