package main

import (
	"fmt"
	"os"
	"regexp"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/hoistdev/hoist/lock"
)

// globals are the flags every command takes, before or after its name.
type globals struct {
	hosts      []string // -H, split at commas
	hostsFile  string
	root       string
	json       bool
	parallel   int
	identities []string
	knownHosts string
	acceptNew  bool
	sshOpts    []string
	verbose    bool
	quiet      bool
	sshFile    string   // -F
	jump       string   // -J
	port       string   // -p
	login      string   // -l
	sshArgs    []string // -o, -p, -l and -J with their values, in the order given
	targetAt   map[string]int
	lease      time.Duration // --lease
	hold       string        // --token of run and the store commands
	// Registries (publish): --registry-ca, --insecure-registry,
	// --registry-token-file.
	registryCA         string
	insecureRegistries []string
	registryTokenFile  string
}

const rootLong = `hoist installs runtimes onto hosts over SSH, into a store guarded by a lock.

Targets: -H TARGET (repeatable, or comma-separated) or --hosts-file FILE;
without them, the target is "local" (this machine through /bin/sh). TARGET
is local, [user@]host[:port] or ssh://[user@]host[:port].

exit status: 0 ok, 1 failure, 2 usage, 75 lock busy after --wait, 79 outcome
unknown (connection lost before the host answered); hoist run exits with the
command's status; 130/143/129 after Ctrl-C, SIGTERM, SIGHUP.`

