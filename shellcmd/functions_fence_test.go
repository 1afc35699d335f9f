package shellcmd

// Heartbeats and fencing (lease.sh): h_renew touches our own record only
// while our lease holds, h_owned and h_fence act only on a lock that is
// still ours, h_ownlease is the lease a manual hold keeps.

import (
	"errors"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// fnMtime is the modification time of path, in seconds; -1 when it is
// not there.
func fnMtime(t *testing.T, path string) int64 {
	t.Helper()
	fi, err := os.Stat(path)
	if errors.Is(err, os.ErrNotExist) {
		return -1
	}
	if err != nil {
		t.Fatal(err)
	}
	return fi.ModTime().Unix()
}

// fnPinned writes tok's record under lock, age seconds before fnEpoch.
func fnPinned(tok string, lease string, age int) func(*testing.T, string) {
	return func(t *testing.T, lock string) {
		f := fnHere()
		f.lease = lease
		path := lock + "/" + tok + "/rec"
		fnWrite(t, path, fnRecWith(tok, f)+"\n")
		at := time.Unix(fnEpoch-int64(age), 0)
		if err := os.Chtimes(path, at, at); err != nil {
			t.Fatal(err)
		}
	}
}

// fnAged writes tok's record under lock, age seconds old.
func fnAged(tok string, lease string, age int) func(*testing.T, string) {
	return func(t *testing.T, lock string) {
		f := fnHere()
		f.lease = lease
		path := lock + "/" + tok + "/rec"
		fnWrite(t, path, fnRecWith(tok, f)+"\n")
		at := time.Now().Add(-time.Duration(age) * time.Second)
		if err := os.Chtimes(path, at, at); err != nil {
			t.Fatal(err)
		}
	}
}

// TestShRenew: a heartbeat touches our own record, and only while the lock
// is ours to keep: never when the record is gone (touch -c creates
// nothing), nor once its age has reached our lease (it ran out before this
// renewal), and a touch that came after the lease ran out (the heartbeat
// stalled between its look and its touch) is disowned.
func TestShRenew(t *testing.T) {
	rec := LockName + "/" + fnMe + "/rec"
	// h_step double: stalls at renew.looked, or runs code there.
	at := func(code string) string {
		return "h_step() { case $1 in renew.looked) " + code + " ;; esac; }"
	}
	cases := []struct {
		name  string
		lock  func(*testing.T, string)
		vars  map[string]string
		defs  string
		rc    int
		moved bool // the record's time is now's
		left  []string
	}{
		{name: "100 s old", lock: fnAged(fnMe, "1200", 100), rc: 0, moved: true, left: fnHeldLeft(fnMe)},
		{name: "just written", lock: fnAged(fnMe, "1200", 0), rc: 0, moved: true, left: fnHeldLeft(fnMe)},
		{name: "10 s before the lease ends", lock: fnAged(fnMe, "1200", 1190), rc: 0, moved: true, left: fnHeldLeft(fnMe)},
		{name: "a second before the lease ends", lock: fnPinned(fnMe, "1200", 1199), defs: fnClock, rc: 0, moved: true, left: fnHeldLeft(fnMe)},
		{name: "at the lease", lock: fnPinned(fnMe, "1200", 1200), defs: fnClock, rc: 0, moved: true, left: fnHeldLeft(fnMe)},
		{name: "a second past the lease", lock: fnPinned(fnMe, "1200", 1201), defs: fnClock, rc: 1, left: fnHeldLeft(fnMe)},
		{name: "past the lease", lock: fnAged(fnMe, "1200", 5000), rc: 1, left: fnHeldLeft(fnMe)},
		{name: "past a short lease", lock: fnAged(fnMe, "1200", 8), vars: map[string]string{"h_mylease": "5"}, rc: 1, left: fnHeldLeft(fnMe)},
		{name: "within a long lease", lock: fnAged(fnMe, "1200", 5000), vars: map[string]string{"h_mylease": "86400"}, rc: 0, moved: true,
			left: fnHeldLeft(fnMe)},
		{name: "age unknown (no stat)", lock: fnAged(fnMe, "1200", 5000), vars: map[string]string{"h_stat": "none"}, rc: 0, moved: true,
			left: fnHeldLeft(fnMe)},
		{name: "record gone", lock: func(t *testing.T, lock string) { fnMkdir(t, lock+"/"+fnMe) }, rc: 1,
			left: []string{LockName + "/", LockName + "/" + fnMe + "/"}},
		{name: "lock free", rc: 1},
		{name: "lock someone else's", lock: fnAged(fnOther, "1200", 100), rc: 1, left: fnHeldLeft(fnOther)},
		{name: "record moved out between the look and the touch", lock: fnAged(fnMe, "1200", 100),
			defs: at(`mv "$h_rp" "$h_lock.stolen"`), rc: 1, left: []string{LockName + "/", LockName + "/" + fnMe + "/", LockName + ".stolen"}},
		{name: "stalled past the lease between the look and the touch", lock: fnAged(fnMe, "1200", 2),
			vars: map[string]string{"h_mylease": "4"}, defs: at("sleep 3"), rc: 1, moved: true, left: fnHeldLeft(fnMe)},
		{name: "stalled within the lease", lock: fnAged(fnMe, "1200", 2),
			vars: map[string]string{"h_mylease": "10"}, defs: at("sleep 1"), rc: 0, moved: true, left: fnHeldLeft(fnMe)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fnShells(t, func(t *testing.T, sh []string, root string) {
				store, lock, _ := fnPaths(root)
				fnMkdir(t, store)
				if c.lock != nil {
					c.lock(t, lock)
				}
				others := map[string]int64{}
				for _, p := range fnTree(t, store) {
					if strings.HasSuffix(p, "/rec") {
						others[p] = fnMtime(t, store+"/"+p)
					}
				}
				before := time.Now().Unix()
				r := fnRun{fns: []string{"h_renew"}, vars: c.vars, defs: c.defs, call: "h_renew"}.do(t, sh, root)
				if r.rc != c.rc {
					t.Errorf("%s: h_renew returned %d, want %d", sh[0], r.rc, c.rc)
				}
				fnWantTree(t, store, c.left...)
				for p, m := range others {
					now := fnMtime(t, store+"/"+p)
					switch {
					case now < 0: // moved out: fnWantTree checked it
					case p == rec && c.moved:
						if now < before {
							t.Errorf("%s: our record's time is %d, want it renewed (%d or later)", sh[0], now, before)
						}
					case now != m:
						t.Errorf("%s: %s was touched (%d, was %d)", sh[0], p, now, m)
					}
				}
			})
		})
	}
}

