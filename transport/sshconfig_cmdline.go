package transport

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// ConfigOptions are the command line's part of an OpenSSH configuration, as
// ssh takes them: -F, -p, -l, -J and -o.
//
// As in ssh, the first value given wins: of -o Port=, -p and a target's
// port, and of -o User=, -l and a target's user@, whichever comes first on
// the command line; every one of them beats the configuration files. Args
// says in which order they came; without it, Options, Port, User and Jump
// count as given in that order, after the target.
type ConfigOptions struct {
	// File is the configuration file (-F); "" reads ~/.ssh/config and then
	// /etc/ssh/ssh_config, "none" reads none.
	File string
	// Port (-p) and User (-l).
	Port, User string
	// Jump is a ProxyJump chain (-J): [user@]host[:port][,...].
	Jump string
	// Options are Key=Value settings (-o).
	Options []string

	// Args, when not nil, stands for Port, User, Jump and Options: the
	// command line's -p, -l, -J and -o with their values, in the order
	// given ("-o", "User=bob", "-p", "2222").
	Args []string
	// TargetAt is how many of Args came before the target, whose user and
	// port count as given there.
	TargetAt int
}

// argv is the command line o stands for, with the target's user and port
// (each "" when it names none) where the target stood.
func (o ConfigOptions) argv(user, port string) []string {
	args, at := o.Args, o.TargetAt
	if args == nil {
		for _, kv := range o.Options {
			args = append(args, "-o", kv)
		}
		for _, f := range [][2]string{{"-p", o.Port}, {"-l", o.User}, {"-J", o.Jump}} {
			if f[1] != "" {
				args = append(args, f[0], f[1])
			}
		}
		at = 0
	}
	at = max(0, min(at, len(args)))
	var target []string
	if user != "" {
		target = append(target, "-l", user)
	}
	if port != "" {
		target = append(target, "-p", port)
	}
	return slices.Concat(args[:at:at], target, args[at:])
}

// flags calls fn with each flag of o's command line and its value; an -o
// comes as its lowercased keyword and its value.
func (o ConfigOptions) flags(fn func(flag, key, value string)) {
	args := o.argv("", "")
	for i := 0; i+1 < len(args); i += 2 {
		flag, value := args[i], args[i+1]
		key := ""
		if flag == "-o" {
			// ssh takes Key=Value and Key Value.
			k, v, ok := strings.Cut(value, "=")
			if !ok {
				k, v, _ = strings.Cut(strings.TrimSpace(value), " ")
			}
			key, value = strings.ToLower(strings.TrimSpace(k)), strings.TrimSpace(v)
		}
		fn(flag, key, value)
	}
}

// option is the first value the command line gives keyword (lower case),
// through -o or the flag that stands for it, and whether it gives one.
func (o ConfigOptions) option(keyword string) (string, bool) {
	flag := map[string]string{"port": "-p", "user": "-l", "proxyjump": "-J"}[keyword]
	value, found := "", false
	o.flags(func(f, key, v string) {
		if !found && (f == "-o" && key == keyword || f == flag && flag != "") {
			value, found = v, true
		}
	})
	return value, found
}

// checkUsers refuses a user name from the command line that ssh refuses.
func (o ConfigOptions) checkUsers() error {
	var err error
	o.flags(func(f, key, v string) {
		switch {
		case err != nil:
		case f == "-l":
			err = checkName("user name", v)
			if err != nil {
				err = fmt.Errorf("-l: %w", err)
			}
		case key == "user":
			err = checkName("user name", v)
			if err != nil {
				err = fmt.Errorf("-o User: %w", err)
			}
		}
	})
	return err
}

// hoistReads are the options hoist itself reads from ssh -G's answer, and
// takes from the command line when there is no ssh to ask.
var hoistReads = []string{"port", "user", "connecttimeout", "serveraliveinterval", "serveralivecountmax"}

// needsOpenSSH reports whether resolving needs a configuration file read
// or an option only OpenSSH interprets.
func needsOpenSSH(o ConfigOptions) bool {
	if o.File != "" && o.File != "none" {
		return true
	}
	needs := false
	o.flags(func(f, key, _ string) {
		needs = needs || f == "-J" || f == "-o" && !slices.Contains(hoistReads, key)
	})
	if needs || o.File == "none" {
		return needs
	}
	home, _ := os.UserHomeDir()
	for _, f := range []string{filepath.Join(home, ".ssh", "config"), "/etc/ssh/ssh_config"} {
		if _, err := os.Stat(f); err == nil {
			return true
		}
	}
	return false
}

// defaults is what ssh -G prints for a host without any configuration, for
// what hoist reads.
func defaults(host string, o ConfigOptions) Resolved {
	r := Resolved{"hostname": {host}, "port": {"22"}, "serveraliveinterval": {"0"}, "serveralivecountmax": {"3"}}
	for _, k := range hoistReads {
		if v, ok := o.option(k); ok {
			r[k] = []string{v}
		}
	}
	return r
}

// checkName refuses a host or user name given on the command line (or in
// a hosts file) that OpenSSH refuses there (ssh_valid_hostname and
// ssh_valid_ruser in its readconf.c): %h, %n and %r go into ProxyCommand and
// Match exec, which a shell runs on this machine, and such a name must not
// be able to run anything there. A user name may hold a backslash
// (DOMAIN\user), spaces and other characters a shell treats as text inside
// a word.
func checkName(what, name string) error {
	bad := func(why string, args ...any) error {
		return fmt.Errorf("%q is not a %s: %s; fix the name (OpenSSH refuses it too)", name, what, fmt.Sprintf(why, args...))
	}
	if strings.HasPrefix(name, "-") {
		return bad("it starts with -")
	}
	refused := "'`\";&<>|(){}"
	if what == "host name" {
		refused += "$\\,"
	}
	for i, c := range name {
		switch {
		case c < ' ' || c == 0x7f || strings.ContainsRune(refused, c):
		case what == "host name" && (c == ' ' || c == '\t'):
		case c == ' ' && strings.HasPrefix(name[i+1:], "-"):
			return bad("a space comes before -")
		case c == '\\' && i == len(name)-1:
			return bad("it ends in \\")
		default:
			continue
		}
		return bad("it holds %q", c)
	}
	return nil
}

// explicitPort reports whether a target names its port.
func explicitPort(target string) bool {
	rest := strings.TrimPrefix(target, "ssh://")
	if i := strings.LastIndexByte(rest, '@'); i >= 0 {
		rest = rest[i+1:]
	}
	rest = strings.TrimSuffix(rest, "/")
	if strings.HasPrefix(rest, "[") {
		_, port, ok := strings.Cut(rest, "]:")
		return ok && port != ""
	}
	_, port, ok := strings.Cut(rest, ":")
	return strings.Count(rest, ":") == 1 && ok && port != ""
}
