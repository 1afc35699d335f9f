package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hoistdev/hoist/shellcmd"
	"github.com/hoistdev/hoist/transport"
)

// targets lists the hosts to work on: -H, --hosts-file, else local, in
// the order given and without repeats. A target goes to the transport as
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
		for sc.Scan() {
			line := strings.TrimSpace(sc.Text())
			if line != "" && !strings.HasPrefix(line, "#") {
				list = append(list, splitList(line)...)
			}
		}
		if err := sc.Err(); err != nil {
			return nil, nil, usageErr("--hosts-file: %v", err)
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

func (a *app) storeRoot() (shellcmd.Root, error) {
	s := a.g.root
	if s == "" {
		s = os.Getenv("HOIST_ROOT")
	}
	if s == "" {
		return shellcmd.DefaultRoot, nil
	}
	r, err := shellcmd.ParseRoot(s)
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
		seconds := func() (time.Duration, error) {
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 {
				return 0, usageErr("-o %s: want whole seconds", o)
			}
			return time.Duration(n) * time.Second, nil
		}
		var err error
		switch strings.ToLower(k) {
		case "connecttimeout":
			cfg.DialTimeout, err = seconds()
			cfg.HandshakeTimeout = cfg.DialTimeout
		case "serveraliveinterval":
			cfg.KeepaliveInterval, err = seconds()
		case "serveralivecountmax":
			var n int
			if n, err = strconv.Atoi(v); err != nil || n < 1 {
				err = usageErr("-o %s: want a positive number", o)
			}
			cfg.KeepaliveMaxMissed = n
		case "user":
			cfg.User = v
		}
		// Every option also goes to OpenSSH's resolution (ssh -G),
		// which says what it makes of one it does not know.
		if err != nil {
			return cfg, err
		}
	}
	return cfg, nil
}

func (a *app) connect(ctx context.Context, target string) (transport.Transport, error) {
	if target == transport.LocalTarget {
		return &transport.Local{}, nil
	}
	cfg, err := a.sshConfig(target)
	if err != nil {
		return nil, err
	}
	// The host as ssh itself would reach it: the user's OpenSSH
	// configuration (aliases, HostName, Port, User, IdentityFile,
	// ProxyJump, ProxyCommand, known_hosts settings) and -F, -J, -p, -l, -o.
	o := transport.ConfigOptions{File: a.g.sshFile, Port: a.g.port, User: a.g.login, Jump: a.g.jump, Options: a.g.sshOpts}
	if err := transport.ResolveTarget(ctx, target, o, &cfg); err != nil {
		return nil, err
	}
	if cfg.InsecureIgnoreHostKey && !cfg.AcceptNewHostKey {
		// Said even with -q: nobody checks who answers.
		a.con.line(fmt.Sprintf("hoist: %s: WARNING: StrictHostKeyChecking no: a host key no known_hosts file lists is accepted unchecked; anyone on the path can pose as this host",
			printable(transport.RedactTarget(target))))
	}
	return transport.DialSSH(ctx, cfg)
}