// TestShLeaseFence: fencing: h_owned holds while our record is there and
// younger than our lease (or its age is unknown); h_fence then passes
// (step fence.checked), else it says LOST with the lock's record. The lease
// of a manual hold is its record's (h_ownlease), hp_stale when it names none.
func TestShLeaseFence(t *testing.T) {
	steps := "h_step() { h_say STEP \"$1\"; }"
	mine := func(lease string) string {
		f := fnHere()
		f.lease = lease
		return fnRecWith(fnMe, f)
	}
	otherRec := fnRecWith(fnOther, fnHere())
	fnRunLockCases(t, []string{"h_owned", "h_fence"}, []fnLockCase{
		{name: "owned: fresh", lock: fnAged(fnMe, "1200", 100), call: "h_owned", rc: 0, left: fnHeldLeft(fnMe)},
		{name: "owned: a second before our lease ends", lock: fnPinned(fnMe, "1200", 1199), defs: fnClock, call: "h_owned", rc: 0, left: fnHeldLeft(fnMe)},
		{name: "owned: at our lease", lock: fnPinned(fnMe, "1200", 1200), defs: fnClock, call: "h_owned", rc: 0, left: fnHeldLeft(fnMe)},
		{name: "owned: a second past our lease", lock: fnPinned(fnMe, "1200", 1201), defs: fnClock, call: "h_owned", rc: 1, left: fnHeldLeft(fnMe)},
		{name: "owned: past a short lease", lock: fnAged(fnMe, "1200", 61), vars: map[string]string{"h_mylease": "60"},
			call: "h_owned", rc: 1, left: fnHeldLeft(fnMe)},
		{name: "owned: age unknown", lock: fnAged(fnMe, "1200", 5000), vars: map[string]string{"h_stat": "none"},
			call: "h_owned", rc: 0, left: fnHeldLeft(fnMe)},
		{name: "owned: the lock someone else's", lock: fnAged(fnOther, "1200", 1), call: "h_owned", rc: 1, left: fnHeldLeft(fnOther)},
		// Our lease ran out, and a waiter steals our record while our age
		// is read (the steal is in date's double): the age is unknown
		// then, and the record gone.
		{name: "owned: our lapsed record stolen while its age is read", lock: fnPinned(fnMe, "1200", 5000),
			defs: `date() { case $1 in +%s) mv "$h_lock/$hp_me/rec" "$h_lock.stolen-x" 2>/dev/null; echo ` + strconv.Itoa(fnEpoch) + ` ;; *) command date "$@" ;; esac; }`,
			call: "h_owned", rc: 1, left: []string{LockName + "/", LockName + "/" + fnMe + "/", LockName + ".stolen-x"}},
		{name: "owned: free", call: "h_owned", rc: 1},
		{name: "fresh: no record is fresh (age unknown)", call: "h_fresh", rc: 0},
		{name: "fence: fresh", lock: fnAged(fnMe, "1200", 100), defs: steps, call: "h_fence", rc: 0,
			said: []string{"STEP fence.checked"}, left: fnHeldLeft(fnMe)},
		{name: "fence: our lease ran out", lock: fnAged(fnMe, "1200", 1300), defs: steps, call: "h_fence", rc: 1,
			said: []string{"LOST - - - " + mine("1200")}, left: fnHeldLeft(fnMe)},
		{name: "fence: taken", lock: fnAged(fnOther, "1200", 1), defs: steps, call: "h_fence", rc: 1,
			said: []string{"LOST - - - " + otherRec}, left: fnHeldLeft(fnOther)},
		{name: "fence: free", defs: steps, call: "h_fence", rc: 1, said: []string{"LOST - - - -"}},
	})
	// h_ownlease, then h_owned by that lease.
	cases := []struct {
		name  string
		lock  func(*testing.T, string)
		lease string // h_mylease after h_ownlease
		owned bool
		stale string
	}{
		{"a hold with lease 30, 20 s old", fnAged(fnMe, "30", 20), "30", true, "777"},
		{"a hold with lease 30, 40 s old", fnAged(fnMe, "30", 40), "30", false, "777"},
		{"a hold with lease 9999999, 5000 s old", fnAged(fnMe, "9999999", 5000), "9999999", true, "777"},
		{"a hold without a lease, 700 s old", fnAged(fnMe, "-", 700), "777", true, "777"},
		{"a hold without a lease, 800 s old", fnAged(fnMe, "-", 800), "777", false, "777"},
		{"a hold with a refused lease", fnAged(fnMe, "1", 20), "777", true, "777"},
		{"an unreadable hold", func(t *testing.T, lock string) { fnWrite(t, lock+"/"+fnMe+"/rec", "x$y\n") }, "777", true, "777"},
		{"no hold", nil, "777", false, "777"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fnShells(t, func(t *testing.T, sh []string, root string) {
				store, lock, _ := fnPaths(root)
				fnMkdir(t, store)
				if c.lock != nil {
					c.lock(t, lock)
				}
				r := fnRun{fns: []string{"h_ownlease", "h_owned"}, vars: map[string]string{"hp_stale": c.stale, "h_mylease": "5"},
					call: fnCall("h_ownlease\nh_owned", "h_mylease")}.do(t, sh, root)
				v, _ := fnShown(r)
				if got := r.rc == 0; v["h_mylease"] != c.lease || got != c.owned || r.rc > 1 {
					t.Errorf("%s: h_ownlease set h_mylease %q and h_owned returned %d, want %q and owned %v",
						sh[0], v["h_mylease"], r.rc, c.lease, c.owned)
				}
			})
		})
	}
}