func (a *app) rootCommand() *cobra.Command {
	var showVersion bool
	root := &cobra.Command{
		Use:   "hoist",
		Short: "install runtimes onto hosts over SSH",
		Long:  rootLong,
		Example: `  hoist -H deploy@web1 push ./node-v22-linux-x64.tar.gz --activate
  hoist -H web1,web2,web3 list
  hoist -H web1 run -- systemctl restart app`,
		Args: func(c *cobra.Command, args []string) error {
			if len(args) > 0 {
				return unknownCommand(c, args[0])
			}
			return nil
		},
		RunE: func(c *cobra.Command, _ []string) error {
			if showVersion {
				fmt.Fprintln(a.stdout, "hoist", version())
				return nil
			}
			c.SetOut(a.stdout)
			c.Usage()
			return &codeError{code: exitUsage}
		},
		SilenceErrors:              true,
		SilenceUsage:               true,
		SuggestionsMinimumDistance: 2,
		CompletionOptions:          cobra.CompletionOptions{DisableDefaultCmd: true},
		PersistentPreRunE:          func(c *cobra.Command, _ []string) error { return a.setup(c) },
	}
	root.SetOut(a.stdout)
	root.SetErr(a.con)
	root.SetUsageFunc(usage)
	showHelp := root.HelpFunc()
	root.SetHelpFunc(func(c *cobra.Command, args []string) {
		// --help after a command that does not exist is the same error as
		// without it: cobra would show the parent's help and exit 0.
		if pos := c.Flags().Args(); c.HasSubCommands() && len(pos) > 0 && a.helpErr == nil {
			a.helpErr = unknownCommand(c, pos[0])
			return
		}
		showHelp(c, args)
	})
	root.SetFlagErrorFunc(flagError)
	root.Flags().BoolVar(&showVersion, "version", false, "print the version")

	a.g.parallel = 32
	f := root.PersistentFlags()
	a.g.targetAt = map[string]int{}
	f.VarP(targetsFlag{list: &a.g.hosts, at: a.g.targetAt, args: &a.g.sshArgs}, "host", "H", "work on `TARGET`: local, [user@]host[:port], ssh://[user@]host[:port]; repeatable or comma-separated (default local)")
	f.Var(targetsFlag{file: &a.g.hostsFile, at: a.g.targetAt, args: &a.g.sshArgs}, "hosts-file", "read targets from `FILE`, one per line (# comments; never local)")
	f.StringVar(&a.g.root, "root", "", "the store root on the host, `DIR`: /abs or ~/rel (default ~/.hoist, env HOIST_ROOT)")
	f.BoolVar(&a.g.json, "json", false, "one JSON object per host and line on stdout")
	f.Var(countValue{&a.g.parallel, 1}, "parallel", "work on `N` hosts at once")
	f.VarP(listValue{&a.g.identities, false}, "identity", "i", "offer the private key in `FILE`; repeatable (default the configuration's IdentityFile, else ~/.ssh/id_*; and ssh-agent)")
	f.StringVar(&a.g.knownHosts, "known-hosts", "", "check host keys against `FILE` (default ~/.ssh/known_hosts)")
	f.BoolVar(&a.g.acceptNew, "accept-new-host-key", false, "record the key of a host not yet in known_hosts")
	f.VarP(sshFlag{name: "-o", list: &a.g.sshOpts, args: &a.g.sshArgs}, "option", "o", "set an ssh_config option, `Key=Value`, as ssh -o does; repeatable")
	f.StringVarP(&a.g.sshFile, "ssh-config", "F", "", "read the OpenSSH configuration from `FILE` (default ~/.ssh/config, then /etc/ssh/ssh_config; none for none)")
	f.VarP(sshFlag{name: "-J", value: &a.g.jump, args: &a.g.sshArgs}, "jump", "J", "reach the hosts through the jump hosts `[user@]host[:port][,...]`, as ssh -J does")
	f.VarP(sshFlag{name: "-p", value: &a.g.port, args: &a.g.sshArgs}, "port", "p", "connect to `PORT`, as ssh -p does (of -p, -o Port= and a target's :port, the first given wins)")
	f.VarP(sshFlag{name: "-l", value: &a.g.login, args: &a.g.sshArgs}, "login", "l", "log in as `USER`, as ssh -l does (of -l, -o User= and a target's user@, the first given wins)")
	f.BoolVarP(&a.g.verbose, "verbose", "v", false, "log what happens (connections, host commands) on stderr")
	f.BoolVarP(&a.g.quiet, "quiet", "q", false, "say only errors and data: no progress, no notes")
	f.Var(leaseValue{&a.g.lease}, "lease", "locks taken carry a lease of `D`: renewed while a command runs, taken once not renewed for D")
	f.StringVar(&a.g.registryCA, "registry-ca", "", "trust only the CA certificates in `FILE` (PEM) for registries, instead of the system's")
	f.Var(listValue{&a.g.insecureRegistries, true}, "insecure-registry", "speak plain HTTP to the registry `HOST[:PORT]`, and to it only; repeatable or comma-separated")
	f.StringVar(&a.g.registryTokenFile, "registry-token-file", "", "authenticate to the registry with the bearer token in `FILE`, instead of docker's credentials")

	root.AddCommand(a.pushCommand(), a.publishCommand(), a.listCommand(), a.historyCommand(),
		a.activateCommand(), a.rollbackCommand(), a.rolloutCommand(), a.pinCommand("pin"), a.pinCommand("unpin"),
		a.gcCommand(), a.runCommand(), a.runsCommand(), a.logsCommand(), a.lockCommand(), a.doctorCommand(), a.muxCommand(), a.versionCommand(),
		a.completionCommand(root))
	help := helpCommand(root)
	root.AddCommand(help)
	root.SetHelpCommand(help)
	// Defined before cobra looks the command up, so that --help push and
	// -h lock status find their command: cobra takes a flag it does not know
	// yet to carry a value, and would read push or status as that value.
	initHelpFlags(root)
	return root
}

// setup runs once the flags are parsed, before any command: the logger, and
// the manual hold of a command that takes --token.
func (a *app) setup(c *cobra.Command) error {
	a.log = newLogger(a.con, a.g.verbose, a.g.quiet)
	if c.Annotations[holdAnnotation] == "" {
		return nil
	}
	if a.g.hold == "" {
		a.g.hold = os.Getenv("HOIST_LOCK_TOKEN")
	}
	if a.g.hold != "" && !lock.ValidToken(a.g.hold) {
		return usageErr("--token (or HOIST_LOCK_TOKEN) %q is not a lock token: use the token hoist lock acquire printed", printable(a.g.hold))
	}
	return nil
}

