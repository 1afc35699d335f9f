package shellcmd

import (
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestShParse: h_parse takes the boot evidence from a hoist-lock/2 record and
// only the token from a hoist-lock/1 one; "-" is unknown (empty); a field
// with a character that does not belong there empties all of them, and a
// token that is not a token is dropped.
func TestShParse(t *testing.T) {
	type fields struct{ tok, mach, boot, ns, init string }
	good := fields{fnOther, fnMach, fnBoot, fnNS, fnInit}
	none := fields{}
	cases := []struct {
		name, line string
		want       fields
	}{
		{"version 2", fnRec(fnOther, fnMach, fnBoot, fnNS, fnInit), good},
		{"version 2, fields in another order", "hoist-lock/2 init=17 pidns=4026531836 boot=" + fnBoot + " mach=m1:host token=" + fnOther, good},
		{"version 2, unknown facts", fnRec(fnOther, "-", "-", "-", "-"), fields{tok: fnOther}},
		{"version 1: the token only", "hoist-lock/1 token=" + fnOther + " boot=" + fnBoot + " since=1 pid=1", fields{tok: fnOther}},
		{"no format", "token=" + fnOther + " boot=" + fnBoot, none},
		{"format 3", "hoist-lock/3 token=" + fnOther + " boot=" + fnBoot, none},
		{"tab instead of space after the format", "hoist-lock/2\ttoken=" + fnOther + " boot=" + fnBoot, none},
		{"empty", "", none},
		{"odd character in the machine", fnRec(fnOther, "m1:host$x", fnBoot, fnNS, fnInit), none},
		{"slash in the boot", fnRec(fnOther, fnMach, "../../x", fnNS, fnInit), none},
		{"glob in the namespace", fnRec(fnOther, fnMach, fnBoot, "*", fnInit), none},
		{"equals sign in the init", fnRec(fnOther, fnMach, fnBoot, fnNS, "1=2"), none},
		{"tab inside a field", fnRec(fnOther, "m1\thost", fnBoot, fnNS, fnInit), none},
		{"odd character in the token", fnRec(fnOther+";", fnMach, fnBoot, fnNS, fnInit), none},
		{"upper-case token", fnRec("AAAAAAAA-1111-4111-8111-AAAAAAAAAAAA", fnMach, fnBoot, fnNS, fnInit), fields{"", fnMach, fnBoot, fnNS, fnInit}},
		{"version 1, odd token", "hoist-lock/1 token=../x boot=b", none},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fnShells(t, func(t *testing.T, sh []string, root string) {
				r := fnRun{fns: []string{"h_parse"}, vars: map[string]string{"h_line": c.line}, call: "h_parse"}.do(t, sh, root)
				fnWantVars(t, sh, r, map[string]string{"h_r_tok": c.want.tok, "h_r_mach": c.want.mach,
					"h_r_boot": c.want.boot, "h_r_ns": c.want.ns, "h_r_init": c.want.init, "h_line": c.line})
			})
		})
	}
}

