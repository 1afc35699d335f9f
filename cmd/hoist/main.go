// Command hoist installs runtimes onto hosts over SSH, into a store guarded by
// a lock on each host. This file holds the entry point and the global flags;
// each command lives in its own file, and every decision is the library's.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/term"

	"github.com/hoistdev/hoist/shellcmd"
)

// Exit codes scripts and CI rely on.
const (
	exitOK      = 0
	exitFailure = 1
	exitUsage   = 2
	// exitBusy: the lock could not be had within the wait (EX_TEMPFAIL).
	exitBusy = 75
	// exitUnknown: contact was lost before the host answered; what happened
	// there is unknown, and nothing was cleaned up on a guess.
	exitUnknown = 79
)

func main() {
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	a := &app{
		stdout:    os.Stdout,
		stderr:    os.Stderr,
		stderrTTY: term.IsTerminal(int(os.Stderr.Fd())),
		signals:   sigs,
	}
	os.Exit(a.main(os.Args[1:]))
}

// app is one invocation: its options and where it writes.
type app struct {
	stdout, stderr io.Writer
	stderrTTY      bool
	signals        <-chan os.Signal
	args           []string

	hosts      []string
	hostsFile  string
	root       string
	json       bool
	verbose    bool
	quiet      bool
	parallel   int
	identities []string
	knownHosts string
	acceptNew  bool
	sshOpts    []string

	wait    time.Duration
	message string
	token   string
	force   bool
	try     bool
	help    bool

	name     string
	activate bool
	// keepSetuid keeps setuid and setgid bits in a pushed artifact.
	keepSetuid bool
	keep       int
	dryRun     bool

	set map[string]bool // flags given, by their first name

	multi bool // several targets: prefix output with the host
	live  liveLine
}

const defaultWait = 25 * time.Minute

func (a *app) specs() []flagSpec {
	specs := []flagSpec{
		{names: []string{"--host", "-H"}, value: true, help: "target: local, [user@]host[:port]; repeatable, or comma-separated",
			set: func(v string) error { a.hosts = append(a.hosts, splitList(v)...); return nil }},
		stringFlag(&a.hostsFile, "file with one target per line", "--hosts-file"),
		stringFlag(&a.root, "store root on the host (default ~/.hoist, env HOIST_ROOT)", "--root"),
		boolFlag(&a.json, "one JSON object per host on stdout", "--json"),
		intFlag(&a.parallel, "hosts worked on at once (default 8)", "--parallel"),
		{names: []string{"--identity", "-i"}, value: true, help: "private key file; repeatable",
			set: func(v string) error { a.identities = append(a.identities, v); return nil }},
		stringFlag(&a.knownHosts, "known_hosts file (default ~/.ssh/known_hosts)", "--known-hosts"),
		boolFlag(&a.acceptNew, "record the key of a host not yet in known_hosts", "--accept-new-host-key"),
		{names: []string{"-o"}, value: true, help: "ssh option Key=Value (ConnectTimeout, ServerAliveInterval, ServerAliveCountMax, User)",
			set: func(v string) error { a.sshOpts = append(a.sshOpts, v); return nil }},
		boolFlag(&a.verbose, "say more", "--verbose", "-v"),
		boolFlag(&a.quiet, "say only errors", "--quiet", "-q"),
		boolFlag(&a.help, "show help", "--help", "-h"),
		durationFlag(&a.wait, "how long to wait for the lock (default 25m; 0 makes one attempt)", "--wait"),
		stringFlag(&a.message, "why the lock is held, shown to others", "--message"),
		stringFlag(&a.token, "owner token", "--token"),
		boolFlag(&a.force, "break the lock with --token even if it is not stale", "--force"),
		boolFlag(&a.try, "one attempt; never create the store", "--try"),
		stringFlag(&a.name, "runtime name (default: from the artifact's file name)", "--name"),
		boolFlag(&a.activate, "switch current to the pushed runtime", "--activate"),
		boolFlag(&a.keepSetuid, "keep setuid and setgid bits (they are stripped by default)", "--keep-setuid"),
		{names: []string{"--keep"}, value: true, help: "runtimes gc keeps beyond the protected ones (default 2)",
			set: func(v string) error {
				n, err := strconv.Atoi(v)
				if err != nil || n < 0 {
					return fmt.Errorf("want a number, 0 or more")
				}
				a.keep = n
				return nil
			}},
		boolFlag(&a.dryRun, "say what gc would do, change nothing", "--dry-run"),
	}
	for i := range specs {
		name := specs[i].names[0]
		set := specs[i].set
		specs[i].set = func(v string) error { a.set[name] = true; return set(v) }
	}
	return specs
}

// commandFlags lists the command flags each command takes; the global flags
// go with every command.
var commandFlags = map[string][]string{
	"run":          {"--wait"},
	"lock acquire": {"--wait", "--message", "--try"},
	"lock release": {"--token"},
	"lock break":   {"--force", "--token"},
	"push":         {"--wait", "--name", "--activate", "--keep-setuid"},
	"activate":     {"--wait"},
	"rollback":     {"--wait"},
	"pin":          {"--wait"},
	"unpin":        {"--wait"},
	"gc":           {"--keep", "--dry-run"},
}

