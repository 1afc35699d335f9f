package shellcmd

import (
	"fmt"
	"strconv"
	"testing"
)

// TestShPrevBoot: the previous-boot rule (h_prevboot) fires only on proof:
// another boot of this same machine, or this boot and PID namespace with
// another PID 1. Anything unknown ("-" from the host, empty from a record
// that h_parse emptied, empty from the host) proves nothing.
func TestShPrevBoot(t *testing.T) {
	type facts struct{ mach, boot, ns, init string }
	host := facts{fnMach, fnBoot, fnNS, fnInit}
	cases := []struct {
		name      string
		rec, host facts
		want      bool
	}{
		{"other boot of this machine", facts{fnMach, fnBoot2, fnNS, fnInit}, host, true},
		{"other boot, other namespace and init, this machine", facts{fnMach, fnBoot2, fnNS2, fnInit2}, host, true},
		{"other boot of another machine", facts{fnMach2, fnBoot2, fnNS, fnInit}, host, false},
		{"other boot, record machine unknown", facts{"", fnBoot2, fnNS, fnInit}, host, false},
		{"other boot, host machine unknown", facts{fnMach, fnBoot2, fnNS, fnInit}, facts{"-", fnBoot, fnNS, fnInit}, false},
		{"other boot, host machine empty", facts{"", fnBoot2, fnNS, fnInit}, facts{"", fnBoot, fnNS, fnInit}, false},
		{"record boot unknown", facts{fnMach, "", fnNS, fnInit2}, host, false},
		{"host boot unknown", facts{fnMach, fnBoot2, fnNS, fnInit2}, facts{fnMach, "-", fnNS, fnInit}, false},
		{"host boot empty", facts{fnMach, fnBoot2, fnNS, fnInit2}, facts{fnMach, "", fnNS, fnInit}, false},
		{"same boot and namespace, other init", facts{fnMach, fnBoot, fnNS, fnInit2}, host, true},
		{"same boot and namespace, other init, other machine", facts{fnMach2, fnBoot, fnNS, fnInit2}, host, true},
		{"same boot, other namespace (containers), same init", facts{fnMach, fnBoot, fnNS2, fnInit}, host, false},
		{"same boot, other namespace (containers), other init", facts{fnMach, fnBoot, fnNS2, fnInit2}, host, false},
		{"same everything", host, host, false},
		{"same boot and namespace, record init unknown", facts{fnMach, fnBoot, fnNS, ""}, host, false},
		{"same boot and namespace, host init unknown", facts{fnMach, fnBoot, fnNS, fnInit2}, facts{fnMach, fnBoot, fnNS, "-"}, false},
		{"same boot and namespace, host init empty", facts{fnMach, fnBoot, fnNS, fnInit2}, facts{fnMach, fnBoot, fnNS, ""}, false},
		{"same boot, record namespace unknown", facts{fnMach, fnBoot, "", fnInit2}, host, false},
		{"same boot, host namespace unknown", facts{fnMach, fnBoot, fnNS, fnInit2}, facts{fnMach, fnBoot, "-", fnInit}, false},
		{"same boot, host namespace empty", facts{fnMach, fnBoot, fnNS, fnInit2}, facts{fnMach, fnBoot, "", fnInit}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fnShells(t, func(t *testing.T, sh []string, root string) {
				r := fnRun{fns: []string{"h_prevboot"}, call: "h_prevboot", vars: map[string]string{
					"h_r_mach": c.rec.mach, "h_r_boot": c.rec.boot, "h_r_ns": c.rec.ns, "h_r_init": c.rec.init,
					"h_mach": c.host.mach, "h_bootid": c.host.boot, "h_pidns": c.host.ns, "h_init": c.host.init,
				}}.do(t, sh, root)
				if got := r.rc == 0; got != c.want || r.rc > 1 {
					t.Errorf("%s: h_prevboot returned %d, want previous boot %v", sh[0], r.rc, c.want)
				}
			})
		})
	}
}

