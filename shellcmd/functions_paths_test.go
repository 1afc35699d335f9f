package shellcmd

import (
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// fnAsRoot and fnNotRoot skip a case that means something for one kind of
// login only: root owns, reads and searches anything.
func fnAsRoot(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root: only root can chown a directory to another uid")
	}
}

func fnNotRoot(t *testing.T) {
	if os.Getuid() == 0 {
		t.Skip("meaningless as root: root reads and searches any directory whatever its mode")
	}
}

func fnMkdirMode(t *testing.T, path string, mode os.FileMode) {
	t.Helper()
	fnMkdir(t, path)
	if err := os.Chmod(path, mode); err != nil {
		t.Fatal(err)
	}
	if mode&0o700 != 0o700 {
		// Before t.TempDir's cleanup, which could not empty it.
		t.Cleanup(func() { os.Chmod(path, 0o755) })
	}
}

// fnStoreDirs makes the root and every directory h_paths checks, 0755.
func fnStoreDirs(t *testing.T, root string) {
	store, _, runs := fnPaths(root)
	for _, d := range []string{root, store, runs, store + "/.meta", store + "/.pins"} {
		fnMkdirMode(t, d, 0o755)
	}
}

// TestShPaths: h_paths refuses a store it cannot trust (a symlink, a file,
// writable by others, owned by someone else, unsearchable), naming the
// first path that is wrong and why; a group may write.
func TestShPaths(t *testing.T) {
	cases := []struct {
		name string
		only func(*testing.T)
		make func(t *testing.T, root string) string // the path said, if any
		why  string                                 // "" when the store is fine
		vars map[string]string
	}{
		{name: "nothing yet", make: func(*testing.T, string) string { return "" }},
		{name: "root only", make: func(t *testing.T, root string) string { fnMkdirMode(t, root, 0o755); return "" }},
		{name: "whole store", make: func(t *testing.T, root string) string { fnStoreDirs(t, root); return "" }},
		{name: "group-writable", make: func(t *testing.T, root string) string {
			fnStoreDirs(t, root)
			fnMkdirMode(t, root+"/"+StoreDir, os.ModeSetgid|0o775)
			fnMkdirMode(t, root+"/"+RunsDir, os.ModeSticky|os.ModeSetgid|0o770)
			return ""
		}},
		// An ACL can give others write access the mode bits do not show.
		{name: "an ACL on the store", why: "acl", make: func(t *testing.T, root string) string {
			fnStoreDirs(t, root)
			if out, err := exec.Command("setfacl", "-m", "u:nobody:rwx", root+"/"+StoreDir).CombinedOutput(); err != nil {
				t.Fatalf("setfacl (run make test, which installs acl): %v %s", err, out)
			}
			return root + "/" + StoreDir
		}},
		// A team's runs/ without the sticky bit would let one member swap
		// another's scratch directory for a symlink.
		{name: "group-writable runs without the sticky bit", why: "nosticky", make: func(t *testing.T, root string) string {
			fnStoreDirs(t, root)
			fnMkdirMode(t, root+"/"+RunsDir, 0o770)
			return root + "/" + RunsDir
		}},
		{name: "store writable by others", why: "writable", make: func(t *testing.T, root string) string {
			fnStoreDirs(t, root)
			fnMkdirMode(t, root+"/"+StoreDir, 0o757)
			return root + "/" + StoreDir
		}},
		{name: "sticky root writable by all", why: "writable", make: func(t *testing.T, root string) string {
			fnMkdirMode(t, root, os.ModeSticky|0o777)
			return root
		}},
		{name: ".pins writable by others", why: "writable", make: func(t *testing.T, root string) string {
			fnStoreDirs(t, root)
			fnMkdirMode(t, root+"/"+StoreDir+"/.pins", 0o777)
			return root + "/" + StoreDir + "/.pins"
		}},
		{name: "root a symlink", why: "symlink", make: func(t *testing.T, root string) string {
			fnMkdirMode(t, root+".real", 0o755)
			return fnSymlink(t, filepath.Base(root)+".real", root)
		}},
		{name: "store a symlink", why: "symlink", make: func(t *testing.T, root string) string {
			fnMkdirMode(t, root+"/real", 0o755)
			return fnSymlink(t, "real", root+"/"+StoreDir)
		}},
		{name: "store a dangling symlink", why: "symlink", make: func(t *testing.T, root string) string {
			fnMkdirMode(t, root, 0o755)
			return fnSymlink(t, "nowhere", root+"/"+StoreDir)
		}},
		{name: "store a file", why: "notdir", make: func(t *testing.T, root string) string {
			fnWrite(t, root+"/"+StoreDir, "")
			return root + "/" + StoreDir
		}},
		{name: "runs a file", why: "notdir", make: func(t *testing.T, root string) string {
			fnMkdirMode(t, root+"/"+StoreDir, 0o755)
			fnWrite(t, root+"/"+RunsDir, "")
			return root + "/" + RunsDir
		}},
		{name: "owned by another uid", why: "owner", only: fnAsRoot, make: func(t *testing.T, root string) string {
			fnStoreDirs(t, root)
			if err := os.Chown(root+"/"+StoreDir, 65534, 65534); err != nil {
				t.Fatal(err)
			}
			return root + "/" + StoreDir
		}},
		{name: "owned by root, the login another uid", only: fnAsRoot, vars: map[string]string{"h_uid": "65534"},
			make: func(t *testing.T, root string) string { fnStoreDirs(t, root); return "" }},
		{name: "owned by root, the login's uid unknown", only: fnAsRoot, vars: map[string]string{"h_uid": "-"},
			make: func(t *testing.T, root string) string { fnStoreDirs(t, root); return "" }},
		{name: "unreadable store", why: "unreadable", only: fnNotRoot, make: func(t *testing.T, root string) string {
			fnStoreDirs(t, root)
			fnMkdirMode(t, root+"/"+StoreDir, 0o311)
			return root + "/" + StoreDir
		}},
		{name: "unsearchable root", why: "unsearchable", only: fnNotRoot, make: func(t *testing.T, root string) string {
			fnStoreDirs(t, root)
			fnMkdirMode(t, root, 0)
			return root
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.only != nil {
				c.only(t)
			}
			fnShells(t, func(t *testing.T, sh []string, root string) {
				path := c.make(t, root)
				r := fnRun{fns: []string{"h_paths"}, call: "h_paths", vars: c.vars}.do(t, sh, root)
				var said []string
				if c.why != "" {
					said = []string{"ERROR path " + c.why + " " + path}
				}
				if want := map[bool]int{true: 1, false: 0}[c.why != ""]; r.rc != want || strings.Join(r.said, "\n") != strings.Join(said, "\n") {
					t.Errorf("%s: h_paths returned %d and said %q, want %d and %q", sh[0], r.rc, r.said, want, said)
				}
			})
		})
	}
}

