package shellcmd

import (
	"os"
	"path/filepath"
	"testing"
)

// TestShBadMarkNeverWritesThroughALink: a member of a team store who
// plants a link where the mark's temporary file goes gets nothing
// written through it: the file it points to is left as it was.
func TestShBadMarkNeverWritesThroughALink(t *testing.T) {
	fnShells(t, func(t *testing.T, sh []string, root string) {
		store, _, _ := fnPaths(root)
		fnMkdir(t, filepath.Join(store, ".bad"))
		victim := filepath.Join(root, "victim")
		os.WriteFile(victim, []byte("keep\n"), 0o644)
		for _, name := range []string{".app-1.t", ".app-1.h1.t"} {
			if err := os.Symlink(victim, filepath.Join(store, ".bad", name)); err != nil {
				t.Fatal(err)
			}
		}
		fnRun{fns: []string{"h_markbad"},
			vars: map[string]string{"h_root": root, "h_store": store, "hp_hid": "h1"},
			call: "h_markbad app-1 'check failed'"}.do(t, sh, root)
		if b, _ := os.ReadFile(victim); string(b) != "keep\n" {
			t.Errorf("%s: the planted link's target became %q", sh[0], b)
		}
	})
}