// TestShStealable: the age rule on real lock directories, by the host's
// clock: the aged path is backdated with touch -d @EPOCH against date +%s.
// The stale period is hp_stale; without a stat flavour nothing is ever stale
// by age; an unreadable record (or one that names another token) proves no
// previous boot, and only its age counts.
func TestShStealable(t *testing.T) {
	held := func(tok, line string) func(*testing.T, string) {
		return func(t *testing.T, lock string) { fnWrite(t, lock+"/"+tok+"/rec", line+"\n") }
	}
	now := fnRec(fnOther, fnMach, fnBoot, fnNS, fnInit)
	prev := fnRec(fnOther, fnMach, fnBoot2, fnNS, fnInit)
	cases := []struct {
		name  string
		lock  func(*testing.T, string)
		aged  string // the path backdated, under the lock; "." for the lock itself
		age   int    // seconds
		vars  map[string]string
		after string // shell code between h_sample and h_stealable
		why   string // "" when not stealable
		noAge bool   // h_a must be empty
	}{
		{"19 minutes", held(fnOther, now), fnOther + "/rec", 19 * 60, nil, "", "", false},
		{"21 minutes", held(fnOther, now), fnOther + "/rec", 21 * 60, nil, "", "stale", false},
		// Ages are whole seconds: only an age above the period proves
		// that a whole period passed (the shell's clock stands still,
		// fnClock, so the age is exact).
		{"exactly the stale period", held(fnOther, now), fnOther + "/rec", 20 * 60, nil, "", "", false},
		{"a second short of the stale period", held(fnOther, now), fnOther + "/rec", 20*60 - 1, nil, "", "", false},
		{"a second past the stale period", held(fnOther, now), fnOther + "/rec", 20*60 + 1, nil, "", "stale", false},
		{"2 minutes with hp_stale 60", held(fnOther, now), fnOther + "/rec", 120, map[string]string{"hp_stale": "60"}, "", "stale", false},
		{"21 minutes with hp_stale 3600", held(fnOther, now), fnOther + "/rec", 21 * 60, map[string]string{"hp_stale": "3600"}, "", "", false},
		{"no stat: 3 days", held(fnOther, now), fnOther + "/rec", 3 * 86400, map[string]string{"h_stat": "none"}, "", "", true},
		{"bsd stat flavour on a GNU host: 3 days", held(fnOther, now), fnOther + "/rec", 3 * 86400, map[string]string{"h_stat": "bsd"}, "", "", true},
		{"previous boot, 1 minute", held(fnOther, prev), fnOther + "/rec", 60, nil, "", "boot", false},
		{"previous boot, no stat", held(fnOther, prev), fnOther + "/rec", 60, map[string]string{"h_stat": "none"}, "", "boot", true},
		{"unreadable record, 19 minutes", held(fnOther, "garbage"), fnOther + "/rec", 19 * 60, nil, "", "", false},
		{"unreadable record, 21 minutes", held(fnOther, "garbage"), fnOther + "/rec", 21 * 60, nil, "", "stale", false},
		{"empty record, 21 minutes", held(fnOther, ""), fnOther + "/rec", 21 * 60, nil, "", "stale", false},
		{"odd characters hide a previous boot, 1 minute", held(fnOther, fnRec(fnOther, "m1:host$", fnBoot2, fnNS, fnInit)), fnOther + "/rec", 60, nil, "", "", false},
		{"odd characters hide a previous boot, 21 minutes", held(fnOther, fnRec(fnOther, "m1:host$", fnBoot2, fnNS, fnInit)), fnOther + "/rec", 21 * 60, nil, "", "stale", false},
		{"a record of another token hides a previous boot", held(fnOther, fnRec(fnThird, fnMach, fnBoot2, fnNS, fnInit)), fnOther + "/rec", 60, nil, "", "", false},
		{"legacy lock with a boot, 19 minutes", func(t *testing.T, lock string) {
			fnWrite(t, lock+"/owner", "hoist-lock/1 token="+fnOther+" boot="+fnBoot2+" since=1 pid=1\n")
		}, ".", 19 * 60, nil, "", "", false},
		{"legacy lock, 21 minutes", func(t *testing.T, lock string) {
			fnWrite(t, lock+"/owner", "hoist-lock/1 token="+fnOther+" boot="+fnBoot2+" since=1 pid=1\n")
		}, ".", 21 * 60, nil, "", "stale", false},
		{"ownerless lock, 19 minutes", func(t *testing.T, lock string) { fnMkdir(t, lock) }, ".", 19 * 60, nil, "", "", false},
		{"ownerless lock, 21 minutes", func(t *testing.T, lock string) { fnMkdir(t, lock) }, ".", 21 * 60, nil, "", "stale", false},
		{"dead lock, 21 minutes", func(t *testing.T, lock string) { fnMkdir(t, lock+"/"+fnOther) }, fnOther, 21 * 60, nil, "", "", true},
		{"record gone after the sample", held(fnOther, now), fnOther + "/rec", 21 * 60, nil, `rm -f "$h_rp"`, "", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fnShells(t, func(t *testing.T, sh []string, root string) {
				_, lock, _ := fnPaths(root)
				c.lock(t, lock)
				r := fnRun{fns: []string{"h_sample", "h_stealable"}, vars: c.vars,
					defs: fnClock + "\n" + fmt.Sprintf(`touch -d "@$(($(date +%%s) - %d))" "$h_lock/%s"`, c.age, c.aged),
					call: "h_sample\n" + c.after + "\nh_stealable"}.do(t, sh, root)
				if want := map[bool]int{true: 0, false: 1}[c.why != ""]; r.rc != want || r.v["h_why"] != c.why {
					t.Errorf("%s: h_stealable returned %d with h_why %q, want %d and %q", sh[0], r.rc, r.v["h_why"], want, c.why)
				}
				if a, err := strconv.Atoi(r.v["h_a"]); c.noAge && r.v["h_a"] != "" {
					t.Errorf("%s: h_a = %q, want it unknown", sh[0], r.v["h_a"])
				} else if !c.noAge && (err != nil || a < c.age || a > c.age+10) {
					t.Errorf("%s: h_a = %q, want %d", sh[0], r.v["h_a"], c.age)
				}
			})
		})
	}
}
