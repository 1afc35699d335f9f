package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/hoistdev/hoist/lock"
	"github.com/hoistdev/hoist/transport"
)

// targets lists the hosts to work on: -H, --hosts-file, else local, in
// the order given and without repeats; a hosts file that names local is
// refused. A target goes to the transport as
// given ("ssh://user@host:port", "bob@[::1]:2222"): only -H
// values and lines of --hosts-file are split, at commas, never at ":".
func (a *app) targets() ([]string, error) {
	out, _, err := a.targetsOnce()
	return out, err
}

// targetsOnce is targets, and the targets given more than once.
func (a *app) targetsOnce() (out, repeated []string, err error) {
	list := append([]string(nil), a.g.hosts...)
	if a.g.hostsFile != "" {
		f, err := os.Open(a.g.hostsFile)
		if err != nil {
			return nil, nil, usageErr("--hosts-file: %v", err)
		}
		defer f.Close()
		sc := bufio.NewScanner(f)
		for n := 1; sc.Scan(); n++ {
			line := strings.TrimSpace(sc.Text())
			if line == "" || strings.HasPrefix(line, "#") {
				continue
			}
			hosts := splitList(line)
			// A fleet's command must never run on the workstation: a
			// hosts file names hosts, and local is this machine.
			if slices.Contains(hosts, transport.LocalTarget) {
				return nil, nil, usageErr("--hosts-file %s line %d: %q is this machine, not a host, and a hosts file names hosts only; remove it, or give -H local to work here",
					printable(a.g.hostsFile), n, transport.LocalTarget)
			}
			list = append(list, hosts...)
		}
		if err := sc.Err(); err != nil {
			return nil, nil, usageErr("--hosts-file: %v", err)
		}
		if len(list) == len(a.g.hosts) {
			return nil, nil, usageErr("--hosts-file %s names no host; add a line per host, or give -H local to work on this machine",
				printable(a.g.hostsFile))
		}
	}
	if len(list) == 0 {
		list = []string{transport.LocalTarget}
	}
	seen := map[string]bool{}
	for _, t := range list {
		switch {
		case !seen[t]:
			seen[t] = true
			out = append(out, t)
		case !slices.Contains(repeated, t):
			repeated = append(repeated, t)
		}
	}
	return out, repeated, nil
}

func (a *app) storeRoot() (lock.Root, error) {
	s := a.g.root
	if s == "" {
		s = os.Getenv("HOIST_ROOT")
	}
	if s == "" {
		return lock.DefaultRoot, nil
	}
	r, err := lock.ParseRoot(s)
	if err != nil {
		return r, usageErr("--root %q: %v", s, err)
	}
	return r, nil
}

func (a *app) sshConfig(target string) (transport.SSHConfig, error) {
	cfg := transport.SSHConfig{
		Target:           target,
		IdentityFiles:    a.g.identities,
		KnownHostsFile:   a.g.knownHosts,
		AcceptNewHostKey: a.g.acceptNew,
		Logger:           a.hostLogger(),
		Passphrase:       a.passphrase(),
	}
	for _, o := range a.g.sshOpts {
		k, v, ok := strings.Cut(o, "=")
		if !ok {
			return cfg, usageErr("-o %q: want Key=Value", o)
		}
		// The options hoist reads itself are checked here, for a usage
		// error; every option goes to OpenSSH's resolution (ssh -G), which
		// says what it makes of one it does not know, and what hoist uses
		// comes from its answer.
		var err error
		switch strings.ToLower(k) {
		case "connecttimeout", "serveraliveinterval":
			if n, nerr := strconv.Atoi(v); nerr != nil || n < 0 {
				err = usageErr("-o %s: want whole seconds", o)
			}
		case "serveralivecountmax":
			if n, nerr := strconv.Atoi(v); nerr != nil || n < 1 {
				err = usageErr("-o %s: want a positive number", o)
			}
		}
		if err != nil {
			return cfg, err
		}
	}
	return cfg, nil
}

// configOptions are the command line's ssh flags for target, in the order
// given, with the target's place among them.
func (a *app) configOptions(target string) transport.ConfigOptions {
	at, ok := a.g.targetAt[target]
	if !ok {
		at = a.g.targetAt[""] // from --hosts-file
	}
	return transport.ConfigOptions{File: a.g.sshFile, Port: a.g.port, User: a.g.login, Jump: a.g.jump,
		Options: a.g.sshOpts, Args: slices.Clone(a.g.sshArgs), TargetAt: at}
}

func (a *app) connect(ctx context.Context, target string) (transport.Transport, error) {
	if target == transport.LocalTarget {
		return &transport.Local{}, nil
	}
	cfg, err := a.resolve(ctx, target, nil)
	if err != nil {
		return nil, err
	}
	t, err := a.dial(ctx, target, cfg)
	if err != nil {
		return nil, err // not a nil *SSH in an interface
	}
	return t, nil
}

// dial connects to target as resolve resolved it.
func (a *app) dial(ctx context.Context, target string, cfg transport.SSHConfig) (*transport.SSH, error) {
	if cfg.InsecureIgnoreHostKey && !cfg.AcceptNewHostKey {
		// Said even with -q: nobody checks who answers.
		a.con.line(fmt.Sprintf("hoist: %s: WARNING: StrictHostKeyChecking no: a host key no known_hosts file lists is accepted unchecked; anyone on the path can pose as this host",
			printable(transport.RedactTarget(target))))
	}
	// A connection the configuration keeps (ControlMaster, ControlPath,
	// ControlPersist) goes through hoist's master (docs/connections.md).
	if cfg.Control.Path != "" {
		return transport.DialShared(ctx, cfg, a.masterStarter(target, cfg))
	}
	return transport.DialSSH(ctx, cfg)
}

// resolve is how every command reaches an SSH target: as ssh itself would,
// through the user's OpenSSH configuration (aliases, HostName, Port, User,
// IdentityFile, ProxyJump, ProxyCommand, known_hosts settings) and -F, -J,
// -p, -l, -o. adjust, when set, changes hoist's own settings first, which
// the jump hosts start from too.
func (a *app) resolve(ctx context.Context, target string, adjust func(*transport.SSHConfig)) (transport.SSHConfig, error) {
	cfg, err := a.sshConfig(target)
	if err != nil {
		return cfg, err
	}
	if adjust != nil {
		adjust(&cfg)
	}
	err = transport.ResolveTarget(ctx, target, a.configOptions(target), &cfg)
	return cfg, err
}
