package shellcmd

import (
	"cmp"
	"fmt"
	"strings"
	"time"

	"al.essio.dev/pkg/shellescape"
)

// Facts are what a host told about itself (FACTS); cached per connection. A
// fact the host could not read is "" (the host says "-", and reads "-" back
// from the cache).
type Facts struct {
	// Machine is "<machine-id>:<host name>"; BootID the kernel's boot_id;
	// PIDNS the login's PID namespace (when /proc is its own) and Init the
	// start time of that namespace's PID 1, in clock ticks. Together they
	// are the boot evidence of the previous-boot rule.
	Machine, BootID, PIDNS, Init string
	// Stat is the stat flavour: "gnu" (-c %Y), "bsd" (-f %m) or "none".
	Stat string
	// Nap is the poll interval in seconds: "0.1", or "1" where sleep takes
	// no fractions.
	Nap string
	// UID is the login's uid; Home its $HOME ("" when unset).
	UID, Home string
}

// prelude starts every host command: globbing is off (no value is ever a
// pattern), nothing hoist creates is writable by others, HUP and PIPE are
// ignored for the whole command (a client that hangs up cannot cut a release
// short), the marker is set, and the host's facts are assigned from the
// cache when there is one.
func prelude(marker string, f *Facts) string {
	var b strings.Builder
	b.WriteString("set -f\numask o-w\ntrap '' HUP PIPE\nh_nl='\n'\n")
	assign(&b, "h_marker", marker)
	if f != nil {
		for _, kv := range [][2]string{{"h_mach", orDash(f.Machine)}, {"h_bootid", orDash(f.BootID)},
			{"h_pidns", orDash(f.PIDNS)}, {"h_init", orDash(f.Init)}, {"h_stat", f.Stat}, {"h_nap", f.Nap},
			{"h_uid", orDash(f.UID)}, {"h_home", f.Home}} {
			assign(&b, kv[0], kv[1])
		}
	}
	return b.String()
}

// Params are the values an operation's fragment needs.
type Params struct {
	Root Root
	// Token is the lock owner token this command acquires with or acts for.
	Token string
	// Spares are the tokens a waiting acquire goes on with, in order, after
	// an attempt whose fate it cannot tell (its token is spent: it may
	// have been published and taken, and is never published again). The
	// ACQUIRED verdict names the token the host holds the lock with, and
	// the command's scratch directory, runs/<token>, takes its name.
	Spares []string
	// Record is the client's part of the owner record (see [Record.Encode]).
	Record string
	// Wait bounds how long the host waits for the lock.
	Wait time.Duration
	// Stale is the age after which a lock may be stolen (the stale rule).
	Stale time.Duration
	// Try makes Acquire one attempt that never creates the store.
	Try bool
	// Force makes Break remove the lock whose token is Token.
	Force bool
	// Argv is the command Run executes.
	Argv []string
	// Lease is the lease a lock this command takes carries: it may be
	// taken once its record has not been renewed for this long. Zero means
	// DefaultStale.
	Lease time.Duration
	// Grace is how long a stopped run's command has between SIGTERM and
	// SIGKILL. Zero means DefaultGrace.
	Grace time.Duration
	// Hold makes the command work under the manual hold Token instead of
	// taking the lock: it checks on the host that Token still holds it,
	// renews that hold's lease while it works, and leaves it held.
	Hold bool
	// Run names the command's scratch directory, runs/<Run>, which a run
	// keeps as its record; empty means Token.
	Run string
	// RunInfo is the client's part of a run's record (who, the command).
	RunInfo string
	// KeepRuns is how long gc keeps run records; zero means DefaultKeepRuns.
	KeepRuns time.Duration
	// Offsets are the bytes of a run's stdout and stderr a reader already
	// has; Follow makes Logs wait for the run to end.
	Offsets [2]int64
	Follow  bool

	// Store operations.
	Stage string // the token of a push's stage, .stage-<Stage>
	// StageKey is the push's secret, which its first command writes in
	// the stage and the later ones find there before they touch it
	// (h_instage): a private directory of the login's that someone
	// put at the stage's name through a symlink is not the stage.
	StageKey string
	// Stamp is the date the first command gives the stage's archive in a
	// store others may rename things in, for the upload to check that the
	// file it opened is that one (UploadOptions.Check).
	Stamp   time.Time
	ID      string // runtime id
	Name    string // runtime name, recorded at promotion
	Digest  string // the runtime's full digest, recorded at promotion
	Size    int64  // runtime size in bytes
	Entries int    // entries in the runtime, for the free space it needs
	Sum     string // SHA-256 of the uploaded archive
	// Window is how far below its end a cut upload of this push may
	// have gaps: a push that resumes it goes on from its length less this.
	Window int64
	// Cut is where a stopped upload's bytes stop being whole: the next
	// push resumes from there.
	Cut int64
	// Want lists, a line each, the PoolName ("<sha256>-<mode>") of files
	// of the runtime the host may have in runtimes it holds
	// (runtimes/.files/<id>), to copy into the stage instead of receiving
	// them.
	Want     string
	Activate bool // switch current to ID after a push
	Unpin    bool // Pin removes the pin
	Keep     int  // GC keeps this many newest runtimes beyond the protected ones
	DryRun   bool // GC says its plan and changes nothing

	// Pause is for tests only: the command stops at each step named in
	// Pause.At (docs/protocol.md) until the test lets it go.
	Pause Pause
}