// TestShSample: h_sample on real lock directories, one of every kind.
func TestShSample(t *testing.T) {
	rec := fnRec(fnOther, fnMach, fnBoot, fnNS, fnInit)
	v1 := "hoist-lock/1 token=" + fnOther + " boot=" + fnBoot + " since=1 pid=1"
	held := func(line string) func(*testing.T, string) {
		return func(t *testing.T, lock string) { fnWrite(t, lock+"/"+fnOther+"/rec", line+"\n") }
	}
	symlink := func(target string) func(*testing.T, string) {
		return func(t *testing.T, lock string) {
			fnMkdir(t, lock+".target/"+fnOther)
			fnWrite(t, lock+".target/"+fnOther+"/rec", rec+"\n")
			if err := os.Symlink(target, lock); err != nil {
				t.Fatal(err)
			}
		}
	}
	// h_kind h_tok h_line h_rp h_odd h_oddwhy, and whether h_r_* are the
	// record's (rec) or empty. In h_rp and h_odd, "L" is the lock path.
	type want struct{ kind, tok, line, rp, odd, oddwhy string }
	cases := []struct {
		name   string
		lock   func(*testing.T, string)
		want   want
		fields bool // h_r_* are rec's
	}{
		{"free", func(*testing.T, string) {}, want{kind: "free"}, false},
		{"held", held(rec), want{"held", fnOther, rec, "L/" + fnOther + "/rec", "", ""}, true},
		{"held, a creator's directory moved in", func(t *testing.T, lock string) {
			held(rec)(t, lock)
			fnMkdir(t, lock+"/"+LockName+".new-"+fnThird+"/"+fnThird)
		}, want{"held", fnOther, rec, "L/" + fnOther + "/rec", "", ""}, true},
		{"held, record of another token", held(fnRec(fnThird, fnMach, fnBoot2, fnNS, fnInit)),
			want{"held", fnOther, fnRec(fnThird, fnMach, fnBoot2, fnNS, fnInit), "L/" + fnOther + "/rec", "", ""}, false},
		{"held, odd characters", held(fnRec(fnOther, fnMach, fnBoot2+"`x`", fnNS, fnInit)),
			want{"held", fnOther, fnRec(fnOther, fnMach, fnBoot2+"`x`", fnNS, fnInit), "L/" + fnOther + "/rec", "", ""}, false},
		{"held, empty record", held(""), want{"held", fnOther, "", "L/" + fnOther + "/rec", "", ""}, false},
		{"dead", func(t *testing.T, lock string) { fnMkdir(t, lock+"/"+fnOther) }, want{kind: "dead"}, false},
		{"dead: only a creator's directory moved in", func(t *testing.T, lock string) {
			fnMkdir(t, lock+"/"+LockName+".new-"+fnThird+"/"+fnThird)
		}, want{kind: "dead"}, false},
		{"dead, an earlier temporary record too", func(t *testing.T, lock string) {
			fnMkdir(t, lock+"/"+fnOther)
			fnWrite(t, lock+"/.owner-"+fnThird, v1+"\n")
		}, want{kind: "dead"}, false},
		{"legacy", func(t *testing.T, lock string) { fnWrite(t, lock+"/owner", v1+"\n") },
			want{"legacy", fnOther, v1, "L", "", ""}, false},
		{"legacy with its temporary record", func(t *testing.T, lock string) {
			fnWrite(t, lock+"/owner", v1+"\n")
			fnWrite(t, lock+"/.owner-"+fnThird, "")
		}, want{"legacy", fnOther, v1, "L", "", ""}, false},
		{"ownerless, empty", func(t *testing.T, lock string) { fnMkdir(t, lock) }, want{kind: "ownerless", rp: "L"}, false},
		{"ownerless, a temporary record only", func(t *testing.T, lock string) { fnWrite(t, lock+"/.owner-"+fnThird, v1+"\n") },
			want{kind: "ownerless", rp: "L"}, false},
		{"bad: symlink to a held lock", symlink(LockName + ".target"), want{kind: "bad", odd: "L", oddwhy: "symlink"}, false},
		{"bad: dangling symlink", symlink("nowhere"), want{kind: "bad", odd: "L", oddwhy: "symlink"}, false},
		{"bad: a file", func(t *testing.T, lock string) { fnWrite(t, lock, rec+"\n") }, want{kind: "bad", odd: "L", oddwhy: "file"}, false},
		{"bad: a fifo", func(t *testing.T, lock string) {
			if err := syscall.Mkfifo(lock, 0o644); err != nil {
				t.Fatal(err)
			}
		}, want{kind: "bad", odd: "L", oddwhy: "file"}, false},
		{"bad: a token-named fifo", func(t *testing.T, lock string) {
			fnMkdir(t, lock)
			if err := syscall.Mkfifo(lock+"/"+fnOther, 0o644); err != nil {
				t.Fatal(err)
			}
		}, want{kind: "bad", odd: "L/" + fnOther, oddwhy: "foreign"}, false},
		{"bad: foreign file", func(t *testing.T, lock string) { fnWrite(t, lock+"/README", "") },
			want{kind: "bad", odd: "L/README", oddwhy: "foreign"}, false},
		{"bad: foreign dot file beside a record", func(t *testing.T, lock string) {
			held(rec)(t, lock)
			fnWrite(t, lock+"/.x", "")
		}, want{kind: "bad", tok: fnOther, odd: "L/.x", oddwhy: "foreign"}, false},
		{"bad: foreign ..name", func(t *testing.T, lock string) { fnMkdir(t, lock+"/..x") },
			want{kind: "bad", odd: "L/..x", oddwhy: "foreign"}, false},
		{"bad: token-named file", func(t *testing.T, lock string) { fnWrite(t, lock+"/"+fnOther, rec+"\n") },
			want{kind: "bad", odd: "L/" + fnOther, oddwhy: "foreign"}, false},
		{"bad: token-named symlink to a held directory", func(t *testing.T, lock string) {
			fnWrite(t, lock+".x/"+fnOther+"/rec", rec+"\n")
			fnMkdir(t, lock)
			if err := os.Symlink("../"+LockName+".x/"+fnOther, lock+"/"+fnOther); err != nil {
				t.Fatal(err)
			}
		}, want{kind: "bad", odd: "L/" + fnOther, oddwhy: "foreign"}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fnShells(t, func(t *testing.T, sh []string, root string) {
				store, lock, _ := fnPaths(root)
				fnMkdir(t, store)
				c.lock(t, lock)
				r := fnRun{fns: []string{"h_sample"}, call: "h_sample"}.do(t, sh, root)
				w := c.want
				for _, p := range []*string{&w.rp, &w.odd} {
					if *p != "" && (*p)[0] == 'L' {
						*p = lock + (*p)[1:]
					}
				}
				fnWantVars(t, sh, r, map[string]string{"h_kind": w.kind, "h_tok": w.tok, "h_line": w.line,
					"h_rp": w.rp, "h_odd": w.odd, "h_oddwhy": w.oddwhy})
				f := map[string]string{"h_r_mach": "", "h_r_boot": "", "h_r_ns": "", "h_r_init": ""}
				if c.fields {
					f = map[string]string{"h_r_tok": fnOther, "h_r_mach": fnMach, "h_r_boot": fnBoot, "h_r_ns": fnNS, "h_r_init": fnInit}
				} else if w.kind != "legacy" {
					f["h_r_tok"] = ""
				}
				fnWantVars(t, sh, r, f)
			})
		})
	}
}

