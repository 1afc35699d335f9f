package shellcmd

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// fnLockCase is a lock state, a call on it, and what must be left in the
// store: paths relative to the store, as fnTree lists them.
type fnLockCase struct {
	name string
	lock func(*testing.T, string) // makes the lock state; the store exists
	vars map[string]string
	defs string
	call string
	rc   int
	said []string
	left []string
	vals map[string]string
}

func fnRunLockCases(t *testing.T, fns []string, cases []fnLockCase) {
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fnShells(t, func(t *testing.T, sh []string, root string) {
				store, lock, _ := fnPaths(root)
				fnMkdir(t, store)
				if c.lock != nil {
					c.lock(t, lock)
				}
				r := fnRun{fns: fns, vars: c.vars, defs: c.defs, call: c.call}.do(t, sh, root)
				if r.rc != c.rc {
					t.Errorf("%s: %s returned %d, want %d", sh[0], c.call, r.rc, c.rc)
				}
				if strings.Join(r.said, "\n") != strings.Join(c.said, "\n") {
					t.Errorf("%s: said %q, want %q", sh[0], r.said, c.said)
				}
				fnWantVars(t, sh, r, c.vals)
				fnWantTree(t, store, c.left...)
			})
		})
	}
}

var fnRecOther = fnRec(fnOther, fnMach, fnBoot, fnNS, fnInit)

func fnHeld(tok string) func(*testing.T, string) {
	return func(t *testing.T, lock string) {
		fnWrite(t, lock+"/"+tok+"/rec", fnRec(tok, fnMach, fnBoot, fnNS, fnInit)+"\n")
	}
}

func fnHeldLeft(tok string) []string {
	return []string{LockName + "/", LockName + "/" + tok + "/", LockName + "/" + tok + "/rec"}
}

// fnAppear is an h_step double: the lock appears just before create's
// rename, made by the shell code given.
func fnAppear(code string) string {
	return "h_step() { case $1 in create.publish) " + code + " ;; esac; }"
}

const fnMkOther = `mkdir "$h_lock" "$h_lock/` + fnOther + `" && printf 'x\n' >"$h_lock/` + fnOther + `/rec"`

// TestShCreateMakesNothingThroughALink: in a store others may write (its
// group, h_swap), a symlink a member put at this command's prepared path
// fails the creation, and no directory is made where it leads: the second
// mkdir waits for the first. (Where only the login may write the store,
// one mkdir makes both.)
func TestShCreateMakesNothingThroughALink(t *testing.T) {
	fnShells(t, func(t *testing.T, sh []string, root string) {
		store, lock, _ := fnPaths(root)
		fnMkdir(t, store)
		elsewhere := filepath.Join(filepath.Dir(root), "elsewhere")
		fnMkdir(t, elsewhere)
		if err := os.Symlink(elsewhere, lock+".new-"+fnMe); err != nil {
			t.Fatal(err)
		}
		r := fnRun{fns: []string{"h_create"}, vars: map[string]string{"h_swap": "1"}, call: "h_create"}.do(t, sh, root)
		if r.rc != 1 {
			t.Errorf("%s: h_create through a planted link returned %d, want 1", sh[0], r.rc)
		}
		fnWantTree(t, elsewhere)
	})
}