// Pause stops a command at named protocol steps: at step S it creates
// Dir/S.at and waits until Dir/S.go exists.
type Pause struct {
	Dir string
	At  []string
}

// The store layout under a root. Package store documents the whole layout.
const (
	StoreDir = "runtimes"    // <root>/runtimes: the store
	LockName = ".store-lock" // <root>/runtimes/.store-lock: the lock
	RunsDir  = "runs"        // <root>/runs/<token>: scratch of waiting and running commands
)

// DefaultStale is the lease a lock carries unless told otherwise, and the
// stale rule for a lock whose record names no lease: a lock whose record was
// not renewed for this long may be stolen.
const DefaultStale = 20 * time.Minute

// DefaultGrace is the time a stopped command gets between SIGTERM and SIGKILL.
const DefaultGrace = 10 * time.Second

// DefaultKeepRuns is how long gc keeps the record of a run.
const DefaultKeepRuns = 7 * 24 * time.Hour

// MinLease is the shortest lease a record may carry; a record with a shorter
// one (or none) falls under DefaultStale.
const MinLease = 2 * time.Second

// MaxLease is the longest lease a record carries (about 115 days; h_parse
// reads seven digits at most).
const MaxLease = 9999999 * time.Second

// Fragment is one operation's part of a host command: the shell functions it
// carries (Defs) and the lines that run it (Main). Package remote puts the
// prelude, the facts probe when needed, and LOADED between them.
type Fragment struct {
	Op         *Op
	Defs, Main string
}

// Render renders op with p.
func Render(op *Op, p Params) Fragment {
	var b strings.Builder
	if p.Root.Home {
		b.WriteString("h_rooth=1\n")
	} else {
		b.WriteString("h_rooth=\n")
	}
	assign(&b, "h_rootp", p.Root.Path)
	b.WriteString("h_storedir=" + StoreDir + " h_lockname=" + LockName + " h_runsdir=" + RunsDir + "\n")
	assign(&b, "h_me", orDash(p.Token))
	assign(&b, "h_spares", strings.Join(p.Spares, " "))
	assign(&b, "h_rec", p.Record)
	fmt.Fprintf(&b, "h_wait=%d\nh_stale=%d\nh_lease=%d\nh_grace=%d\nh_keepruns=%d\n", seconds(p.Wait),
		seconds(orDefault(p.Stale, DefaultStale)), seconds(orDefault(p.Lease, DefaultStale)),
		seconds(orDefault(p.Grace, DefaultGrace)), seconds(orDefault(p.KeepRuns, DefaultKeepRuns)))
	assign(&b, "h_rid", orDash(cmp.Or(p.Run, p.Token)))
	assign(&b, "h_runinfo", p.RunInfo)
	fmt.Fprintf(&b, "h_oo=%d\nh_eo=%d\n", max(p.Offsets[0], 0), max(p.Offsets[1], 0))
	b.WriteString("h_hold=" + flag(p.Hold) + "\nh_follow=" + flag(p.Follow) + "\n")
	b.WriteString("h_try=" + flag(p.Try) + "\nh_force=" + flag(p.Force) + "\n")
	assign(&b, "h_stok", orDash(p.Stage))
	assign(&b, "h_skey", p.StageKey)
	assign(&b, "h_stamp", p.Stamp.UTC().Format("200601021504.05"))
	assign(&b, "h_id", p.ID)
	assign(&b, "h_name", p.Name)
	assign(&b, "h_digest", p.Digest)
	assign(&b, "h_sum", p.Sum)
	fmt.Fprintf(&b, "h_size=%d\nh_entries=%d\nh_keep=%d\nh_window=%d\nh_cut=%d\n", p.Size, p.Entries, p.Keep, p.Window, p.Cut)
	assign(&b, "h_want", p.Want)
	b.WriteString("h_activate=" + flag(p.Activate) + "\nh_unpin=" + flag(p.Unpin) + "\nh_dry=" + flag(p.DryRun) + "\n")
	assign(&b, "h_pause", p.Pause.Dir)
	assign(&b, "h_pauseat", strings.Join(p.Pause.At, " "))
	if len(p.Argv) > 0 {
		quoted := make([]string, len(p.Argv))
		for i, a := range p.Argv {
			quoted[i] = shellescape.Quote(a)
		}
		// h_setsid is "setsid" where the host has it (h_run).
		b.WriteString("h_cmd() { exec $h_setsid " + strings.Join(quoted, " ") + "; }\n")
	}
	b.WriteString(op.definitions())
	return Fragment{Op: op, Defs: b.String(), Main: "h_setup\nh_op_" + op.Name + "\n"}
}

// Script is the whole host command: prelude, definitions, the facts probe
// when f is nil, LOADED, and the operation.
func (fr Fragment) Script(marker string, f *Facts) string {
	var b strings.Builder
	b.WriteString(prelude(marker, f))
	b.WriteString(fr.Defs)
	b.WriteString("h_say " + string(VerbLoaded) + "\n")
	if f == nil {
		b.WriteString(lib.probe) // facts.sh: says FACTS
	}
	b.WriteString(fr.Main)
	return b.String()
}

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