// TestShSampleOfAFlickeringLock: a lock directory that comes and goes (as
// releases, steals and creations make it do) is free, ownerless or dead to a
// sample taken meanwhile, never "bad". A kind of path is read in one look:
// two looks ("exists", then "not a directory") can straddle a removal and
// call the directory a file, which ended every waiter with ERROR lockpath.
func TestShSampleOfAFlickeringLock(t *testing.T) {
	const want = 500 // times the lock comes and goes while the shell samples
	fnShells(t, func(t *testing.T, sh []string, root string) {
		store, lock, _ := fnPaths(root)
		fnMkdir(t, store)
		stop, started := root+"/stop", root+"/started"
		go func() {
			// The flips begin once the shell samples.
			for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
				if _, err := os.Stat(started); err == nil {
					break
				}
			}
			for n := 0; n < want; {
				// The lock, then a token directory without a record
				// inside it (dead), then nothing.
				if os.Mkdir(lock, 0o755) == nil {
					_ = os.Mkdir(lock+"/"+fnOther, 0o755)
					_ = os.Remove(lock + "/" + fnOther)
					_ = os.Remove(lock)
					n++
				}
			}
			_ = os.WriteFile(stop, nil, 0o644)
		}()
		r := fnRun{fns: []string{"h_sample"}, call: `
			h_t_n=0
			: >"$h_root/started"
			until [ -e "$h_root/stop" ]; do
				h_sample
				case $h_kind in free | ownerless | dead) ;; *) return 1 ;; esac
				h_t_n=$((h_t_n + 1))
			done
			h_lasterr=$h_t_n`}.do(t, sh, root)
		if r.rc != 0 {
			t.Fatalf("%s: a lock directory that came and went was sampled as %q (%s %s)", sh[0], r.v["h_kind"], r.v["h_oddwhy"], r.v["h_odd"])
		}
		if n, _ := strconv.Atoi(r.v["h_lasterr"]); n < 100 {
			t.Errorf("%s: %d samples while the lock came and went %d times: the test proves nothing", sh[0], n, want)
		}
		t.Logf("%s: %s samples while the lock came and went %d times", sh[0], r.v["h_lasterr"], want)
	})
}

// TestShStatusSettlesAnEmptyLock: a lock directory without a record is
// sampled again a poll later by status (a release or a steal leaves one for
// an instant): gone by then, the lock is free; still there, it is reported.
func TestShStatusSettlesAnEmptyLock(t *testing.T) {
	for _, c := range []struct {
		name  string
		sleep string // sleep's double: what happens during the poll
		want  string // the verdict's verb
	}{
		{"released meanwhile", `command rmdir "$h_lock"`, "FREE"},
		{"still empty", `:`, "LOCK"},
	} {
		t.Run(c.name, func(t *testing.T) {
			fnShells(t, func(t *testing.T, sh []string, root string) {
				_, lock, _ := fnPaths(root)
				fnMkdir(t, lock)
				r := fnRun{fns: []string{"h_op_status"}, defs: "sleep() { " + c.sleep + "; }", call: "h_op_status"}.do(t, sh, root)
				if len(r.said) != 1 || !strings.HasPrefix(r.said[0], c.want) {
					t.Fatalf("%s: status said %q, want %s", sh[0], r.said, c.want)
				}
			})
		})
	}
}
