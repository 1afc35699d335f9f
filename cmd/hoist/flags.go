package main

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// flagSpec is one flag: its names, whether it takes a value, and where the
// value goes.
type flagSpec struct {
	names []string // "--host", "-H"
	value bool
	set   func(string) error
	help  string
}

// parseFlags reads flags anywhere among args, until "--" or, with
// stopAtArg, the first positional argument. It returns the positional
// arguments (everything after a "--" included).
func parseFlags(args []string, specs []flagSpec, stopAtArg bool) ([]string, error) {
	byName := map[string]*flagSpec{}
	for i := range specs {
		for _, n := range specs[i].names {
			byName[n] = &specs[i]
		}
	}
	var pos []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return append(pos, args[i+1:]...), nil
		}
		if len(a) < 2 || a[0] != '-' {
			if stopAtArg {
				return append(pos, args[i:]...), nil
			}
			pos = append(pos, a)
			continue
		}
		name, val, hasVal := strings.Cut(a, "=")
		if !strings.HasPrefix(a, "--") && len(a) > 2 && !hasVal {
			name, val, hasVal = a[:2], a[2:], true // -Hweb1, -ikey
		}
		f := byName[name]
		if f == nil {
			return nil, usageErr("unknown flag %s", name)
		}
		if !f.value {
			if hasVal {
				return nil, usageErr("flag %s takes no value", name)
			}
			if err := f.set(""); err != nil {
				return nil, err
			}
			continue
		}
		if !hasVal {
			if i+1 >= len(args) {
				return nil, usageErr("flag %s needs a value", name)
			}
			i++
			val = args[i]
		}
		if err := f.set(val); err != nil {
			return nil, usageErr("%s %s: %v", name, val, err)
		}
	}
	return pos, nil
}

func boolFlag(p *bool, help string, names ...string) flagSpec {
	return flagSpec{names: names, help: help, set: func(string) error { *p = true; return nil }}
}

func stringFlag(p *string, help string, names ...string) flagSpec {
	return flagSpec{names: names, value: true, help: help, set: func(v string) error { *p = v; return nil }}
}

func durationFlag(p *time.Duration, help string, names ...string) flagSpec {
	return flagSpec{names: names, value: true, help: help, set: func(v string) error {
		d, err := parseDuration(v)
		if err != nil {
			return err
		}
		*p = d
		return nil
	}}
}

func intFlag(p *int, help string, names ...string) flagSpec {
	return flagSpec{names: names, value: true, help: help, set: func(v string) error {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return fmt.Errorf("want a positive number")
		}
		*p = n
		return nil
	}}
}

// parseDuration takes Go durations ("90s", "25m") and plain seconds ("30").
func parseDuration(v string) (time.Duration, error) {
	if n, err := strconv.ParseFloat(v, 64); err == nil && n >= 0 {
		return time.Duration(n * float64(time.Second)), nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("want a duration such as 30s or 25m")
	}
	return d, nil
}

// usageError is bad command-line input: exit 2.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usageErr(format string, args ...any) error {
	return &usageError{msg: fmt.Sprintf(format, args...)}
}
