package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/user"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/hoistdev/hoist/cmd/hoist/output"
	"github.com/hoistdev/hoist/lock"
	"github.com/hoistdev/hoist/store"
	"github.com/hoistdev/hoist/transport"
)

func (a *app) doctorCommand() *cobra.Command {
	var via string
	c := &cobra.Command{
		Use:   "doctor",
		Short: "check each host for what hoist needs there, changing nothing",
		Long: `doctor connects to each host and reports a checklist, each item OK, WARN or
FAIL, with what to do about each problem:

  target    the target as resolved (the OpenSSH configuration, -F, -J, -o):
            user, host, port, jump or proxy, the identity files (which are
            missing) and the agent; said on stderr before connecting, and
            reported also when the connection fails, with a connect item
            that says why
  auth      the key the host accepted
  rtt       the round-trip time, and how long a trivial command takes
  clock     the host's clock against this machine's, ± half the time the
            reading took
  login     the login shell (the passwd entry, and $SHELL)
  sh        what /bin/sh is: dash, bash, busybox, mksh...
  userland  GNU coreutils, busybox, toybox or BSD
  stat, sha256, tar, gzip, sleep, mv, touch, setsid, df, find
            each tool hoist uses on the host, tried the way hoist uses it
  boot      the machine id and boot id (the previous-boot rule)
  proc      whether /proc is the login's own (the exited rule)
  root      the store root as the host resolves it, its owner and mode
  paths     the checks hoist makes before it touches a store
  space     the free space where the store is or would be
  lock      the store lock, as lock status reads it
  registry  with --via oci://REGISTRY/REPO: whether the host reaches the
            registry as push --via would fetch from it, with which tool
            (curl, wget), and one request's time (TLS verified, with the
            CA of --registry-ca; no credential is handed)

It changes nothing on the host: it creates no store and takes no lock.
It exits 1 when any item fails.`,
		Example: `  hoist -H deploy@web1 doctor
  hoist -H web1,web2 --root /srv/hoist doctor --json
  hoist -H web1,web2 doctor --via oci://registry.example.com/team/app`,
		Args: noArgs,
		RunE: func(*cobra.Command, []string) error {
			if via != "" {
				ref, err := store.ParseOCIRef(via)
				if err != nil {
					return usageErr("--via %v", err)
				}
				reg, err := a.registry()
				if err != nil {
					return err
				}
				a.doctorVia = &registryCheck{ref: ref, reg: reg}
			}
			return a.stoppable(func(ctx context.Context) error { return a.eachTarget(ctx, a.doctorHost) })
		},
	}
	c.Flags().StringVar(&via, "via", "", "also check that each host reaches the registry of `oci://REGISTRY/REPO`, as push --via would fetch from it")
	return c
}

// registryCheck is the registry doctor --via asks each host to reach.
type registryCheck struct {
	ref store.OCIRef
	reg *store.Registry
}

// noValue is what the doctor shows, in its table and in --json, for an
// item or a target field that has no value.
const noValue = "-"

// The statuses of a check.
const (
	checkOK   = string(lock.CheckOK)
	checkWarn = string(lock.CheckWarn)
	checkFail = string(lock.CheckFail)
)

// check is one item of the checklist; doctorTarget is the target as
// resolved (their --json form).
type (
	check        = output.Check
	doctorTarget = output.Target
)

