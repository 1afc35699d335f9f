package lock

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/hoistdev/hoist/remote"
	"github.com/hoistdev/hoist/shellcmd"
	"github.com/hoistdev/hoist/transport"
)

// CheckStatus is how a [Check] came out.
type CheckStatus string

// The statuses of a check.
const (
	CheckOK   CheckStatus = "ok"
	CheckWarn CheckStatus = "warn"
	CheckFail CheckStatus = "fail"
)

// Check is one item of a host's checklist ([Lock.Doctor]). Name says what
// it checks (rtt, clock, login, sh, userland, each tool, boot, proc,
// root, paths, space, lock, debris; host when the checks could not run);
// Value is one word for scripts, "" when there is none; Detail says it for
// people; Fix, for an item that is not ok, what to do.
type Check struct {
	Name   string
	Status CheckStatus
	Value  string
	Detail string
	Fix    string
}

// Checkup is what [Lock.Doctor] found on the host.
type Checkup struct {
	// Checks lists the items in the order they were made.
	Checks []Check
	// Lock is the lock as [Lock.Status] would read it (without debris),
	// nil when the host did not say (its store failed the path checks, or
	// the command failed).
	Lock *State
}

// Doctor checks the host for what hoist needs there and changes nothing:
// it creates no store and takes no lock. It measures the round trip and
// compares the host's clock with this machine's, then runs one host
// command (without the path checks that stop every other command, which
// it reports as checks instead) that tries each tool hoist uses the way
// hoist uses it and reads the store root, its paths, its free space and
// the lock. Whatever goes wrong is a check that failed, with its fix: a
// host command that could not run is the check "host".
func (l *Lock) Doctor(ctx context.Context) Checkup {
	var up Checkup
	up.Checks = append(up.Checks, timeChecks(ctx, l.host.Transport())...)
	// The doctor takes no lock and writes no record: it needs the root and
	// the lease to judge a lock by, nothing else.
	p := shellcmd.Params{Root: shellcmd.Root(l.root), Stale: l.assumedLease()}
	r, err := l.exec(ctx, remote.Call{Fragment: shellcmd.Render(shellcmd.OpDoctor, p)})
	var debris []Check
	done := false
	if r != nil {
		for _, v := range r.Verdicts {
			switch v.Verb {
			case shellcmd.VerbCheck:
				c := v.Check()
				up.Checks = append(up.Checks, hostCheck(c))
			case shellcmd.VerbNoStore:
				up.Checks = append(up.Checks, Check{Name: "lock", Status: CheckOK, Value: "nostore", Detail: "free: there is no store yet"})
				up.Lock = &State{}
			case shellcmd.VerbFree:
				up.Checks = append(up.Checks, Check{Name: "lock", Status: CheckOK, Value: "free", Detail: "free"})
				up.Lock = &State{Store: true}
			case shellcmd.VerbLock:
				s := l.state(v.Holder())
				up.Checks = append(up.Checks, lockCheck(s))
				up.Lock = &s
			case shellcmd.VerbDebris:
				p := v.Path()
				debris = append(debris, Check{Name: "debris", Status: CheckWarn, Value: p,
					Detail: p + " was left by an earlier hoist and nothing uses it", Fix: "remove it (rm -r " + p + ")"})
			case shellcmd.VerbError:
				if code, text := v.Failure(); code == shellcmd.CodeLockPath {
					why, path, _ := strings.Cut(text, " ")
					up.Checks = append(up.Checks, Check{Name: "lock", Status: CheckFail, Value: why, Detail: why + " " + path})
				}
			case shellcmd.VerbDoctor:
				done = true
			}
		}
	}
	up.Checks = append(up.Checks, debris...)
	switch {
	case err != nil:
		up.Checks = append(up.Checks, Check{Name: "host", Status: CheckFail, Detail: err.Error(), Fix: hostFix(err)})
	case !done:
		up.Checks = append(up.Checks, Check{Name: "host", Status: CheckFail,
			Detail: fmt.Sprintf("the host command ended (exit %d) before its checks did: %s", r.Status, r.NoiseLine()),
			Fix:    "run hoist -v doctor to see the host command; hoist needs a POSIX /bin/sh on the host"})
	}
	for i, c := range up.Checks {
		if c.Status != CheckOK && c.Fix == "" {
			up.Checks[i].Fix = fixFor(c)
		}
	}
	return up
}

// hostCheck is a CHECK line as a Check: a status the host should not
// have said fails, saying what it was.
func hostCheck(c shellcmd.CheckLine) Check {
	ck := Check{Name: c.Name, Status: CheckStatus(c.Status), Value: c.Value, Detail: c.Detail}
	switch ck.Status {
	case CheckOK, CheckWarn, CheckFail:
	default:
		ck.Status = CheckFail
		ck.Detail = "the host said " + strconv.Quote(c.Status) + ": " + cmp.Or(c.Detail, "-")
	}
	return ck
}

// lockCheck is the held lock s as a check.
func lockCheck(s State) Check {
	c := Check{Name: "lock", Status: CheckOK, Value: "held"}
	token := noRecord // as Break names a lock without a readable record
	if s.RecordOK {
		token = s.Record.Token
	}
	c.Detail = fmt.Sprintf("held by %s; token %s; %s", s.Describe(), token, s.Reason())
	if p := s.Process(); p != "" && s.Why == "" {
		c.Detail += "; " + p
	}
	switch {
	case s.Stealable():
		c.Status, c.Value = CheckWarn, string(s.Why)
		c.Fix = "nobody can be holding it: the next command takes it over, or remove it now with hoist lock break"
	case !s.AgeKnown || !s.RecordOK:
		c.Status = CheckWarn
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
