package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hoistdev/hoist/lock"
	"github.com/hoistdev/hoist/remote"
	"github.com/hoistdev/hoist/shellcmd"
	"github.com/hoistdev/hoist/store"
	"github.com/hoistdev/hoist/transport"
)

// targets lists the hosts to work on: -H, --hosts-file, else local.
func (a *app) targets() ([]string, error) {
	list := append([]string(nil), a.hosts...)
	if a.hostsFile != "" {
		f, err := os.Open(a.hostsFile)
		if err != nil {
			return nil, usageErr("--hosts-file: %v", err)
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
			return nil, usageErr("--hosts-file: %v", err)
		}
	}
	if len(list) == 0 {
		list = []string{transport.LocalTarget}
	}
	seen := map[string]bool{}
	out := list[:0]
	for _, t := range list {
		if !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	return out, nil
}

func (a *app) storeRoot() (shellcmd.Root, error) {
	s := a.root
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
		IdentityFiles:    a.identities,
		KnownHostsFile:   a.knownHosts,
		AcceptNewHostKey: a.acceptNew,
	}
	for _, o := range a.sshOpts {
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
		default:
			return cfg, usageErr("-o %s: unsupported option (hoist takes ConnectTimeout, ServerAliveInterval, ServerAliveCountMax, User)", k)
		}
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
	return transport.DialSSH(ctx, cfg)
}

// result is what one host came to.
type result struct {
	host string
	err  error
	code int            // exit code; derived from err when zero and err is set
	data string         // a line of data for stdout (not with --json)
	json map[string]any // fields for --json
}

// fleet runs fn on every target, --parallel at a time, each host with its
// own connection, and prints one result per host as it completes. A slow or
// dead host holds up no other. It returns the worst exit code.
func (a *app) fleet(ctx context.Context, fn func(ctx context.Context, l *lock.Lock) result) int {
	targets, err := a.targets()
	if err != nil {
		return a.usage(err)
	}
	root, err := a.storeRoot()
	if err != nil {
		return a.usage(err)
	}
	if _, err := a.sshConfig("x"); err != nil {
		return a.usage(err)
	}
	a.multi = len(targets) > 1
	sem := make(chan struct{}, a.parallel)
	var wg sync.WaitGroup
	var mu sync.Mutex
	worst := exitOK
	for _, t := range targets {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			r := a.onHost(ctx, t, root, fn)
			mu.Lock()
			defer mu.Unlock()
			a.report(r)
			worst = worse(worst, r.code)
		}()
	}
	wg.Wait()
	return worst
}

func (a *app) onHost(ctx context.Context, target string, root shellcmd.Root, fn func(context.Context, *lock.Lock) result) result {
	t, err := a.connect(ctx, target)
	if err != nil {
		return a.finish(result{host: target, err: err})
	}
	a.debug(t.Target(), "connected")
	defer t.Close()
	l := lock.New(remote.New(t), root)
	l.Owner.Version = version()
	l.Owner.Command = commandLine(a.args)
	l.Owner.Message = a.message
	r := fn(ctx, l)
	r.host = t.Target()
	if f := l.Host().Facts(); f != nil {
		a.debug(r.host, "host facts: boot %s, stat %s, polls every %ss, home %s", f.Boot(), f.Stat, f.Nap, f.Home)
	}
	return a.finish(r)
}

func (a *app) finish(r result) result {
	if r.err != nil && r.code == 0 {
		r.code = exitCode(r.err)
	}
	return r
}

// report prints one host's result: data on stdout, errors on stderr, or one
// JSON object per host.
func (a *app) report(r result) {
	if a.json {
		obj := map[string]any{"host": r.host, "ok": r.err == nil, "exit": r.code}
		for k, v := range r.json {
			obj[k] = v
		}
		if r.err != nil {
			obj["error"] = r.err.Error()
		}
		writeJSON(a.stdout, obj)
		return
	}
	if r.data != "" {
		fmt.Fprintln(a.stdout, printable(r.data))
	}
	if r.err != nil {
		a.clearLive()
		fmt.Fprintf(a.stderr, "hoist: %s: %s\n", r.host, printable(explain(r.err)))
	}
}

// printable makes every line of text safe for a terminal: names, records
// and errors may come from a host or from another user of it, and must not
// carry control sequences (shellcmd.Printable). Line breaks between rows
// stay.
func printable(text string) string {
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		lines[i] = shellcmd.Printable(l)
	}
	return strings.Join(lines, "\n")
}

// exitCode maps an error to the documented exit codes.
func exitCode(err error) int {
	var ue *usageError
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &ue):
		return exitUsage
	case errors.Is(err, transport.ErrUnknownOutcome):
		return exitUnknown
	case errors.Is(err, lock.ErrBusy):
		return exitBusy
	}
	return exitFailure
}

// worse orders exit codes for a fleet: unknown outcome, then failures, then
// busy, then success.
func worse(a, b int) int {
	rank := func(c int) int {
		switch c {
		case exitOK:
			return 0
		case exitBusy:
			return 1
		case exitUnknown:
			return 3
		}
		return 2
	}
	if rank(b) > rank(a) {
		return b
	}
	return a
}

// explain adds what to do to library errors that do not already say it.
func explain(err error) string {
	var busy *lock.BusyError
	var lost *lock.LostError
	switch {
	case errors.Is(err, transport.ErrUnknownOutcome):
		return fmt.Sprintf("%v; the host may still be acting on it and releases the lock by itself; check with hoist lock status", err)
	case errors.As(err, &busy):
		return fmt.Sprintf("%v; wait longer with --wait, or see hoist lock status", err)
	case errors.As(err, &lost):
		return fmt.Sprintf("%v; the hold was taken over (stale, previous boot or broken) and the new holder was left alone", err)
	case errors.Is(err, lock.ErrNoStore):
		return err.Error() + "; nothing was created"
	case errors.Is(err, lock.ErrNotHeld):
		return err.Error() + "; nothing to do"
	case errors.Is(err, lock.ErrNotStealable):
		return err.Error() + "; wait for it, or break it with --force --token TOKEN if you know its holder is gone"
	case errors.Is(err, lock.ErrNotOwner):
		return err.Error() + "; check the token with hoist lock status"
	case errors.Is(err, lock.ErrAbandoned):
		return err.Error() + "; nothing is held"
	case errors.Is(err, store.ErrNotFound):
		return err.Error() + "; see hoist list"
	}
	return err.Error()
}

func commandLine(args []string) string {
	// The record is readable by whoever can read the store: a command run
	// under the lock is named by its program only, since its arguments may
	// carry secrets.
	for i, a := range args {
		if a == "--" && i+2 < len(args) {
			args = append(args[:i+2:i+2], "…")
			break
		}
	}
	s := "hoist " + strings.Join(args, " ")
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}