// doctorHost checks one target: it resolves it, says how it will be
// reached, connects, and runs the checks. A target that cannot be resolved
// or reached is reported all the same, with what failed.
func (a *app) doctorHost(ctx context.Context, target string, root lock.Root) result {
	if target == transport.LocalTarget {
		tg := localTarget()
		r := a.doctor(ctx, a.doctorLock(&transport.Local{}, root), tg, targetCheck(target, tg))
		r.host = target
		return r
	}
	name := transport.RedactTarget(target)
	cfg, err := a.resolve(ctx, target, nil)
	if err != nil {
		tg := doctorTarget{User: noValue, Host: name, Port: noValue, Jump: noValue, Identity: noValue, Missing: []string{}, Agent: noValue, Key: noValue}
		return unreached(name, tg, err, check{Name: "target", Status: checkFail, Value: name, Detail: err.Error(),
			Fix: "check the OpenSSH configuration for " + name + " (ssh -G " + name + ")"})
	}
	tg := resolvedTarget(cfg)
	tc := targetCheck(name, tg)
	a.say(name, "connecting: %s", strings.TrimPrefix(tc.Detail, name+": "))
	t, err := a.dial(ctx, target, cfg)
	if err != nil {
		what, todo, _ := strings.Cut(explain(err), "; ")
		return unreached(name, tg, err, tc, check{Name: "connect", Status: checkFail, Value: noValue, Detail: what, Fix: todo})
	}
	defer t.Close()
	tg.Key = orDash(t.Reached().Key)
	r := a.doctor(ctx, a.doctorLock(t, root), tg, tc)
	r.host = t.Target()
	return r
}

// doctorLock is the store's lock on t, to read: the doctor takes none.
func (a *app) doctorLock(t transport.Transport, root lock.Root) *lock.Lock {
	l := lock.New(t, root)
	l.Logger = a.hostLogger()
	return l
}

// doctor runs the checks on a connected host (the library's, Lock.Doctor),
// after the target's own.
func (a *app) doctor(ctx context.Context, l *lock.Lock, tg doctorTarget, tc check) result {
	checks := []check{tc, authCheck(tg)}
	up := l.Doctor(ctx)
	for _, c := range up.Checks {
		checks = append(checks, check{Name: c.Name, Status: string(c.Status), Value: orDash(c.Value), Detail: orDash(c.Detail), Fix: c.Fix})
	}
	if rc := a.doctorVia; rc != nil {
		ck, err := store.New(l).RegistryCheck(ctx, rc.reg, rc.ref)
		if err != nil {
			ck = lock.Check{Name: "registry", Status: lock.CheckFail, Value: noValue, Detail: err.Error(), Fix: "run hoist doctor again"}
		}
		checks = append(checks, check{Name: ck.Name, Status: string(ck.Status), Value: orDash(ck.Value), Detail: orDash(ck.Detail), Fix: ck.Fix})
	}
	r := report(checks, tg)
	if up.Lock != nil {
		r.json.(*output.Doctor).Lock = stateJSON(*up.Lock)
	}
	return r
}

// unreached is the report on a target that was not reached: the checks
// made so far, and err, why not, as the host's error.
func unreached(name string, tg doctorTarget, err error, checks ...check) result {
	r := report(checks, tg)
	r.host, r.err = name, err
	return r
}

// report is the checklist of one host, as text and JSON; it fails when a
// check failed.
func report(checks []check, tg doctorTarget) result {
	var b strings.Builder
	counts := map[string]int{}
	var failed []string
	for i := range checks {
		c := &checks[i]
		counts[c.Status]++
		if c.Status == checkFail {
			failed = append(failed, c.Name)
		}
		fmt.Fprintf(&b, "%-4s  %-8s  %s\n", strings.ToUpper(c.Status), printable(c.Name), printable(c.Detail))
		if c.Fix != "" {
			fmt.Fprintf(&b, "      %-8s  fix: %s\n", "", printable(c.Fix))
		}
	}
	fmt.Fprintf(&b, "%d ok, %d warn, %d fail", counts[checkOK], counts[checkWarn], counts[checkFail])
	r := result{data: b.String(), table: true, json: &output.Doctor{
		Target: tg, Checks: checks,
		Summary: output.Summary{OK: counts[checkOK], Warn: counts[checkWarn], Fail: counts[checkFail]},
	}}
	if n := len(failed); n > 0 {
		what := "checks"
		if n == 1 {
			what = "check"
		}
		r.err = fmt.Errorf("%d %s failed: %s", n, what, strings.Join(failed, ", "))
	}
	return r
}