// TestShCreate: a lock is born with its record, in one rename, and only
// where there is none; a creation that loses leaves no prepared directory,
// whatever appeared at the lock path.
func TestShCreate(t *testing.T) {
	other := append(fnHeldLeft(fnOther)[:2:2], LockName+"/"+fnOther+"/rec")
	landed := []string{LockName + "/", LockName + "/" + LockName + ".new-" + fnMe + "/",
		LockName + "/" + LockName + ".new-" + fnMe + "/" + fnMe + "/", LockName + "/" + LockName + ".new-" + fnMe + "/" + fnMe + "/rec"}
	fnRunLockCases(t, []string{"h_create"}, []fnLockCase{
		{name: "free", call: "h_create", rc: 0, left: fnHeldLeft(fnMe), vals: map[string]string{"h_lasterr": ""}},
		{name: "held already", lock: fnHeld(fnOther), call: "h_create", rc: 1, left: fnHeldLeft(fnOther)},
		// mv moves the prepared directory into a lock that appeared; it
		// stays there, holding nothing, for the next clear.
		{name: "a held lock appears before the rename", defs: fnAppear(fnMkOther), call: "h_create", rc: 1,
			left: append(slices.Clone(landed), other[1:]...)},
		{name: "an empty lock appears before the rename", defs: fnAppear(`mkdir "$h_lock"`), call: "h_create", rc: 1, left: landed},
		{name: "a file appears before the rename", defs: fnAppear(`: >"$h_lock"`), call: "h_create", rc: 1, left: []string{LockName}},
		{name: "a symlink to a directory appears before the rename", defs: fnAppear(`mkdir "$h_store/t" && ln -s t "$h_lock"`),
			call: "h_create", rc: 1, left: []string{LockName + "@", "t/"}},
	})
	// The record and the store's absence are checked apart.
	fnShells(t, func(t *testing.T, sh []string, root string) {
		store, lock, _ := fnPaths(root)
		r := fnRun{fns: []string{"h_create"}, call: "h_create"}.do(t, sh, root)
		if r.rc != 1 || !strings.Contains(r.v["h_lasterr"], "mkdir") {
			t.Errorf("%s: without a store h_create returned %d with h_lasterr %q, want 1 and mkdir's complaint", sh[0], r.rc, r.v["h_lasterr"])
		}
		fnMkdir(t, store)
		before := time.Now().Unix()
		r = fnRun{fns: []string{"h_create"}, call: "h_create"}.do(t, sh, root)
		after := time.Now().Unix()
		data, err := os.ReadFile(lock + "/" + fnMe + "/rec")
		if r.rc != 0 || err != nil {
			t.Fatalf("%s: h_create returned %d, record: %v", sh[0], r.rc, err)
		}
		line, _ := strings.CutSuffix(string(data), "\n")
		head, rest, _ := strings.Cut(line, " since=")
		since, rest, _ := strings.Cut(rest, " ")
		if n, err := strconv.ParseInt(since, 10, 64); err != nil || n < before || n > after {
			t.Errorf("%s: since=%s, want the host's time (%d..%d)", sh[0], since, before, after)
		}
		if want := "hoist-lock/2 token=" + fnMe; head != want {
			t.Errorf("%s: record starts %q, want %q", sh[0], head, want)
		}
		// The holder process is the host shell: its pid and start time.
		want := regexp.MustCompile(`^mach=` + regexp.QuoteMeta(fnMach) + ` boot=` + fnBoot + ` pidns=` + fnNS + ` init=` + fnInit +
			` lease=1200 hpid=[1-9][0-9]* hstart=[0-9]+ huid=` + strconv.Itoa(os.Getuid()) +
			` pid=42 who=u%40h ver=test cmd=test msg=m%20x$`)
		if !want.MatchString(rest) {
			t.Errorf("%s: record ends %q, want %s", sh[0], rest, want)
		}
		if rec, ok := ParseRecord(line); !ok || rec.Token != fnMe || rec.BootID != fnBoot || rec.Message != "m x" {
			t.Errorf("%s: the client cannot read the record %q: %+v", sh[0], line, rec)
		}
	})
}

// TestShStealAndCAS: a steal moves the judged token's record and nothing
// else; a judgement gone stale (the lock was taken meanwhile) makes every
// compare-and-swap fail and touch nothing.
func TestShStealAndCAS(t *testing.T) {
	stale := map[string]string{"hp_me": fnThird, "h_kind": "held", "h_tok": fnOther}
	moved := LockName + ".stolen-" + fnMe
	fnRunLockCases(t, []string{"h_sample", "h_steal"}, []fnLockCase{
		{name: "steal a held lock", lock: fnHeld(fnOther), call: "h_sample && h_steal", rc: 0,
			left: fnHeldLeft(fnMe), vals: map[string]string{"h_line": fnRecOther}},
		{name: "second steal of the same judged token, by cas", lock: fnHeld(fnMe), vars: stale,
			call: `h_cas "$h_lock.stolen-$hp_me"`, rc: 1, left: fnHeldLeft(fnMe)},
		{name: "second steal of the same judged token, by steal", lock: fnHeld(fnMe), vars: stale,
			call: "h_steal", rc: 1, left: fnHeldLeft(fnMe)},
		{name: "judged token released, lock free", vars: stale, call: "h_steal", rc: 1},
		{name: "cas of a legacy lock", lock: func(t *testing.T, lock string) { fnWrite(t, lock+"/owner", "hoist-lock/1 token="+fnOther+"\n") },
			call: `h_sample && h_cas "$h_lock.stolen-$hp_me"`, rc: 0, left: []string{LockName + "/", moved}},
		{name: "cas of a legacy lock released meanwhile", lock: func(t *testing.T, lock string) { fnMkdir(t, lock) },
			vars: map[string]string{"h_kind": "legacy"}, call: `h_cas "$h_lock.stolen-$hp_me"`, rc: 1, left: []string{LockName + "/"}},
		{name: "cas of an ownerless lock", lock: func(t *testing.T, lock string) { fnWrite(t, lock+"/.owner-"+fnOther, "") },
			call: `h_sample && h_cas "$h_lock.stolen-$hp_me"`, rc: 0},
		{name: "cas of an ownerless lock that got a record", lock: fnHeld(fnOther), vars: map[string]string{"h_kind": "ownerless"},
			call: `h_cas "$h_lock.stolen-$hp_me"`, rc: 1, left: fnHeldLeft(fnOther)},
		{name: "cas of a dead lock", lock: func(t *testing.T, lock string) { fnMkdir(t, lock+"/"+fnOther) },
			call: `h_sample && h_cas "$h_lock.stolen-$hp_me"`, rc: 1, left: []string{LockName + "/", LockName + "/" + fnOther + "/"}},
		{name: "cas of a bad lock", lock: func(t *testing.T, lock string) { fnWrite(t, lock+"/"+fnOther, "x") },
			call: `h_sample && h_cas "$h_lock.stolen-$hp_me"`, rc: 1, left: []string{LockName + "/", LockName + "/" + fnOther}},
	})
}

