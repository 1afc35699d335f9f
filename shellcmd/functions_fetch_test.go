package shellcmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A registry's blob that comes larger than its declared size, under every
// shell: the tool's files are capped by ulimit -f (512-byte blocks in each
// sh), the blob refused with NOFETCH size, and the credential reaches curl
// on its standard input, never in its argv. The tools are doubles that
// write 400000 bytes to each output file, as a registry that sends more
// than the blob makes them, and record how large the file could grow.

// fnFetchTools writes the doubles of curl and wget into dir/bin. Each
// appends 400000 zero bytes to each output file, writes the size the file
// reached to FILE.n, and exits as the tool does on a failed write (curl
// 23, wget 3). curl keeps its argv in dir/curl.argv and what -K - gave it
// in dir/curl.conf.
func fnFetchTools(t *testing.T, dir string) {
	t.Helper()
	fill := `grow() { head -c 400000 /dev/zero >>"$1" 2>/dev/null; r=$?; wc -c <"$1" | tr -d ' ' >"$1.n"; return $r; }
`
	fnWrite(t, filepath.Join(dir, "bin", "curl"), `#!/bin/sh
`+fill+`echo "$*" >`+shq(dir)+`/curl.argv
while [ $# -gt 0 ]; do
	case $1 in
	-K) [ "$2" = - ] && cat >`+shq(dir)+`/curl.conf; shift ;;
	-o) grow "$2" || exit 23; shift ;;
	esac
	shift
done
`)
	fnWrite(t, filepath.Join(dir, "bin", "wget"), `#!/bin/sh
`+fill+`while [ $# -gt 0 ]; do
	case $1 in -O) grow "$2" || exit 3; shift ;; esac
	shift
done
`)
	for _, f := range []string{"curl", "wget"} {
		if err := os.Chmod(filepath.Join(dir, "bin", f), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(filepath.Join(dir, "pool", ".fetch"), 0o755); err != nil {
		t.Fatal(err)
	}
}

func shq(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

func fnReadN(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(data))
}

// TestShFetchCapsAnOversizedBlob: wget's blob of 262144 bytes is capped at
// 513 blocks (262656 bytes); curl's blobs of 100 and 262144 bytes go in two
// curls, capped at 1 and 1024 blocks, the first stopping the round. Each
// oversized blob is refused with NOFETCH size and removed.
func TestShFetchCapsAnOversizedBlob(t *testing.T) {
	const a, b = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
	fnShells(t, func(t *testing.T, sh []string, root string) {
		dir := filepath.Join(filepath.Dir(root), "stage")
		fnFetchTools(t, dir)
		vars := map[string]string{"hp_furl": "https://r.invalid/v2/x/blobs/", "hp_fauth": "Bearer s3cret"}
		r := fnRun{fns: []string{"h_get"}, vars: vars, defs: `PATH=$PWD/stage/bin:$PATH h_ft=wget`,
			call: `cd stage && h_get ` + a + ` 262144 pool/.fetch/` + a + ` 513 9>/dev/null`}.do(t, sh, root)
		if r.rc != 1 || len(r.said) != 1 || !strings.HasPrefix(r.said[0], "NOFETCH size blob sha256:"+a+" is larger than its declared size: 262656 bytes or more came, the manifest says 262144") {
			t.Errorf("%s: wget of an oversized blob: %d, said %q; want NOFETCH size", sh[0], r.rc, r.said)
		}
		if n := fnReadN(t, filepath.Join(dir, "pool", ".fetch", a+".n")); n != "262656" {
			t.Errorf("%s: wget wrote %s bytes of the blob; want it capped at 262656", sh[0], n)
		}
		if _, err := os.Stat(filepath.Join(dir, "pool", ".fetch", a)); err == nil {
			t.Errorf("%s: the oversized blob is kept", sh[0])
		}

		todo := "pool/.fetch/" + a + " " + a + " 100 0\npool/.fetch/" + b + " " + b + " 262144 0\n"
		fnWrite(t, filepath.Join(dir, "fetch.todo"), todo)
		r = fnRun{fns: []string{"h_curlall"}, vars: vars, defs: `PATH=$PWD/stage/bin:$PATH h_ft=curl`,
			call: `cd stage && : >./fetch.done && h_curlall`}.do(t, sh, root)
		if r.rc != 1 || len(r.said) != 1 || !strings.HasPrefix(r.said[0], "NOFETCH size blob sha256:"+a+" is larger than its declared size: 512 bytes or more came, the manifest says 100") {
			t.Errorf("%s: curl of an oversized blob: %d, said %q; want NOFETCH size", sh[0], r.rc, r.said)
		}
		if n := fnReadN(t, filepath.Join(dir, "pool", ".fetch", a+".n")); n != "512" {
			t.Errorf("%s: curl wrote %s bytes of the 100-byte blob; want it capped at 512", sh[0], n)
		}
		if _, err := os.Stat(filepath.Join(dir, "pool", ".fetch", b+".n")); err == nil {
			t.Errorf("%s: the round went on to the next class's curl after a failed one", sh[0])
		}
		if argv := fnReadN(t, filepath.Join(dir, "curl.argv")); strings.Contains(argv, "s3cret") || !strings.Contains(argv, "-K -") {
			t.Errorf("%s: curl's argv: %q; want -K - and no credential", sh[0], argv)
		}
		if conf := fnReadN(t, filepath.Join(dir, "curl.conf")); conf != `header = "Authorization: Bearer s3cret"` {
			t.Errorf("%s: curl's configuration on stdin: %q", sh[0], conf)
		}
	})
}
