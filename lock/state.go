package lock

import (
	"fmt"
	"strings"
	"time"

	"github.com/hoistdev/hoist/shellcmd"
)

// State is the lock as the host saw it. The rules that decide whether it may
// be taken are applied on the host (shellcmd/sh/rules.sh); Why carries the
// host's verdict, and the rest is for people.
type State struct {
	// Store reports whether the store directory exists.
	Store bool
	// Locked reports whether the lock directory exists.
	Locked bool
	// Record is the owner record; RecordOK is false when it is missing or
	// does not parse, and Raw holds its first line as found.
	Record   Record
	RecordOK bool
	Raw      string
	// Age is the time since the lock's record last changed, by the host's
	// clock; AgeKnown is false when the host could not tell.
	Age      time.Duration
	AgeKnown bool
	// Why is the rule that makes the lock stealable (or RuleForced, for a
	// forced break), "" when none does.
	Why Rule
	// AssumedLease is the lease assumed for a record that names none
	// ([Lock.AssumedLease]).
	AssumedLease time.Duration
	// Lease is the lease the host applies: the record's, or AssumedLease.
	Lease time.Duration
	// Proc is what the host found about the holder process the record
	// names (the exited rule), "" when the host did not look.
	Proc HolderProc
	// Host is the host's facts (its boot evidence), nil when unknown.
	Host *Facts
	// Debris lists paths an earlier version left that nothing uses any
	// more and that should be removed (status only).
	Debris []string
	// Unfinished lists the rollout records the store keeps with no done
	// (status only): status names them and changes nothing.
	Unfinished []shellcmd.UnfinishedRecord
}

// Rule names what lets anyone take a held lock, as the host judged it
// (shellcmd/sh/rules.sh, h_stealable); the strings are the host's, and
// those of --json.
type Rule string

// The rules, and a forced break.
const (
	// RuleBoot: the lock was recorded on a previous boot of this machine
	// (another boot_id, or a PID namespace whose PID 1 was replaced).
	RuleBoot Rule = "boot"
	// RuleExited: its holder process, and everything it started, are gone.
	RuleExited Rule = "exited"
	// RuleStale: it was not renewed for its lease.
	RuleStale Rule = "stale"
	// RuleForced: a forced break, of the lock with the token given; no
	// rule applies.
	RuleForced Rule = "forced"
)

// HolderProc is what the host found about the process that holds a lock
// (the exited rule, h_exited); the strings are the host's, and those of
// --json.
type HolderProc string

// What the exited rule can find.
const (
	ProcAlive  HolderProc = "alive"  // the holder process runs
	ProcExited HolderProc = "exited" // it and everything it started are gone
	// ProcNone: a manual hold, or a record that names no process.
	ProcNone HolderProc = "none"
	// ProcBoot, ProcPIDNS, ProcUID: held on another boot, in another PID
	// namespace, or by another login; the rule does not apply.
	ProcBoot  HolderProc = "boot"
	ProcPIDNS HolderProc = "pidns"
	ProcUID   HolderProc = "uid"
	// ProcUnknown: /proc could not tell, here or where the record was
	// written.
	ProcUnknown HolderProc = "unknown"
)

// Stealable reports whether a rule lets anyone take the lock now.
func (s State) Stealable() bool {
	return s.Why == RuleStale || s.Why == RuleBoot || s.Why == RuleExited
}

// ExpiresIn is the time until the lease runs out, by the host's clock, if
// the holder does not renew it; ok is false when the age is unknown.
func (s State) ExpiresIn() (d time.Duration, ok bool) {
	if !s.AgeKnown {
		return 0, false
	}
	// Ages are whole seconds, and a lock is stale once its age is above
	// its lease.
	return max(s.Lease+time.Second-s.Age, 0), true
}

// BootMatch reports whether the record was written on the host's current
// boot; known is false when either side is unknown or the record is an
// earlier version's.
func (s State) BootMatch() (match, known bool) {
	if !s.RecordOK {
		return false, false
	}
	return shellcmd.Record(s.Record).SameBoot(s.Host.wire())
}