func fnSymlink(t *testing.T, target, path string) string {
	t.Helper()
	fnMkdir(t, filepath.Dir(path))
	if err := os.Symlink(target, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestShPathOK: h_pathok judges the fields stat printed (GNU and BSD
// spellings); missing fields are never a pass.
func TestShPathOK(t *testing.T) {
	cases := []struct{ uid, args, why string }{
		{"1000", "0 755 directory", ""},
		{"1000", "1000 755 directory", ""},
		{"1000", "1000 700 directory", ""},
		{"1000", "1000 775 directory", ""},
		{"1000", "1000 2775 directory", ""},
		{"1000", "1000 774 directory", ""},
		{"1000", "1000 755 Directory", ""},
		{"1000", "1001 755 directory", "owner"},
		{"-", "1000 755 directory", "owner"},
		{"-", "0 755 directory", ""},
		{"1000", "1000 757 directory", "writable"},
		{"1000", "1000 772 directory", "writable"},
		{"1000", "1000 773 directory", "writable"},
		{"1000", "1000 776 directory", "writable"},
		{"1000", "1000 1777 directory", "writable"},
		{"1000", "1000 777 symbolic link", "symlink"},
		{"1000", "1000 755 Symbolic Link", "symlink"},
		{"1000", "1000 644 regular file", "notdir"},
		{"1000", "1000 644 regular empty file", "notdir"},
		{"1000", "1000 644 Regular File", "notdir"},
		{"1000", "1000 644 fifo", "notdir"},
		{"1000", "", "unreadable"},
	}
	for _, c := range cases {
		t.Run(c.uid+" "+c.args, func(t *testing.T) {
			fnShells(t, func(t *testing.T, sh []string, root string) {
				fnMkdirMode(t, root, 0o755)
				r := fnRun{fns: []string{"h_pathok"}, call: `h_pathok "$h_root" ` + c.args,
					vars: map[string]string{"h_uid": c.uid, "h_why": "-"}}.do(t, sh, root)
				want, wantWhy := 1, c.why
				if c.why == "" {
					want, wantWhy = 0, "-"
				}
				if r.rc != want || r.v["h_why"] != wantWhy {
					t.Errorf("%s: h_pathok returned %d with h_why %q, want %d and %q", sh[0], r.rc, r.v["h_why"], want, wantWhy)
				}
			})
		})
	}
}

// TestShAbsent: a path is absent only when that is known: its parent can be
// searched and does not hold it, or a parent is not a directory at all.
func TestShAbsent(t *testing.T) {
	cases := []struct {
		name string
		only func(*testing.T)
		make func(t *testing.T, root string) (path, par string)
		want bool
	}{
		{"missing in a directory", nil, func(t *testing.T, root string) (string, string) {
			fnMkdirMode(t, root, 0o755)
			return root + "/x", ""
		}, true},
		{"missing several levels down", nil, func(t *testing.T, root string) (string, string) { return root + "/a/b/c", "" }, true},
		{"missing under /", nil, func(*testing.T, string) (string, string) { return "/nonexistent-hoist-test/x", "" }, true},
		{"a parent is a file", nil, func(t *testing.T, root string) (string, string) {
			fnWrite(t, root+"/f", "")
			return root + "/f/x/y", ""
		}, true},
		{"relative (a relative HOME), missing", nil, func(*testing.T, string) (string, string) { return "nothere/x", "" }, true},
		{"a directory", nil, func(t *testing.T, root string) (string, string) { fnMkdir(t, root); return root, "" }, false},
		{"a file", nil, func(t *testing.T, root string) (string, string) { fnWrite(t, root, ""); return root, "" }, false},
		{"a dangling symlink", nil, func(t *testing.T, root string) (string, string) {
			return fnSymlink(t, "nowhere", root), ""
		}, false},
		{"under an unsearchable directory", fnNotRoot, func(t *testing.T, root string) (string, string) {
			fnMkdirMode(t, root, 0)
			return root + "/x", root
		}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.only != nil {
				c.only(t)
			}
			fnShells(t, func(t *testing.T, sh []string, root string) {
				path, par := c.make(t, root)
				r := fnRun{fns: []string{"h_absent"}, call: `h_absent "$h_tp"`, vars: map[string]string{"h_tp": path}}.do(t, sh, root)
				if got := r.rc == 0; got != c.want || (par != "" && r.v["h_par"] != par) {
					t.Errorf("%s: h_absent %s returned %d (h_par %q), want absent %v (h_par %q)", sh[0], path, r.rc, r.v["h_par"], c.want, par)
				}
			})
		})
	}
}

// TestShNames: the names gc trusts as hoist's: runtime ids (h_isid), tokens
// (h_isuuid), moved-aside victims (h_istrash); and h_listed, which matches
// whole lines only, never patterns.
func TestShNames(t *testing.T) {
	long, short := fnMe+"0", fnMe[:35]
	cases := []struct {
		fn, a, b string
		want     bool
	}{
		{"h_isid", "0123456789ab", "", true}, {"h_isid", "a.b+c_d-e", "", true}, {"h_isid", "x..y", "", true},
		{"h_isid", "", "", false}, {"h_isid", ".", "", false}, {"h_isid", "..", "", false},
		{"h_isid", ".meta", "", false}, {"h_isid", "../current", "", false}, {"h_isid", "a/b", "", false},
		{"h_isid", "/abs", "", false}, {"h_isid", "a b", "", false}, {"h_isid", "a*", "", false},
		{"h_isid", "a\nb", "", false}, {"h_isid", "a$b", "", false}, {"h_isid", "caf\u00e9", "", false},
		{"h_isuuid", fnMe, "", true}, {"h_isuuid", "01234567-89ab-cdef-0123-456789abcdef", "", true},
		{"h_isuuid", "", "", false}, {"h_isuuid", strings.ToUpper(fnMe), "", false},
		{"h_isuuid", short, "", false}, {"h_isuuid", long, "", false},
		{"h_isuuid", "0123456-789ab-cdef-0123-456789abcdef", "", false},
		{"h_isuuid", "../../../../../../../../../../../etc", "", false},
		{"h_isuuid", "01234567-89ab-cdef-0123-456789abcde/", "", false},
		{"h_isuuid", ".1234567-89ab-cdef-0123-456789abcdef", "", false},
		{"h_isuuid", "g1234567-89ab-cdef-0123-456789abcdef", "", false},
		{"h_isuuid", "01234567-89ab-cdef-0123-456789abcde ", "", false},
		{"h_istrash", ".trash-" + fnMe + "-0123456789ab", "", true}, {"h_istrash", ".trash-" + fnMe + "-a", "", true},
		{"h_istrash", ".trash-" + fnMe, "", false}, {"h_istrash", ".trash-" + fnMe + "-", "", false},
		{"h_istrash", ".trash-" + fnMe + "0123", "", false}, {"h_istrash", ".trash-" + short + "-x", "", false},
		{"h_istrash", ".trash-" + strings.ToUpper(fnMe) + "-x", "", false}, {"h_istrash", "trash-" + fnMe + "-x", "", false},
		{"h_istrash", ".stage-" + fnMe, "", false}, {"h_istrash", ".trash-../../../../../../../../../../etc-x", "", false},
		{"h_istrash", ".trash-" + fnMe[:8] + "/" + fnMe[9:] + "-x", "", false},
		{"h_listed", "a", "a\nb", true}, {"h_listed", "b", "a\nb", true}, {"h_listed", "b", "a\nb\nc", true},
		{"h_listed", "a", "a", true}, {"h_listed", "a", "ab\nc", false}, {"h_listed", "b", "abc", false},
		{"h_listed", "a b", "a\nb", false}, {"h_listed", "a*", "abc", false}, {"h_listed", "?", "x", false},
		{"h_listed", "[a]", "a", false}, {"h_listed", "", "a\nb", false}, {"h_listed", "a", "", false},
		{"h_listed", "ab", "a", false},
	}
	for _, c := range cases {
		t.Run(c.fn+" "+strconv.Quote(c.a)+" "+strconv.Quote(c.b), func(t *testing.T) {
			fnShells(t, func(t *testing.T, sh []string, root string) {
				call := c.fn + ` "$h_ta"`
				if c.fn == "h_listed" {
					call += ` "$h_tb"`
				}
				r := fnRun{fns: []string{c.fn}, call: call, vars: map[string]string{"h_ta": c.a, "h_tb": c.b}}.do(t, sh, root)
				if got := r.rc == 0; got != c.want || r.rc > 1 {
					t.Errorf("%s: %s %q %q returned %d, want %v", sh[0], c.fn, c.a, c.b, r.rc, c.want)
				}
			})
		})
	}
}

// TestShLsMode: h_lsmode reads from ls -ldn's line what stat says: the
// owner, the type, and the mode in octal as stat's %a writes it.
func TestShLsMode(t *testing.T) {
	modes := []uint32{0o755, 0o700, 0o1777, 0o2775, 0o777, 0o4755, 0o3770, 0o1000, 0o7777, 0o0, 0o6711, 0o1754}
	fnShells(t, func(t *testing.T, sh []string, root string) {
		dir := t.TempDir()
		var paths []string
		for i, m := range modes {
			p := filepath.Join(dir, fmt.Sprintf("d%d", i))
			if err := os.Mkdir(p, 0o700); err != nil {
				t.Fatal(err)
			}
			if err := syscall.Chmod(p, m); err != nil {
				t.Fatal(err)
			}
			paths = append(paths, p)
		}
		file, link := filepath.Join(dir, "f"), filepath.Join(dir, "l")
		if err := os.WriteFile(file, nil, 0o640); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(file, link); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, file, link)
		var call strings.Builder
		for i, p := range paths {
			fmt.Fprintf(&call, "h_lsmode $(LC_ALL=C ls -ldn '%s')\nh_got%d=\"$h_lu $h_lm $h_lt\"\n", p, i)
		}
		var names []string
		for i := range paths {
			names = append(names, fmt.Sprintf("h_got%d", i))
		}
		r := fnRun{fns: []string{"h_lsmode"}, call: fnCall(call.String(), names...)}.do(t, sh, root)
		v, _ := fnShown(r)
		for i, p := range paths {
			out, err := exec.Command("stat", "-c", "%u %a %F", p).Output()
			if err != nil {
				t.Fatal(err)
			}
			f := strings.Fields(string(out))
			kind := map[string]string{"directory": "directory", "symbolic": "symbolic", "regular": "other"}[f[2]]
			if want := f[0] + " " + f[1] + " " + kind; v[names[i]] != want {
				t.Errorf("%s: %s: h_lsmode says %q, stat %q", sh[0], filepath.Base(p), v[names[i]], want)
			}
		}
	})
}

// TestShOpRoot: h_op_root says where the store's root is as the host can
// prove it: the mount namespace, the device and inode of the root's parent
// directory (the nearest one above it that exists, a symlink on the way
// followed), and the way from there, line breaks encoded (h_pct). Without
// /proc proven the namespace's, or without a stat that takes -c, the
// namespace and the directory are unknown.
func TestShOpRoot(t *testing.T) {
	devino := func(t *testing.T, p string) string {
		t.Helper()
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		st := fi.Sys().(*syscall.Stat_t)
		return fmt.Sprintf("%d:%d", st.Dev, st.Ino)
	}
	fnShells(t, func(t *testing.T, sh []string, root string) {
		dir := filepath.Dir(root)
		real := filepath.Join(dir, "real")
		fnMkdir(t, real)
		if err := os.Symlink(real, filepath.Join(dir, "link")); err != nil {
			t.Fatal(err)
		}
		mnt := devino(t, "/proc/self/ns/mnt")
		for _, c := range []struct {
			root string
			vars map[string]string
			want string
		}{
			{root, nil, mnt + " " + devino(t, dir) + " ./" + filepath.Base(root)},
			{root + "/not/yet", nil, mnt + " " + devino(t, dir) + " ./" + filepath.Base(root) + "/not/yet"},
			{filepath.Join(dir, "link", "st\nore"), nil, mnt + " " + devino(t, real) + " ./st%0Aore"},
			{root, map[string]string{"h_proc": ""}, "- - ./" + filepath.Base(root)},
			{root, map[string]string{"h_stat": "bsd"}, "- - ./" + filepath.Base(root)},
		} {
			vars := map[string]string{"h_root": c.root}
			maps.Copy(vars, c.vars)
			r := fnRun{fns: []string{"h_op_root"}, vars: vars, call: "h_op_root"}.do(t, sh, root)
			if len(r.said) != 1 || r.said[0] != "ROOT "+c.want {
				t.Errorf("%s: h_op_root with %q %v said %q, want ROOT %s", sh[0], c.root, c.vars, r.said, c.want)
			}
		}
	})
}
