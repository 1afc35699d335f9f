package lock

import (
	"time"

	"github.com/hoistdev/hoist/shellcmd"
)

// Record is a lock's owner record, as [State.Record] shows it and
// [Lock.Owner] starts it. The host writes its first fields (token, since,
// the boot evidence, the holder process, the lease) when it creates the
// lock; the client supplies the rest (PID, Who, Version, Command, Message).
// docs/protocol.md gives the line the host keeps.
type Record struct {
	// Format is 2, or 1 for an earlier version's record.
	Format int
	Token  string
	Since  time.Time
	// The boot evidence of the previous-boot rule (see [Facts]); "-"
	// where the host could not read it.
	Machine, BootID, PIDNS, Init string
	// Boot is an earlier version's boot identity (Format 1 only).
	Boot string
	// Lease is the holder's lease: the lock may be taken once its record
	// was not renewed for this long. Zero when the record names none (then
	// the lease assumed for it applies, [Lock.AssumedLease]).
	Lease time.Duration
	// HolderPID and HolderStart name the host process that holds the lock
	// (its pid and its start time in clock ticks after boot), HolderUID its
	// login's uid: the evidence of the exited rule. "" for a manual hold,
	// which no process holds, and for a record that names none.
	HolderPID, HolderStart, HolderUID string
	PID                               int
	Who                               string // user@host of the client
	Version                           string // hoist version of the client
	Command                           string // what the holder is doing
	Message                           string // --message
}

// MaxField bounds each value the client puts in a record (Who, Version,
// Command, Message): longer ones are cut, at a character boundary.
const MaxField = 512

// lease is the lease the host applies to r: its own, or assumed when it
// names none.
func (r Record) lease(assumed time.Duration) time.Duration {
	if r.Lease > 0 {
		return r.Lease
	}
	return assumed
}

// Facts are what a host told about itself, once per connection ([Lock.Facts]):
// the boot evidence of the previous-boot rule and the login. A fact the host
// could not read is "".
type Facts struct {
	// Machine is "<machine-id>:<host name>"; BootID the kernel's boot_id;
	// PIDNS the login's PID namespace (when /proc is its own) and Init the
	// start time of that namespace's PID 1, in clock ticks.
	Machine, BootID, PIDNS, Init string
	// UID is the login's uid; Home its $HOME.
	UID, Home string
}

// factsFrom is the host's facts as the wire layer read them, nil when
// there are none yet.
func factsFrom(f *shellcmd.Facts) *Facts {
	if f == nil {
		return nil
	}
	return &Facts{Machine: f.Machine, BootID: f.BootID, PIDNS: f.PIDNS, Init: f.Init, UID: f.UID, Home: f.Home}
}

// wire is f as the wire layer has it, nil for nil.
func (f *Facts) wire() *shellcmd.Facts {
	if f == nil {
		return nil
	}
	return &shellcmd.Facts{Machine: f.Machine, BootID: f.BootID, PIDNS: f.PIDNS, Init: f.Init, UID: f.UID, Home: f.Home}
}