// stateFrom is the State of the holder h a verdict names.
func stateFrom(h shellcmd.Holder, assumed time.Duration, facts *Facts) State {
	s := State{Store: true, Locked: true, AssumedLease: assumed, Lease: assumed, Host: facts,
		Age: h.Age, AgeKnown: h.AgeKnown, Why: Rule(h.Why), Proc: HolderProc(h.Proc), Raw: h.Raw, Record: Record(h.Record), RecordOK: h.RecordOK}
	if s.RecordOK {
		s.Lease = s.Record.lease(assumed)
	}
	return s
}

// Describe names the holder for a person: who, doing what, since when. What
// came from the host is made safe to print (shellcmd.Printable).
func (s State) Describe() string {
	if !s.Locked {
		return "nobody"
	}
	var b strings.Builder
	if s.RecordOK {
		r := s.Record
		who := r.Who
		if who == "" {
			who = "unknown"
		}
		b.WriteString(shellcmd.Printable(who))
		if r.Command != "" {
			fmt.Fprintf(&b, " (%s)", shellcmd.Printable(r.Command))
		}
		if r.Message != "" {
			fmt.Fprintf(&b, " %q", r.Message)
		}
		fmt.Fprintf(&b, " since %s", r.Since.Local().Format("2006-01-02 15:04:05"))
	} else if s.Raw == "" {
		b.WriteString("an owner that left no record")
	} else {
		b.WriteString("an owner whose record cannot be read")
	}
	if s.AgeKnown {
		fmt.Fprintf(&b, ", renewed %s ago", s.Age)
	}
	return b.String()
}

// Reason explains, in a few words, whether and why the lock may be taken,
// and when a waiter would get in.
func (s State) Reason() string {
	switch {
	case !s.Locked:
		return "free"
	case s.Why == RuleBoot:
		return shellcmd.Printable(s.bootReason())
	case s.Why == RuleExited:
		return "holder exited: the host process that held it, and everything it started, are gone"
	case s.Why == RuleStale:
		return fmt.Sprintf("stale: not renewed for %s (lease %s)", s.Age, s.Lease)
	case s.Why == RuleForced:
		return "broken by force"
	case !s.AgeKnown:
		return "held: its age cannot be read on the host, so only a reboot or a forced break frees it"
	case !s.RecordOK:
		return fmt.Sprintf("held: record missing or unreadable, so only age counts (stale after %s, untouched for %s)", s.AssumedLease, s.Age)
	}
	left, _ := s.ExpiresIn()
	return fmt.Sprintf("held: lease %s; a waiter gets in when it is released, or in %s if it is not renewed", s.Lease, left)
}

func (s State) bootReason() string {
	r, h := s.Record, s.Host
	if h == nil {
		return "previous boot"
	}
	if r.BootID != h.BootID {
		return fmt.Sprintf("previous boot: recorded on boot %s of this machine, the host is on boot %s", r.BootID, h.BootID)
	}
	return fmt.Sprintf("previous boot: recorded in PID namespace %s whose PID 1 started at %s; that PID 1 now started at %s, so the namespace was replaced", r.PIDNS, r.Init, h.Init)
}

// NSMatch reports whether the record was written in the host's PID
// namespace; known is false when either side is unknown.
func (s State) NSMatch() (match, known bool) {
	if !s.RecordOK {
		return false, false
	}
	return shellcmd.Record(s.Record).SamePIDNS(s.Host.wire())
}

// Process says, for people, what the host found about the holder process
// (the exited rule), or "" when it did not say.
func (s State) Process() string {
	pid := s.Record.HolderPID
	switch s.Proc {
	case ProcAlive:
		return "holder process " + pid + " alive"
	case ProcExited:
		return "holder process " + pid + " exited"
	case ProcNone:
		return "a manual hold: no holder process, only its lease counts"
	case ProcBoot:
		return "holder process on another boot"
	case ProcPIDNS:
		return "holder process in another PID namespace: the host cannot see it"
	case ProcUID:
		return "holder process of another login: the host does not judge it"
	case ProcUnknown:
		return "holder process unknown: /proc cannot tell"
	}
	return ""
}