// TestShRelease: only the owner's release removes the lock, and leaves
// nothing; anyone else's leaves it intact and says whose it is.
func TestShRelease(t *testing.T) {
	call := "h_release\nh_r=$?\nh_say_release $h_r\nreturn $h_r"
	fnRunLockCases(t, []string{"h_release", "h_say_release"}, []fnLockCase{
		{name: "by the owner", lock: fnHeld(fnMe), call: call, rc: 0, said: []string{"RELEASED"}},
		{name: "by another", lock: fnHeld(fnOther), call: call, rc: 1, said: []string{"LOST - - - " + fnRecOther},
			left: fnHeldLeft(fnOther), vals: map[string]string{"h_line": fnRecOther}},
		{name: "of a legacy lock", lock: func(t *testing.T, lock string) { fnWrite(t, lock+"/owner", "hoist-lock/1 token="+fnOther+"\n") },
			call: call, rc: 1, said: []string{"LOST - - - hoist-lock/1 token=" + fnOther}, left: []string{LockName + "/", LockName + "/owner"}},
		{name: "of an ownerless lock", lock: func(t *testing.T, lock string) { fnMkdir(t, lock) },
			call: call, rc: 1, said: []string{"LOST - - - -"}, left: []string{LockName + "/"}},
		{name: "free", call: call, rc: 2, said: []string{"NOTHELD"}},
		{name: "dead", lock: func(t *testing.T, lock string) { fnMkdir(t, lock+"/"+fnMe) },
			call: call, rc: 2, said: []string{"NOTHELD"}, left: []string{LockName + "/", LockName + "/" + fnMe + "/"}},
	})
}

// TestShClear: h_clear removes a lock only when nothing in it holds a
// record, and never a record.
func TestShClear(t *testing.T) {
	dead := func(t *testing.T, lock string) {
		fnMkdir(t, lock+"/"+fnOther)
		fnMkdir(t, lock+"/"+fnThird)
		fnWrite(t, lock+"/.owner-"+fnMe, "")
	}
	fnRunLockCases(t, []string{"h_clear"}, []fnLockCase{
		{name: "free", call: "h_clear"},
		{name: "dead", lock: dead, call: "h_clear"},
		{name: "ownerless", lock: func(t *testing.T, lock string) { fnMkdir(t, lock) }, call: "h_clear"},
		{name: "held, with dead debris", lock: func(t *testing.T, lock string) { dead(t, lock); fnHeld(fnMe)(t, lock) },
			call: "h_clear", left: fnHeldLeft(fnMe)},
		{name: "legacy", lock: func(t *testing.T, lock string) { fnWrite(t, lock+"/owner", "hoist-lock/1 token="+fnOther+"\n") },
			call: "h_clear", left: []string{LockName + "/", LockName + "/owner"}},
		{name: "a creator's directory moved in", lock: func(t *testing.T, lock string) {
			fnWrite(t, lock+"/"+LockName+".new-"+fnOther+"/"+fnOther+"/rec", "x\n")
		}, call: "h_clear"},
		{name: "held, a creator's directory moved in", lock: func(t *testing.T, lock string) {
			fnHeld(fnMe)(t, lock)
			fnWrite(t, lock+"/"+LockName+".new-"+fnOther+"/"+fnOther+"/rec", "x\n")
		}, call: "h_clear", left: fnHeldLeft(fnMe)},
		{name: "foreign", lock: func(t *testing.T, lock string) { fnWrite(t, lock+"/README", "") },
			call: "h_clear", left: []string{LockName + "/", LockName + "/README"}},
	})
}

