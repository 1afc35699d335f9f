package shellcmd

// The lease a record carries: the fields h_parse reads for it and for the
// holder process (hpid, hstart, huid), and the age rule with the record's
// own lease (h_stealable). Heartbeats and fencing are in
// functions_fence_test.go, the holder process's rules in
// functions_proc_test.go.

import (
	"fmt"
	"strings"
	"testing"
)

// TestShParseLease: h_parse reads the lease and the holder process (hpid,
// hstart, huid) of a hoist-lock/2 record. "-" and anything that is not
// digits is unknown (empty); a lease must be 2 to 9999999 seconds, written
// without a leading zero; hpid is never 0 nor has a leading zero. A
// character that belongs in no field, in these or any other field h_parse
// reads, empties every field.
func TestShParseLease(t *testing.T) {
	head := "hoist-lock/2 token=" + fnOther + " since=1 mach=" + fnMach + " boot=" + fnBoot + " pidns=" + fnNS + " init=" + fnInit + " "
	type want struct{ lease, hpid, hst, huid string }
	cases := []struct {
		name, line string
		want       want
		keep       bool // the other fields are read
	}{
		{"all four", head + "lease=1200 hpid=4242 hstart=987654 huid=1000 pid=7", want{"1200", "4242", "987654", "1000"}, true},
		{"fields in another order", "hoist-lock/2 huid=3 hstart=2 hpid=1 lease=9 token=" + fnOther + " init=" + fnInit + " pidns=" + fnNS +
			" boot=" + fnBoot + " mach=" + fnMach, want{"9", "1", "2", "3"}, true},
		{"a manual hold names no process", head + "lease=60 hpid=- hstart=- huid=0", want{"60", "", "", "0"}, true},
		{"all unknown", head + "lease=- hpid=- hstart=- huid=-", want{}, true},
		{"absent (a record from before leases)", head + "pid=7 who=u%40h", want{}, true},
		{"empty values", head + "lease= hpid= hstart= huid=", want{}, true},
		{"non-digits", head + "lease=12a hpid=x1 hstart=1.5 huid=u0", want{}, true},
		{"negative", head + "lease=-5 hpid=-1 hstart=-2 huid=-3", want{}, true},
		{"lease 0", head + "lease=0 hpid=5 hstart=6 huid=7", want{"", "5", "6", "7"}, true},
		{"lease 1", head + "lease=1 hpid=5 hstart=6 huid=7", want{"", "5", "6", "7"}, true},
		{"lease 2", head + "lease=2 hpid=5 hstart=6 huid=7", want{"2", "5", "6", "7"}, true},
		{"lease 10", head + "lease=10", want{lease: "10"}, true},
		{"lease with a leading zero", head + "lease=05 hpid=5", want{"", "5", "", ""}, true},
		{"lease 00", head + "lease=00", want{}, true},
		{"lease 9999999", head + "lease=9999999", want{lease: "9999999"}, true},
		{"lease 10000000", head + "lease=10000000", want{}, true},
		{"lease 99999999", head + "lease=99999999", want{}, true},
		{"lease of 9 digits", head + "lease=100000000", want{}, true},
		{"lease of 20 digits", head + "lease=12345678901234567890", want{}, true},
		{"hpid 0", head + "lease=5 hpid=0 hstart=6 huid=7", want{"5", "", "6", "7"}, true},
		{"hpid with a leading zero", head + "hpid=042 hstart=6", want{"", "", "6", ""}, true},
		{"hpid 1, hstart 0, huid 0", head + "hpid=1 hstart=0 huid=0", want{"", "1", "0", "0"}, true},
		{"odd character in the lease empties everything", head + "lease=5$ hpid=5 hstart=6 huid=7", want{}, false},
		{"slash in hstart empties everything", head + "lease=5 hpid=5 hstart=1/2 huid=7", want{}, false},
		{"glob in huid empties everything", head + "lease=5 hpid=5 hstart=6 huid=*", want{}, false},
		{"odd character in the machine empties the lease too",
			strings.Replace(head, fnMach, fnMach+"$", 1) + "lease=5 hpid=5 hstart=6 huid=7", want{}, false},
		{"odd character in the token empties the lease too",
			strings.Replace(head, fnOther, fnOther+";", 1) + "lease=5 hpid=5 hstart=6 huid=7", want{}, false},
		{"version 1: no lease, no holder", "hoist-lock/1 token=" + fnOther + " lease=5 hpid=5 hstart=6 huid=7", want{}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fnShells(t, func(t *testing.T, sh []string, root string) {
				r := fnRun{fns: []string{"h_parse"}, vars: map[string]string{"h_line": c.line},
					call: fnCall("h_parse", "h_r_lease", "h_r_hpid", "h_r_hst", "h_r_huid")}.do(t, sh, root)
				got, _ := fnShown(r)
				fnWant(t, sh, "h_parse", got, map[string]string{"h_r_lease": c.want.lease, "h_r_hpid": c.want.hpid,
					"h_r_hst": c.want.hst, "h_r_huid": c.want.huid})
				base := map[string]string{"h_r_tok": "", "h_r_mach": "", "h_r_boot": "", "h_r_ns": "", "h_r_init": ""}
				if c.keep {
					base = map[string]string{"h_r_tok": fnOther, "h_r_mach": fnMach, "h_r_boot": fnBoot, "h_r_ns": fnNS, "h_r_init": fnInit}
				} else if strings.HasPrefix(c.line, "hoist-lock/1 ") {
					base["h_r_tok"] = fnOther
				}
				fnWantVars(t, sh, r, base)
			})
		})
	}
}