var globalFlags = []string{"--host", "--hosts-file", "--root", "--json", "--parallel", "--identity",
	"--known-hosts", "--accept-new-host-key", "-o", "--verbose", "--quiet", "--help"}

func (a *app) main(args []string) int {
	a.args = args
	a.set = map[string]bool{}
	a.wait = defaultWait
	a.parallel = 8
	a.keep = 2
	specs := a.specs()
	pos, err := parseFlags(args, specs, true)
	if err != nil {
		return a.usage(err)
	}
	cmd, rest := commandName(pos)
	if cmd == "" || a.help {
		a.printHelp()
		if cmd == "" && !a.help {
			return exitUsage
		}
		return exitOK
	}
	// Flags may also follow the command; run's stop at its command line.
	pos, err = parseFlags(rest, specs, cmd == "run")
	if err != nil {
		return a.usage(err)
	}
	if err := a.checkFlags(cmd); err != nil {
		return a.usage(err)
	}
	switch cmd {
	case "version":
		fmt.Fprintln(a.stdout, "hoist", version())
		return exitOK
	case "help":
		a.printHelp()
		return exitOK
	case "run":
		return a.cmdRun(pos)
	case "push":
		return a.cmdPush(pos)
	case "list":
		if len(pos) > 0 {
			return a.usage(usageErr("list takes no arguments"))
		}
		return a.cmdList()
	case "activate", "rollback":
		return a.cmdSwitch(cmd, pos)
	case "pin", "unpin":
		return a.cmdPin(cmd, pos)
	case "gc":
		if len(pos) > 0 {
			return a.usage(usageErr("gc takes no arguments"))
		}
		return a.cmdGC()
	case "lock status", "lock acquire", "lock release", "lock break":
		if len(pos) > 0 {
			return a.usage(usageErr("%s takes no arguments (got %q)", cmd, pos[0]))
		}
		return a.cmdLock(cmd)
	}
	return a.usage(usageErr("unknown command %q", strings.TrimSpace(cmd)))
}

// commandName takes the command words off the front of pos.
func commandName(pos []string) (string, []string) {
	if len(pos) == 0 {
		return "", nil
	}
	if pos[0] == "lock" {
		if len(pos) < 2 {
			return "lock ?", nil
		}
		return "lock " + pos[1], pos[2:]
	}
	return pos[0], pos[1:]
}

func (a *app) checkFlags(cmd string) error {
	allowed := map[string]bool{}
	for _, f := range globalFlags {
		allowed[f] = true
	}
	for _, f := range commandFlags[cmd] {
		allowed[f] = true
	}
	for f := range a.set {
		if !allowed[f] {
			return usageErr("flag %s does not apply to %s", f, cmd)
		}
	}
	if len(a.message) > shellcmd.MaxField {
		return usageErr("--message is longer than %d bytes", shellcmd.MaxField)
	}
	if a.force && a.token == "" {
		return usageErr("--force needs --token TOKEN (see hoist lock status)")
	}
	if cmd == "lock release" && a.token == "" {
		return usageErr("lock release needs --token TOKEN (the token lock acquire printed)")
	}
	return nil
}

func (a *app) usage(err error) int {
	fmt.Fprintf(a.stderr, "hoist: %v; see hoist --help\n", err)
	return exitUsage
}

// say prints a message for people on stderr, unless --quiet.
func (a *app) say(host, format string, args ...any) {
	if a.quiet {
		return
	}
	a.clearLive()
	fmt.Fprintf(a.stderr, "hoist: %s: %s\n", host, fmt.Sprintf(format, args...))
}

// debug prints a message with -v only.
func (a *app) debug(host, format string, args ...any) {
	if a.verbose {
		a.say(host, format, args...)
	}
}

// note prints a message that concerns no host in particular.
func (a *app) note(format string, args ...any) {
	if a.quiet {
		return
	}
	a.clearLive()
	fmt.Fprintf(a.stderr, "hoist: %s\n", fmt.Sprintf(format, args...))
}

// interrupted turns signals into cancellations. The first signal calls
// first; a second one calls second. The returned function gives the exit
// code of the first signal, or 0 while none has come; it is safe to call
// from any goroutine.
func (a *app) interrupted(ctx context.Context, first, second func(os.Signal)) func() int {
	var code atomic.Int32
	go func() {
		n := 0
		for {
			select {
			case <-ctx.Done():
				return
			case s := <-a.signals:
				n++
				if n == 1 {
					code.Store(int32(signalExit(s)))
					first(s)
				} else if second != nil {
					second(s)
				}
			}
		}
	}()
	return func() int { return int(code.Load()) }
}

func signalExit(s os.Signal) int {
	switch s {
	case syscall.SIGINT:
		return 130
	case syscall.SIGTERM:
		return 143
	case syscall.SIGHUP:
		return 129
	}
	return 128
}

func splitList(v string) []string {
	var out []string
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}