// TestShAcquireUnderChurnIsNotAMissingStore: another client's lock that is
// there when h_create looks and gone by the next look (taken and released
// in between, as under many clients) is a race lost, not a store that
// cannot be written: the acquire waits on and takes the lock once the
// others stop, and never says ERROR mkdir.
func TestShAcquireUnderChurnIsNotAMissingStore(t *testing.T) {
	fnShells(t, func(t *testing.T, sh []string, root string) {
		store, _, _ := fnPaths(root)
		fnMkdir(t, store)
		// Five times, another client takes the lock just before this one
		// would (create.prepared), and releases it right after this one
		// gave up (its rm of its prepared directory).
		defs := `h_t_n=0
h_step() {
	case $1 in create.prepared)
		if [ "$h_t_n" -lt 5 ]; then
			h_t_n=$((h_t_n + 1))
			mkdir -p "$h_lock/` + fnOther + `" && echo x >"$h_lock/` + fnOther + `/rec"
		fi ;;
	esac
}
rm() { command rm "$@"; if [ -d "$h_lock/` + fnOther + `" ]; then command rm -rf "$h_lock"; fi; }`
		r := fnRun{fns: []string{"h_acquire"}, defs: defs, call: "h_acquire 30"}.do(t, sh, root)
		if r.rc != 0 || len(r.said) != 0 {
			t.Fatalf("%s: h_acquire = %d, said %q; want the lock taken, nothing said", sh[0], r.rc, r.said)
		}
		fnWantTree(t, store, fnHeldLeft(fnMe)...)
	})
}

// Spare tokens, as the client sends them after its first (hp_spares).
const (
	fnSpare1 = "dddddddd-4444-4444-8444-dddddddddddd"
	fnSpare2 = "eeeeeeee-5555-4555-8555-eeeeeeeeeeee"
)

// fnSpentTimes is an h_step double: the first n creations of the lock are
// taken and cleared just after their rename, before h_create looks (their
// attempts are spent); each token published is logged in published.
func fnSpentTimes(n int, published string) string {
	return `h_t_n=0
h_step() {
	case $1 in create.renamed)
		ls "$h_lock" >>'` + published + `'
		if [ "$h_t_n" -lt ` + strconv.Itoa(n) + ` ]; then
			h_t_n=$((h_t_n + 1))
			rm -rf "$h_lock"
		fi ;;
	esac
}`
}

// TestShAcquireAfterSpentAttempts: an attempt whose directory is gone when
// h_create looks is spent, and the acquire goes on with the next spare
// token, renaming its scratch directory after it first; no token is
// published twice. When the spares run out, or the scratch directory
// cannot take the spare's name, it ends BUSY.
func TestShAcquireAfterSpentAttempts(t *testing.T) {
	for _, tc := range []struct {
		name   string
		spent  int
		taken  string // runs/<spare> there already
		rc     int
		me     string
		tokens []string // published, in order
	}{
		{name: "spent twice, two spares", spent: 2, rc: 0, me: fnSpare2, tokens: []string{fnMe, fnSpare1, fnSpare2}},
		{name: "spent three times, two spares", spent: 3, rc: 1, me: fnSpare2, tokens: []string{fnMe, fnSpare1, fnSpare2}},
		{name: "the spare's scratch name is taken", spent: 1, taken: fnSpare1, rc: 1, me: fnMe, tokens: []string{fnMe}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fnShells(t, func(t *testing.T, sh []string, root string) {
				store, _, runs := fnPaths(root)
				fnMkdir(t, store)
				fnMkdir(t, runs+"/"+fnMe)
				if tc.taken != "" {
					fnMkdir(t, runs+"/"+tc.taken)
				}
				published := t.TempDir() + "/published"
				r := fnRun{fns: []string{"h_acquire"}, defs: fnSpentTimes(tc.spent, published),
					vars: map[string]string{"h_scr": runs + "/" + fnMe, "hp_spares": fnSpare1 + " " + fnSpare2},
					call: "h_acquire 30"}.do(t, sh, root)
				if r.rc != tc.rc || (tc.rc == 0) != (len(r.said) == 0) || tc.rc == 1 && (len(r.said) != 1 || !strings.HasPrefix(r.said[0], "BUSY ")) {
					t.Fatalf("%s: h_acquire = %d, said %q; want %d", sh[0], r.rc, r.said, tc.rc)
				}
				scr := runs + "/" + tc.me
				fnWantVars(t, sh, r, map[string]string{"hp_me": tc.me, "hp_rid": tc.me, "h_scr": scr})
				if _, err := os.Stat(scr); err != nil {
					t.Errorf("%s: the scratch directory is not at %s: %v", sh[0], scr, err)
				}
				if tc.me != fnMe {
					if _, err := os.Stat(runs + "/" + fnMe); err == nil {
						t.Errorf("%s: the scratch directory is still under the spent token too", sh[0])
					}
				}
				data, _ := os.ReadFile(published)
				if got := strings.Fields(string(data)); !slices.Equal(got, tc.tokens) {
					t.Errorf("%s: published %q, want %q, each once", sh[0], got, tc.tokens)
				}
				if tc.rc == 0 {
					fnWantTree(t, store, fnHeldLeft(tc.me)...)
				} else {
					fnWantTree(t, store)
				}
			})
		})
	}
}