// localTarget is the local target: this machine, as the current user.
func localTarget() doctorTarget {
	tg := doctorTarget{User: noValue, Host: transport.LocalTarget, Port: noValue, Jump: noValue, Identity: noValue, Missing: []string{}, Agent: noValue, Key: noValue}
	if u, err := user.Current(); err == nil {
		tg.User = u.Username
	}
	return tg
}

// resolvedTarget is how cfg reaches the host.
func resolvedTarget(cfg transport.SSHConfig) doctorTarget {
	tg := doctorTarget{User: cfg.User, Host: cfg.Target, Port: "22", Jump: orDash(cfg.Via), Identity: noValue, Missing: []string{}, Agent: noValue, Key: noValue}
	if at := strings.LastIndex(tg.Host, "@"); at >= 0 {
		if tg.User == "" {
			tg.User = tg.Host[:at]
		}
		tg.Host = tg.Host[at+1:]
	}
	if host, port, err := net.SplitHostPort(tg.Host); err == nil {
		tg.Host, tg.Port = host, port
	}
	if tg.User == "" {
		if u, err := user.Current(); err == nil {
			tg.User = u.Username
		}
	}
	// The files hoist will try: -i's, else the configuration's (the
	// default names only when neither names one, shown as "-").
	var files []string
	if len(cfg.IdentityFiles) > 0 || len(cfg.ConfigIdentityFiles) > 0 {
		files = cfg.IdentityFilesToTry()
		tg.Identity = strings.Join(files, ",")
	}
	for _, f := range files {
		if _, err := os.Stat(f); err != nil {
			tg.Missing = append(tg.Missing, f)
		}
	}
	switch sock := cfg.IdentityAgent; {
	case cfg.NoAgent || sock == "none":
	case sock != "" && sock != "SSH_AUTH_SOCK":
		tg.Agent = sock
	default:
		tg.Agent = orDash(os.Getenv("SSH_AUTH_SOCK"))
	}
	return tg
}

func targetCheck(name string, tg doctorTarget) check {
	if tg.Host == transport.LocalTarget {
		return check{Name: "target", Status: checkOK, Value: transport.LocalTarget,
			Detail: fmt.Sprintf("local: this machine as %s, through /bin/sh; no ssh", tg.User)}
	}
	ids := "no identity file (none of the default ~/.ssh/id_* exists)"
	if tg.Identity != noValue {
		files := strings.Split(tg.Identity, ",")
		for i, f := range files {
			if slices.Contains(tg.Missing, f) {
				files[i] += " (missing)"
			}
		}
		ids = "identity files " + strings.Join(files, ", ")
	}
	agent := "no ssh-agent"
	if tg.Agent != noValue {
		agent = "the keys of ssh-agent at " + tg.Agent
	}
	via := "directly"
	if tg.Jump != noValue {
		via = "via " + tg.Jump
	}
	c := check{Name: "target", Status: checkOK, Value: name,
		Detail: fmt.Sprintf("%s: user %s, host %s, port %s; %s; %s; %s", name, tg.User, tg.Host, tg.Port, via, ids, agent)}
	if len(tg.Missing) > 0 {
		c.Status = checkWarn
		c.Fix = "create the missing identity files, or name the ones to use (-i, IdentityFile)"
	}
	return c
}

func authCheck(tg doctorTarget) check {
	switch {
	case tg.Host == transport.LocalTarget:
		return check{Name: "auth", Status: checkOK, Value: noValue, Detail: "none: the target is this machine"}
	case tg.Key == noValue:
		return check{Name: "auth", Status: checkOK, Value: "none", Detail: "the host let the login in without a key"}
	}
	return check{Name: "auth", Status: checkOK, Value: "publickey", Detail: "public key " + tg.Key + ", accepted by the host"}
}