// TestShLeaseStale: the age rule with the record's own lease: a record
// whose lease= is 5 is stale once more than 5 seconds old (ages are whole
// seconds: above the lease proves a whole lease passed), whatever hp_stale says; one
// without a lease (or with a lease h_parse refuses) has hp_stale. h_lz is the
// lease that applied.
func TestShLeaseStale(t *testing.T) {
	cases := []struct {
		name  string
		lease string
		stale string // hp_stale
		age   int
		lz    string
		why   string
	}{
		{"lease 5, 6 s old", "5", "1200", 6, "5", "stale"},
		{"lease 5, exactly 5 s old", "5", "1200", 5, "5", ""},
		{"lease 5, 4 s old", "5", "1200", 4, "5", ""},
		{"lease 5, 3 days old", "5", "1200", 3 * 86400, "5", "stale"},
		{"lease 100 over hp_stale 60, 70 s old", "100", "60", 70, "100", ""},
		{"lease 100 over hp_stale 60, 101 s old", "100", "60", 101, "100", "stale"},
		{"no lease, hp_stale 60, 61 s old", "-", "60", 61, "60", "stale"},
		{"no lease, hp_stale 60, 58 s old", "-", "60", 58, "60", ""},
		{"lease 1 refused, hp_stale 60, 6 s old", "1", "60", 6, "60", ""},
		{"lease 05 refused, hp_stale 60, 61 s old", "05", "60", 61, "60", "stale"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := fnHere()
			f.lease = c.lease
			rec := fnRecWith(fnOther, f)
			fnShells(t, func(t *testing.T, sh []string, root string) {
				_, lock, _ := fnPaths(root)
				fnWrite(t, lock+"/"+fnOther+"/rec", rec+"\n")
				r := fnRun{fns: []string{"h_sample", "h_stealable"}, vars: map[string]string{"hp_stale": c.stale},
					defs: fnClock + "\n" + fmt.Sprintf(`touch -d "@$(($(date +%%s) - %d))" "$h_lock/%s/rec"`, c.age, fnOther),
					call: fnCall("h_sample\nh_stealable", "h_lz", "h_pwhy")}.do(t, sh, root)
				v, _ := fnShown(r)
				if want := map[bool]int{true: 0, false: 1}[c.why != ""]; r.rc != want || r.v["h_why"] != c.why || v["h_lz"] != c.lz {
					t.Errorf("%s: h_stealable returned %d with h_why %q and h_lz %q (age %s), want %d, %q, %q",
						sh[0], r.rc, r.v["h_why"], v["h_lz"], r.v["h_a"], want, c.why, c.lz)
				}
				if v["h_pwhy"] != "none" {
					t.Errorf("%s: h_pwhy = %q, want none: the record names no process", sh[0], v["h_pwhy"])
				}
			})
		})
	}
}