const holdAnnotation = "hoist.hold"

// holdFlag gives c --token: it then works under a manual hold instead of
// taking the lock.
func (a *app) holdFlag(c *cobra.Command) *cobra.Command {
	c.Flags().StringVar(&a.g.hold, "token", "", "work under the manual hold `TOKEN` (hoist lock acquire) instead of taking the lock; env HOIST_LOCK_TOKEN")
	if c.Annotations == nil {
		c.Annotations = map[string]string{}
	}
	c.Annotations[holdAnnotation] = "1"
	return c
}

// flagError makes pflag's complaints one usage line, in hoist's words.
func flagError(c *cobra.Command, err error) error {
	msg := err.Error()
	if m := invalidFlag.FindStringSubmatch(msg); m != nil {
		names := strings.Split(m[2], ", ")
		name := names[len(names)-1]
		if f := c.Flags().Lookup(strings.TrimLeft(name, "-")); f != nil && f.Value.Type() == "bool" {
			return usageErr("%s takes true or false, not %s", name, m[1])
		}
		return usageErr("%s %s: %s", name, m[1], m[3])
	}
	if name, ok := strings.CutPrefix(msg, "flag needs an argument: "); ok {
		if _, short, ok := strings.Cut(name, " in "); ok {
			name = short
		}
		return usageErr("flag %s needs a value", name)
	}
	name, ok := strings.CutPrefix(msg, "unknown flag: ")
	if rest, short := strings.CutPrefix(msg, "unknown shorthand flag: "); short {
		_, name, ok = strings.Cut(rest, " in ")
		name = name[:min(len(name), 2)]
	}
	if !ok {
		return &usageError{msg: msg}
	}
	if commandWithFlag(c.Root(), strings.TrimLeft(name, "-")) != nil {
		return usageErr("flag %s does not apply to %s", name, commandName(c))
	}
	return usageErr("unknown flag %s", name)
}

var invalidFlag = regexp.MustCompile(`^invalid argument (".*") for "(.*)" flag: (.*)$`)

// commandWithFlag finds a command that has the flag (a long name, or a
// shorthand letter).
func commandWithFlag(c *cobra.Command, name string) *cobra.Command {
	if f := c.LocalNonPersistentFlags(); f.Lookup(name) != nil || len(name) == 1 && f.ShorthandLookup(name) != nil {
		return c
	}
	for _, sub := range c.Commands() {
		if found := commandWithFlag(sub, name); found != nil {
			return found
		}
	}
	return nil
}

// commandName is a command's path without "hoist ".
func commandName(c *cobra.Command) string {
	return strings.TrimPrefix(c.CommandPath(), c.Root().Name()+" ")
}

// unknownCommand names a command c does not have, and the one meant.
func unknownCommand(c *cobra.Command, name string) error {
	path := strings.TrimPrefix(c.CommandPath()+" ", c.Root().Name()+" ")
	if s := c.SuggestionsFor(name); len(s) > 0 {
		return usageErr("unknown command %q (did you mean %q?)", path+name, path+s[0])
	}
	var names []string
	for _, sub := range c.Commands() {
		if sub.IsAvailableCommand() {
			names = append(names, sub.Name())
		}
	}
	return usageErr("unknown command %q (%s takes %s)", path+name, c.CommandPath(), strings.Join(names, ", "))
}

// noArgs and exactArgs check positional arguments, as usage errors.
func noArgs(c *cobra.Command, args []string) error {
	if len(args) > 0 {
		return usageErr("%s takes no arguments (got %q)", c.CommandPath(), args[0])
	}
	return nil
}

func exactArgs(n int, what string) cobra.PositionalArgs {
	return func(c *cobra.Command, args []string) error {
		if len(args) != n {
			return usageErr("usage: %s %s", c.CommandPath(), what)
		}
		return nil
	}
}

var _ pflag.Value = listValue{}

// initHelpFlags defines --help and -h on c and each command under it.
func initHelpFlags(c *cobra.Command) {
	c.InitDefaultHelpFlag()
	for _, sub := range c.Commands() {
		initHelpFlags(sub)
	}
}
