package shellcmd

import (
	"embed"
	"fmt"
	"strings"
	"time"

	"al.essio.dev/pkg/shellescape"
)

//go:embed sh/*.sh
var shFiles embed.FS

// The shell functions, in dependency order: those of the lock, and those the
// store adds. Each command carries only the set its operation uses.
var (
	lockLibrary  = load("create", "guard", "steal", "release", "wait", "wrap", "setup", "ops")
	storeLibrary = lockLibrary + load("store", "push", "manage", "gc")
)

var (
	libCore   = load("lib")
	factProbe = load("facts")
)

// load reads sh files and drops comments, indentation and blank lines: the
// script travels in every command line, so it is kept short.
func load(names ...string) string {
	var b strings.Builder
	for _, n := range names {
		data, err := shFiles.ReadFile("sh/" + n + ".sh")
		if err != nil {
			panic(err)
		}
		for line := range strings.SplitSeq(string(data), "\n") {
			line = strings.TrimLeft(line, " \t")
			if line == "" || strings.HasPrefix(line, "#") {
				continue
			}
			b.WriteString(line)
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// Facts are what a host told about itself; cached per connection.
type Facts struct {
	// Boot is the boot identity ("<boot_id>/<PID 1 start time>"), "-" when unknown.
	Boot string
	// Stat is the stat flavour: "gnu" (-c %Y), "bsd" (-f %m) or "none".
	Stat string
	// Nap is the poll interval in seconds, "0.05" or "1" where sleep takes no fractions.
	Nap string
	// Home is $HOME of the login.
	Home string
}

// Prelude starts every host command: HUP and PIPE are ignored for the whole
// command (a client that hangs up cannot cut a release short), globbing is off
// (no value is ever a pattern), the marker is set, and the host's facts are
// either assigned from the cache or probed, which prints a FACTS verdict.
func Prelude(marker string, f *Facts) string {
	var b strings.Builder
	b.WriteString("set -f\ntrap '' HUP PIPE\n")
	assign(&b, "h_marker", marker)
	b.WriteString(libCore)
	if f == nil {
		b.WriteString(factProbe)
	} else {
		assign(&b, "h_boot", f.Boot)
		assign(&b, "h_stat", f.Stat)
		assign(&b, "h_nap", f.Nap)
		assign(&b, "h_home", f.Home)
	}
	return b.String()
}

// Params are the values an operation's fragment needs.
type Params struct {
	Root Root
	// Token is the lock owner token this command acquires with or acts for.
	Token string
	// GuardID names this command's entry in the steal guard; unique per command.
	GuardID string
	// Record is the client's part of the owner record (see [Record.Encode]).
	Record string
	// Wait bounds how long the host waits for the lock.
	Wait time.Duration
	// Stale is the age after which a lock may be stolen (rule 5).
	Stale time.Duration
	// GuardStale is the age after which a guard counts as abandoned.
	GuardStale time.Duration
	// Try makes Acquire one attempt that never creates the store.
	Try bool
	// Force makes Break remove the lock whose token is Token.
	Force bool
	// Argv is the command Run executes.
	Argv []string

	// Store operations.
	ID       string // runtime id
	Name     string // runtime name, recorded at promotion
	Size     int64  // runtime size in bytes, recorded at promotion
	Sum      string // SHA-256 of the uploaded archive
	Activate bool   // switch current to ID after a push
	Unpin    bool   // Pin removes the pin
	Keep     int    // GC keeps this many newest runtimes beyond the protected ones
	DryRun   bool   // GC says its plan and changes nothing
}

// The store layout under a root. Package store documents the whole layout.
const (
	StoreDir = "runtimes"    // <root>/runtimes: the store
	LockName = ".store-lock" // <root>/runtimes/.store-lock: the lock
	RunsDir  = "runs"        // <root>/runs/<token>: scratch of waiting and running commands
)

// DefaultStale is the stale rule: a lock untouched this long may be stolen.
const DefaultStale = 20 * time.Minute

// DefaultGuardStale is the age after which a steal guard counts as abandoned.
const DefaultGuardStale = 30 * time.Second

func (p Params) body(op, library string) string {
	var b strings.Builder
	if p.Root.Home {
		b.WriteString("h_rooth=1\n")
	} else {
		b.WriteString("h_rooth=\n")
	}
	assign(&b, "h_rootp", p.Root.Path)
	b.WriteString("h_storedir=" + StoreDir + " h_lockname=" + LockName + " h_runsdir=" + RunsDir + "\n")
	assign(&b, "h_me", orDash(p.Token))
	assign(&b, "h_gid", orDash(p.GuardID))
	assign(&b, "h_rec", p.Record)
	fmt.Fprintf(&b, "h_wait=%d\nh_stale=%d\nh_gstale=%d\n",
		seconds(p.Wait), seconds(orDefault(p.Stale, DefaultStale)), seconds(orDefault(p.GuardStale, DefaultGuardStale)))
	b.WriteString("h_try=" + flag(p.Try) + "\nh_force=" + flag(p.Force) + "\n")
	assign(&b, "h_id", p.ID)
	assign(&b, "h_name", p.Name)
	assign(&b, "h_sum", p.Sum)
	fmt.Fprintf(&b, "h_size=%d\nh_keep=%d\n", p.Size, p.Keep)
	b.WriteString("h_activate=" + flag(p.Activate) + "\nh_unpin=" + flag(p.Unpin) + "\nh_dry=" + flag(p.DryRun) + "\n")
	if len(p.Argv) > 0 {
		quoted := make([]string, len(p.Argv))
		for i, a := range p.Argv {
			quoted[i] = shellescape.Quote(a)
		}
		b.WriteString("h_cmd() { exec " + strings.Join(quoted, " ") + "; }\n")
	}
	b.WriteString(library)
	b.WriteString("h_setup\nh_op_" + op + "\n")
	return b.String()
}

// Status renders the read-only lock status: NOSTORE, FREE, LOCK AGE WHY
// RECORD, or ERROR lockpath.
func Status(p Params) string { return p.body("status", lockLibrary) }

// Acquire renders a manual acquire that waits on the host up to p.Wait (one
// attempt when zero). Verdicts: HELD and STOLEN while it works, then
// ACQUIRED TOKEN followed, once the client sends "ack", by HOLDING TOKEN; or
// BUSY, NOSTORE (with p.Try), ABANDONED or ERROR.
func Acquire(p Params) string { return p.body("acquire", lockLibrary) }

// Run renders acquire, run p.Argv and release in one command. Verdicts: HELD
// and STOLEN while waiting, ACQUIRED, STARTED, then RELEASED or LOST, then
// EXIT STATUS; or BUSY, ABANDONED or ERROR.
func Run(p Params) string { return p.body("run", lockLibrary) }

// Release renders an owner-checked release of p.Token: RELEASED, LOST
// RECORD (the lock is someone else's), NOTHELD, or ERROR.
func Release(p Params) string { return p.body("release", lockLibrary) }

// Break renders a break: without p.Force only a stealable lock is removed,
// with it only the lock whose token is p.Token. BROKEN WHY AGE RECORD,
// NOTSTALE or NOTOWNER AGE RECORD, FREE, NOSTORE, or ERROR.
func Break(p Params) string { return p.body("break", lockLibrary) }

// PushCheck renders the first command of a push: PRESENT ID when ID is
// promoted and verified (after ACTIVATED, under the lock, with p.Activate),
// else STAGE ID once runtimes/.stage-<p.Token> exists for the upload.
func PushCheck(p Params) string { return p.body("pushcheck", storeLibrary) }

// Promote renders the command after the upload: verify p.Sum, unpack, then
// under the lock PROMOTED or PRESENT, ACTIVATED with p.Activate, RELEASED;
// or CORRUPT, LOST, BUSY, ABANDONED, ERROR.
func Promote(p Params) string { return p.body("promote", storeLibrary) }

// DropStage renders the removal of the stage of push p.Token: DROPPED.
func DropStage(p Params) string { return p.body("dropstage", storeLibrary) }

// List renders the read-only listing: RT lines, then LISTED; or NOSTORE.
func List(p Params) string { return p.body("list", storeLibrary) }

// ActivateRuntime renders the switch of current to p.ID under the lock.
func ActivateRuntime(p Params) string { return p.body("activate", storeLibrary) }

// Rollback renders the switch of current back to previous under the lock.
func Rollback(p Params) string { return p.body("rollback", storeLibrary) }

// Pin renders pinning (or with p.Unpin unpinning) p.ID under the lock.
func Pin(p Params) string { return p.body("pin", storeLibrary) }

// GC renders a collection that tries the lock once: KEEP, DELETE and SWEEP
// lines, then RELEASED; or BUSY (skipped), NOSTORE, NOPROC, LOST.
func GC(p Params) string { return p.body("gc", storeLibrary) }

func assign(b *strings.Builder, name, value string) {
	b.WriteString(name + "=" + shellescape.Quote(value) + "\n")
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func orDefault(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}

func seconds(d time.Duration) int64 {
	if d <= 0 {
		return 0
	}
	return int64((d + time.Second - 1) / time.Second)
}

func flag(b bool) string {
	if b {
		return "1"
	}
	return ""
}
