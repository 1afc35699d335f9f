package main

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/hoistdev/hoist/lock"
)

// The flag values of hoist's own: pflag's StringSlice would split -i and -o
// values at commas inside quotes, and its Duration takes no plain seconds.

// listValue collects a repeatable flag; with split, each value may also be
// a comma-separated list (-H web1,web2).
type listValue struct {
	p     *[]string
	split bool
}

func (v listValue) Set(s string) error {
	if v.split {
		*v.p = append(*v.p, splitList(s)...)
	} else {
		*v.p = append(*v.p, s)
	}
	return nil
}

func (v listValue) String() string {
	if v.p == nil {
		return ""
	}
	return strings.Join(*v.p, ",")
}

func (v listValue) Type() string { return "list" }

// sshFlag is -o, -p, -l or -J: its value is kept (every -o, the last of
// the others), and it goes into sshArgs in the order given, since ssh takes
// the first of -o Port=, -p and a target's port, and so of the users.
type sshFlag struct {
	name  string    // "-o", "-p", "-l" or "-J"
	list  *[]string // -o's values
	value *string   // the others' value
	args  *[]string // the ssh command line so far
}

func (v sshFlag) Set(s string) error {
	*v.args = append(*v.args, v.name, s)
	if v.list != nil {
		*v.list = append(*v.list, s)
	} else {
		*v.value = s
	}
	return nil
}

func (v sshFlag) String() string {
	switch {
	case v.list != nil:
		return strings.Join(*v.list, ",")
	case v.value != nil:
		return *v.value
	}
	return ""
}

func (v sshFlag) Type() string { return "string" }

// targetsFlag is -H (or, with file set, --hosts-file): it records where
// each target came among the ssh flags, for the same rule.
type targetsFlag struct {
	list *[]string      // -H's targets
	file *string        // --hosts-file's file
	at   map[string]int // a target's place: how many sshArgs came before it
	args *[]string
}

func (v targetsFlag) Set(s string) error {
	if v.file != nil {
		*v.file = s
		v.at[""] = len(*v.args) // the place of the file's targets
		return nil
	}
	list := splitList(s)
	if len(list) == 0 {
		// -H "$HOSTS" with HOSTS unset: no target is not this machine.
		return errors.New("names no host; give a target, or -H local to work on this machine")
	}
	for _, t := range list {
		*v.list = append(*v.list, t)
		if _, ok := v.at[t]; !ok {
			v.at[t] = len(*v.args)
		}
	}
	return nil
}

func (v targetsFlag) String() string {
	switch {
	case v.file != nil:
		return *v.file
	case v.list != nil:
		return strings.Join(*v.list, ",")
	}
	return ""
}

func (v targetsFlag) Type() string {
	if v.file != nil {
		return "string"
	}
	return "list"
}

// countValue is a whole number of at least min.
type countValue struct {
	p   *int
	min int
}

func (v countValue) Set(s string) error {
	n, err := strconv.Atoi(s)
	if err != nil || n < v.min {
		return fmt.Errorf("want a whole number, %d or more", v.min)
	}
	*v.p = n
	return nil
}

func (v countValue) String() string {
	if v.p == nil {
		return "0"
	}
	return strconv.Itoa(*v.p)
}

func (v countValue) Type() string { return "N" }

// durationValue takes Go durations ("90s", "25m") and plain seconds ("30").
type durationValue struct{ p *time.Duration }

func (v durationValue) Set(s string) error {
	d, err := parseDuration(s)
	if err != nil {
		return err
	}
	*v.p = d
	return nil
}

func (v durationValue) String() string {
	if v.p == nil {
		return "0s"
	}
	return v.p.String()
}

func (v durationValue) Type() string { return "D" }

func parseDuration(v string) (time.Duration, error) {
	// A float of seconds beyond a Duration's range (about 292 years)
	// would wrap around, and "inf" or "NaN" parse as floats too: refused,
	// rather than read as some other wait.
	if n, err := strconv.ParseFloat(v, 64); err == nil {
		if n < 0 || math.IsNaN(n) || n > maxWait.Seconds() {
			return 0, fmt.Errorf("want a duration from 0 to %s, such as 30s or 25m", maxWait)
		}
		return time.Duration(n * float64(time.Second)), nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 || d > maxWait {
		return 0, fmt.Errorf("want a duration from 0 to %s, such as 30s or 25m", maxWait)
	}
	return d, nil
}

// maxWait bounds a wait: a year is longer than anyone means.
const maxWait = 365 * 24 * time.Hour

// defaultWait outlives the 20-minute stale rule, so a waiter always
// outlives a dead holder's lock.
const defaultWait = 25 * time.Minute

func splitList(v string) []string {
	var out []string
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// leaseValue is a lease: whole seconds from 2s to 115 days (what a lock
// record can carry).
type leaseValue struct{ p *time.Duration }

func (v leaseValue) Set(s string) error {
	d, err := parseDuration(s)
	if err != nil || d < lock.MinLease || d > lock.MaxLease || d%time.Second != 0 {
		return fmt.Errorf("a lease is whole seconds from 2s to 115 days (9999999s), as 90s, 20m or 2h")
	}
	*v.p = d
	return nil
}

func (v leaseValue) String() string {
	if v.p == nil || *v.p == 0 {
		return lock.DefaultLease.String()
	}
	return v.p.String()
}

func (v leaseValue) Type() string { return "D" }

// sizeValue is a size in bytes: a whole number, or one with K, M, G or T
// (binary: 1 K is 1024 bytes; KiB, MiB, GiB and TiB mean the same).
type sizeValue struct{ p *int64 }

func (v sizeValue) Set(s string) error {
	n, err := parseSize(s)
	if err != nil {
		return err
	}
	*v.p = n
	return nil
}

// String is the size in the largest unit that divides it, as Set takes it.
func (v sizeValue) String() string {
	if v.p == nil {
		return "0"
	}
	n := *v.p
	for _, u := range []string{"", "K", "M", "G", "T"} {
		if u == "T" || n == 0 || n%1024 != 0 {
			return strconv.FormatInt(n, 10) + u
		}
		n /= 1024
	}
	return ""
}

func (v sizeValue) Type() string { return "SIZE" }

func parseSize(s string) (int64, error) {
	bad := fmt.Errorf("want a size in bytes, or with K, M, G or T (KiB, MiB, GiB, TiB), as 500M or 64G")
	num := strings.TrimRight(s, "KMGTkmgtiBb")
	unit := strings.ToUpper(strings.TrimSuffix(strings.TrimSuffix(s[len(num):], "B"), "b"))
	shift := map[string]uint{"": 0, "K": 10, "KI": 10, "M": 20, "MI": 20, "G": 30, "GI": 30, "T": 40, "TI": 40}
	sh, ok := shift[unit]
	n, err := strconv.ParseInt(num, 10, 64)
	if !ok || err != nil || n <= 0 || n > math.MaxInt64>>sh {
		return 0, bad
	}
	return n << sh, nil
}
