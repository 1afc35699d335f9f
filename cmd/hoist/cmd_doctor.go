package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"net"
	"os"
	"os/user"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/hoistdev/hoist/cmd/hoist/output"
	"github.com/hoistdev/hoist/lock"
	"github.com/hoistdev/hoist/remote"
	"github.com/hoistdev/hoist/shellcmd"
	"github.com/hoistdev/hoist/transport"
)

func (a *app) doctorCommand() *cobra.Command {
	return &cobra.Command{
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

It changes nothing on the host: it creates no store and takes no lock.
It exits 1 when any item fails.`,
		Example: `  hoist -H deploy@web1 doctor
  hoist -H web1,web2 --root /srv/hoist doctor --json`,
		Args: noArgs,
		RunE: func(*cobra.Command, []string) error {
			return a.stoppable(func(ctx context.Context) error { return a.eachTarget(ctx, a.doctorHost) })
		},
	}
}

// noValue is what the doctor shows, in its table and in --json, for an
// item or a target field that has no value.
const noValue = "-"

// The statuses of a check.
const (
	checkOK   = "ok"
	checkWarn = "warn"
	checkFail = "fail"
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
func (a *app) doctorHost(ctx context.Context, target string, root shellcmd.Root) result {
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
func (a *app) doctorLock(t transport.Transport, root shellcmd.Root) *lock.Lock {
	h := remote.New(t)
	h.Logger = a.hostLogger()
	return lock.New(h, root)
}

// doctor runs the checks on a connected host, after the target's own.
func (a *app) doctor(ctx context.Context, l *lock.Lock, tg doctorTarget, tc check) result {
	t := l.Host().Transport()
	checks := []check{tc, authCheck(tg)}
	checks = append(checks, timeChecks(ctx, t)...)
	hc, lockJSON := hostChecks(ctx, l)
	checks = append(checks, hc...)
	r := report(checks, tg)
	r.json.(*output.Doctor).Lock = lockJSON
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
		if c.Fix == "" && c.Status != checkOK {
			c.Fix = doctorFix(*c)
		}
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

// timeChecks are the round-trip time and the host's clock, read with one
// trivial command.
func timeChecks(ctx context.Context, t transport.Transport) []check {
	rtt := linkRTT(t)
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	var out, errb bytes.Buffer
	begin := time.Now()
	status, err := t.Run(ctx, transport.Request{Command: "date +%s.%N", Stdout: &out, Stderr: &errb})
	end := time.Now()
	took := end.Sub(begin)

	rc := check{Name: "rtt", Status: checkOK, Value: noValue}
	switch {
	case rtt > 0:
		rc.Value = round(rtt).String()
		rc.Detail = fmt.Sprintf("%s round trip (ssh keepalive)", round(rtt))
		if rtt > time.Second {
			rc.Status = checkWarn
			rc.Detail += ": a slow link; every host command costs at least one"
		}
	case isLocal(t):
		rc.Detail = "local: no network"
	default:
		rc.Detail = "the round trip could not be measured"
	}
	if err == nil {
		rc.Detail += fmt.Sprintf("; a trivial command takes %s", round(took))
	}

	cc := check{Name: "clock", Status: checkWarn, Value: noValue}
	hostTime, resolution, ok := parseHostTime(out.String())
	switch {
	case err != nil:
		cc.Detail = "cannot read the host's clock: " + err.Error()
	case status != 0 || !ok:
		cc.Detail = fmt.Sprintf("cannot read the host's clock: date +%%s exited %d: %s", status,
			firstLine(strings.TrimSpace(out.String()+" "+errb.String())))
	default:
		// The host read its clock somewhere between begin and end: at the
		// middle, give or take half the time, and the resolution of what
		// it printed.
		mid := begin.Add(took / 2)
		skew := hostTime.Add(resolution / 2).Sub(mid)
		unc := took/2 + resolution/2
		cc.Value = fmt.Sprintf("%+.3fs", skew.Seconds())
		cc.Status = checkOK
		switch abs := time.Duration(math.Abs(float64(skew))); {
		case abs <= unc:
			cc.Detail = fmt.Sprintf("the host's clock agrees with this machine's (%+.3fs ± %.3fs)", skew.Seconds(), unc.Seconds())
		default:
			way := "ahead of"
			if skew < 0 {
				way = "behind"
			}
			cc.Detail = fmt.Sprintf("the host's clock is %.3fs %s this machine's (± %.3fs)", abs.Seconds(), way, unc.Seconds())
			if abs-unc > 5*time.Second {
				cc.Status = checkWarn
			}
		}
	}
	return []check{rc, cc}
}

// linkRTT is the connection's round-trip time: measured when it was made
// (with -v), else the fastest of three keepalive requests. Zero when not
// known.
func linkRTT(t transport.Transport) time.Duration {
	s, ok := t.(*transport.SSH)
	if !ok {
		return 0
	}
	if d := s.RTT(); d > 0 {
		return d
	}
	d, _ := s.RoundTrip(3)
	return d
}

func isLocal(t transport.Transport) bool {
	_, ok := t.(*transport.Local)
	return ok
}

var hostTimeRE = regexp.MustCompile(`(?m)^([0-9]+)(?:\.([0-9]{9}))?`)

// parseHostTime reads what date +%s.%N printed: seconds and nanoseconds
// (GNU), or seconds and a literal %N (busybox, BSD), whose resolution is a
// second. The last such line counts: a login script may print before it.
func parseHostTime(out string) (t time.Time, resolution time.Duration, ok bool) {
	m := hostTimeRE.FindAllStringSubmatch(out, -1)
	if len(m) == 0 {
		return time.Time{}, 0, false
	}
	last := m[len(m)-1]
	sec, err := strconv.ParseInt(last[1], 10, 64)
	if err != nil {
		return time.Time{}, 0, false
	}
	if last[2] == "" {
		return time.Unix(sec, 0), time.Second, true
	}
	ns, _ := strconv.ParseInt(last[2], 10, 64)
	return time.Unix(sec, ns), time.Microsecond, true
}

func round(d time.Duration) time.Duration {
	switch {
	case d >= time.Second:
		return d.Round(time.Millisecond)
	case d >= time.Millisecond:
		return d.Round(10 * time.Microsecond)
	}
	return d.Round(time.Microsecond)
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	if s == "" {
		return "no output"
	}
	return s
}

// hostChecks runs the doctor's one host command: the checks it says, and
// the lock (also as lock status shows it in --json).
func hostChecks(ctx context.Context, l *lock.Lock) ([]check, *output.Lock) {
	fr := shellcmd.Render(shellcmd.OpDoctor, shellcmd.Params{Root: l.Root(), Stale: l.Stale})
	// Without h_setup, which ends a command on a store that fails its
	// checks: the doctor reports them instead.
	fr.Main = "h_op_doctor\n"
	r, err := l.Host().Exec(ctx, remote.Call{Fragment: fr})
	var checks, debris []check
	var lockJSON *output.Lock
	done := false
	if r != nil {
		for _, v := range r.Verdicts {
			switch v.Verb {
			case shellcmd.VerbCheck:
				c := v.Check()
				checks = append(checks, check{Name: c.Name, Status: c.Status, Value: orDash(c.Value), Detail: orDash(c.Detail)})
			case shellcmd.VerbNoStore:
				checks = append(checks, check{Name: "lock", Status: checkOK, Value: "nostore", Detail: "free: there is no store yet"})
				lockJSON = stateJSON(lock.State{})
			case shellcmd.VerbFree:
				checks = append(checks, check{Name: "lock", Status: checkOK, Value: "free", Detail: "free"})
				lockJSON = stateJSON(lock.State{Store: true})
			case shellcmd.VerbLock:
				s := l.StateOf(v.Holder())
				checks = append(checks, lockCheck(s))
				lockJSON = stateJSON(s)
			case shellcmd.VerbDebris:
				p := v.Path()
				debris = append(debris, check{Name: "debris", Status: checkWarn, Value: p,
					Detail: p + " was left by an earlier hoist and nothing uses it", Fix: "remove it (rm -r " + p + ")"})
			case shellcmd.VerbError:
				if code, text := v.Failure(); code == shellcmd.CodeLockPath {
					why, path, _ := strings.Cut(text, " ")
					checks = append(checks, check{Name: "lock", Status: checkFail, Value: why, Detail: why + " " + path})
				}
			case shellcmd.VerbDoctor:
				done = true
			}
		}
	}
	checks = append(checks, debris...)
	for i, c := range checks {
		switch c.Status {
		case checkOK, checkWarn, checkFail:
		default:
			checks[i].Status = checkFail
			checks[i].Detail = "the host said " + strconv.Quote(c.Status) + ": " + c.Detail
		}
	}
	switch {
	case err != nil:
		checks = append(checks, check{Name: "host", Status: checkFail, Value: noValue, Detail: err.Error(), Fix: hostFix(err)})
	case !done:
		checks = append(checks, check{Name: "host", Status: checkFail, Value: noValue,
			Detail: fmt.Sprintf("the host command ended (exit %d) before its checks did: %s", r.Status, r.NoiseLine()),
			Fix:    "run hoist -v doctor to see the host command; hoist needs a POSIX /bin/sh on the host"})
	}
	return checks, lockJSON
}

func lockCheck(s lock.State) check {
	c := check{Name: "lock", Status: checkOK, Value: "held"}
	token := "-" // as lock break --token names a lock without a readable record
	if s.RecordOK {
		token = s.Record.Token
	}
	c.Detail = fmt.Sprintf("held by %s; token %s; %s", s.Describe(), token, s.Reason())
	if p := s.Process(); p != "" && s.Why == "" {
		c.Detail += "; " + p
	}
	switch {
	case s.Stealable():
		c.Status, c.Value = checkWarn, string(s.Why)
		c.Fix = "nobody can be holding it: the next command takes it over, or remove it now with hoist lock break"
	case !s.AgeKnown || !s.RecordOK:
		c.Status = checkWarn
		c.Fix = "see hoist lock status; if its holder is gone, remove it with hoist lock break --force --token " + token
	}
	return c
}

// hostFix says what to do when the doctor's host command failed.
func hostFix(err error) string {
	switch {
	case errors.Is(err, remote.ErrNoShell):
		return "hoist needs a POSIX /bin/sh on the host: install one (dash, bash, busybox)"
	case errors.Is(err, transport.ErrUnknownOutcome):
		return "the connection was lost; the doctor changes nothing, so run it again"
	case errors.Is(err, shellcmd.ErrVerdict):
		return "the host's reply did not parse: run hoist -v doctor, and report it"
	}
	return "run hoist -v doctor to see what happened"
}

// doctorFix says what to do about an item that is not ok.
func doctorFix(c check) string {
	switch c.Name {
	case "login":
		return "make sure the login has a passwd entry"
	case "sh":
		return "hoist is tested with dash, bash, busybox ash and mksh as /bin/sh; others that are POSIX should work"
	case "userland":
		return "hoist is tested with GNU coreutils, busybox and BSD userlands; install GNU coreutils or busybox"
	case "stat":
		return "install GNU coreutils or busybox (stat -c %Y), so a lock whose holder vanished frees when its lease runs out"
	case "sha256":
		return "install GNU coreutils (sha256sum) or perl (shasum): push verifies every upload with it"
	case "tar":
		return "install tar: push unpacks every upload with it"
	case "sleep":
		return "install GNU coreutils or busybox (sleep 0.1), so waits poll every 100 ms"
	case "mv":
		if c.Value == noValue {
			return "install GNU coreutils or busybox (mv -T): activate and rollback rename current with it"
		}
	case "touch":
		if c.Value == noValue {
			return "install GNU coreutils or busybox (touch -c): heartbeats renew leases with it"
		}
	case "setsid":
		return "install util-linux (setsid), so hoist run can stop everything a command started"
	case "df":
		return "install a df that takes -P (GNU coreutils, busybox)"
	case "find":
		return "install GNU findutils or busybox (find -mmin), so gc removes abandoned uploads"
	case "boot":
		return "give the host a machine id (systemd-machine-id-setup) and a readable /proc/sys/kernel/random/boot_id"
	case "proc":
		return "mount the login's own /proc (in a container, its PID namespace's), so hoist can tell that a holder has exited"
	case "clock":
		if c.Value == noValue {
			return "hoist reads ages with date +%s on the host: install GNU coreutils or busybox"
		}
		return "sync the host's clock (NTP: timedatectl set-ntp true, or chrony): lock records carry the host's time"
	case "rtt":
		return "a closer network path or a jump host nearer the host helps; hoist works either way"
	case "root":
		switch c.Value {
		case "nohome":
			return (&lock.HostError{Code: shellcmd.CodeNoHome}).Error()
		case "unsearchable":
			return "let the login search the directories above the root (chmod o+x), or choose another --root"
		case "notdir":
			return "move what is in the way, or choose another --root"
		case "unwritable":
			return "create the root (mkdir, then chown it to the login), or choose another --root"
		}
	case "paths":
		return (&lock.HostError{Code: shellcmd.CodePath, Detail: c.Detail}).Error()
	case "space":
		return "free space on that filesystem (hoist gc drops old runtimes), or choose another --root"
	case "lock":
		if c.Status == checkFail {
			return (&lock.HostError{Code: shellcmd.CodeLockPath, Detail: c.Detail}).Error()
		}
		if c.Value == noValue {
			return "fix the store's paths first (see paths)"
		}
		return "see hoist lock status"
	}
	return ""
}