// TestShMarkFollowsTheScratchRename: the stdin watcher's markers go into
// the scratch directory under whichever of the command's tokens it has
// taken by then; a directory not named by the token (a run's under a
// manual hold) is never looked for elsewhere.
func TestShMarkFollowsTheScratchRename(t *testing.T) {
	fnShells(t, func(t *testing.T, sh []string, root string) {
		_, _, runs := fnPaths(root)
		fnMkdir(t, runs+"/"+fnSpare2)
		vars := map[string]string{"h_scr": runs + "/" + fnMe, "hp_spares": fnSpare1 + " " + fnSpare2}
		if r := (fnRun{fns: []string{"h_mark"}, vars: vars, call: "h_mark gone"}).do(t, sh, root); r.rc != 0 {
			t.Fatalf("%s: h_mark into a directory renamed twice = %d", sh[0], r.rc)
		}
		if _, err := os.Stat(runs + "/" + fnSpare2 + "/gone"); err != nil {
			t.Fatalf("%s: the marker is not in the renamed directory: %v", sh[0], err)
		}
		vars["hp_rid"] = fnThird
		vars["h_scr"] = runs + "/" + fnThird
		if r := (fnRun{fns: []string{"h_mark"}, vars: vars, call: "h_mark stop"}).do(t, sh, root); r.rc != 1 {
			t.Fatalf("%s: h_mark for a directory not named by the token = %d, want 1", sh[0], r.rc)
		}
		if _, err := os.Stat(runs + "/" + fnSpare2 + "/stop"); err == nil {
			t.Fatalf("%s: a marker went into a directory named by a spare token", sh[0])
		}
	})
}

// TestShAcquireOnAMissingStore: a lock that cannot be created, and is not
// there, three polls running, is a store that is missing or cannot be
// written: ERROR mkdir with mkdir's own words.
func TestShAcquireOnAMissingStore(t *testing.T) {
	fnShells(t, func(t *testing.T, sh []string, root string) {
		r := fnRun{fns: []string{"h_acquire"}, call: "h_acquire 30"}.do(t, sh, root)
		if r.rc != 2 || len(r.said) != 1 || !strings.HasPrefix(r.said[0], "ERROR mkdir ") || !strings.Contains(r.said[0], "No such file") {
			t.Fatalf("%s: h_acquire on a missing store = %d, said %q; want ERROR mkdir with the reason", sh[0], r.rc, r.said)
		}
	})
}

// TestShAcquireWhereRenamesFail: a store that lets the prepared directory
// be made but refuses its rename (a policy, a file system), with no lock
// there, cannot be written: ERROR mkdir naming the rename, not a wait that
// never ends.
func TestShAcquireWhereRenamesFail(t *testing.T) {
	fnShells(t, func(t *testing.T, sh []string, root string) {
		store, _, _ := fnPaths(root)
		fnMkdir(t, store)
		r := fnRun{fns: []string{"h_acquire"}, defs: "mv() { return 1; }", call: "h_acquire 30"}.do(t, sh, root)
		if r.rc != 2 || len(r.said) != 1 || !strings.HasPrefix(r.said[0], "ERROR mkdir cannot rename ") {
			t.Fatalf("%s: h_acquire where renames fail = %d, said %q; want ERROR mkdir naming the rename", sh[0], r.rc, r.said)
		}
	})
}
