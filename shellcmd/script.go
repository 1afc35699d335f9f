package shellcmd

import (
	"cmp"
	"fmt"
	"net/url"
	"strconv"
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

// Params are the values an operation's fragment needs. Render gives each
// to the shell as a parameter, hp_<name> (Token is hp_me, Reuse hp_reuse,
// ...), and only to an operation whose functions read it.
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
	// Stale is the lease assumed for a record that names none
	// (lock.Lock.AssumedLease).
	Stale time.Duration
	// Try makes Acquire one attempt that never creates the store.
	Try bool
	// Force makes Break remove the lock whose token is Token, and
	// Activate and Rollback switch to a runtime marked bad.
	Force bool
	// Argv is the command Run executes.
	Argv []string
	// Lease is the lease a lock this command takes carries: it may be
	// taken once its record has not been renewed for this long. Zero means
	// DefaultLease.
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
	// Reuse lists, a line each, the ReuseName ("<sha256>-<mode>") of files
	// of the runtime the host may have in runtimes it holds
	// (runtimes/.files/<id>): the delta, files the host reuses (copies into
	// the stage, REUSED) instead of receiving them (sh/reuse.sh).
	Reuse string
	// A push through a registry (sh/fetch.sh): the blob URL of the
	// repository (".../v2/REPO/blobs/"), what the host fetches and links
	// (a line each: "link NAME PATH", "blob SHA256 SIZE MODES", "pack
	// SHA256 SIZE"), the Authorization header's value (a secret: it
	// travels in the fragment, on standard input, never in argv), the
	// registry's CA (PEM), and whether plain HTTP is allowed.
	FetchURL   string
	Fetch      string
	FetchAuth  string
	FetchCA    string
	FetchPlain bool
	Activate   bool // switch current to ID after a push
	Unpin      bool // Pin removes the pin
	Keep       int  // GC keeps this many newest runtimes beyond the protected ones
	DryRun     bool // GC says its plan and changes nothing
	// Health makes Activate and Rollback a health-checked switch.
	Health Health
	// Rollout is an --atomic rollout's part for Rollout's participant.
	Rollout Rollout

	// A test's pauses: no part of the API, hence embedded unexported.
	testHooks
}

// Health is a health-checked switch (docs/rollout.md, "One host"): the
// sequence's id, which names its record (empty: a plain switch), the
// restart command, the exec probes, how many dialled probes the client
// answers for, and the timing.
type Health struct {
	ID string
	// Mode is the record's mode: "" (single) or "batch", a host of a
	// rollout; RevertOf names the rollout a revert's record undoes.
	Mode, RevertOf string
	Restart        string
	Exec           []string
	Dialled        int
	// Interval between tries' starts, Timeout per try, Deadline to the
	// first success after the restart, Stable the window after it.
	Interval, Timeout, Deadline, Stable time.Duration
	// Plan is what a batch rollout's record keeps of the rollout, last
	// in its plan line: PlanFields of its hosts and options ("" none).
	Plan string
}

// Rollout is one host's place in an --atomic rollout (docs/rollout.md):
// every target of the rollout, in order, this host's index among them
// and the decider's.
type Rollout struct {
	Hosts          []string
	Index, Decider int
}

// testHooks are the fields of Params that only tests set: package lock's
// step tests, through lock's test hook (lock/export_test.go), by their
// promoted names (Params.Pause.Dir, Params.Pause.At).
type testHooks struct {
	// Pause stops the command at each step named in At (docs/protocol.md):
	// at step S it creates Dir/S.at and waits until Dir/S.go exists.
	Pause struct {
		Dir string
		At  []string
	}
}

// The store layout under a root. Package store documents the whole layout.
const (
	StoreDir = "runtimes"    // <root>/runtimes: the store
	LockName = ".store-lock" // <root>/runtimes/.store-lock: the lock
	RunsDir  = "runs"        // <root>/runs/<token>: scratch of waiting and running commands
)

// The wire's defaults, for a field of Params left zero. Package lock, which
// always sets them, has the defaults users see: lock.DefaultLease,
// lock.DefaultGrace, and package store's DefaultKeepRuns.
const (
	DefaultLease    = 20 * time.Minute
	DefaultGrace    = 10 * time.Second
	DefaultKeepRuns = 7 * 24 * time.Hour
)

// minLease and maxLease bound the lease a record carries (lock.MinLease and
// lock.MaxLease); h_parse reads seven digits at most.
const (
	minLease = 2 * time.Second
	maxLease = 9999999 * time.Second
)

// Fragment is one operation's part of a host command: the shell functions it
// carries (Defs) and the lines that run it (Main). Package remote puts the
// prelude, the facts probe when needed, and LOADED between them.
type Fragment struct {
	Op         *Op
	Defs, Main string
}

// Render renders op with p: the parameters its functions read (hp_*),
// then the functions. A fragment carries no parameter it does not read.
func Render(op *Op, p Params) Fragment {
	var b strings.Builder
	fns := op.Functions()
	reads := lib.reads(fns)
	for _, v := range p.values() {
		if reads[v.name] {
			assign(&b, "hp_"+v.name, v.value)
		}
	}
	if len(p.Argv) > 0 {
		quoted := make([]string, len(p.Argv))
		for i, a := range p.Argv {
			quoted[i] = shellescape.Quote(a)
		}
		// h_setsid is "setsid" where the host has it (h_run).
		b.WriteString("h_cmd() { exec $h_setsid " + strings.Join(quoted, " ") + "; }\n")
	}
	for _, f := range fns {
		b.WriteString(lib.body[f])
	}
	return Fragment{Op: op, Defs: b.String(), Main: op.main()}
}

// param is one value the shell reads as hp_<name>.
type param struct{ name, value string }

// values are every parameter of p, as the shell reads them: durations in
// whole seconds, flags "1" or empty, "-" for no token.
func (p Params) values() []param {
	n := func(i int64) string { return strconv.FormatInt(i, 10) }
	return []param{
		{"rooth", flag(p.Root.Home)},
		{"rootp", p.Root.Path},
		{"storedir", StoreDir},
		{"lockname", LockName},
		{"runsdir", RunsDir},
		{"me", orDash(p.Token)},
		{"spares", strings.Join(p.Spares, " ")},
		{"rec", p.Record},
		{"wait", n(seconds(p.Wait))},
		{"stale", n(seconds(orDefault(p.Stale, DefaultLease)))},
		{"lease", n(seconds(orDefault(p.Lease, DefaultLease)))},
		{"grace", n(seconds(orDefault(p.Grace, DefaultGrace)))},
		{"keepruns", n(seconds(orDefault(p.KeepRuns, DefaultKeepRuns)))},
		{"rid", orDash(cmp.Or(p.Run, p.Token))},
		{"runinfo", p.RunInfo},
		{"oo", n(max(p.Offsets[0], 0))},
		{"eo", n(max(p.Offsets[1], 0))},
		{"hold", flag(p.Hold)},
		{"follow", flag(p.Follow)},
		{"try", flag(p.Try)},
		{"force", flag(p.Force)},
		{"stok", orDash(p.Stage)},
		{"skey", p.StageKey},
		{"stamp", p.Stamp.UTC().Format("200601021504.05")},
		{"id", p.ID},
		{"name", p.Name},
		{"digest", p.Digest},
		{"sum", p.Sum},
		{"size", n(p.Size)},
		{"entries", n(int64(p.Entries))},
		{"keep", n(int64(p.Keep))},
		{"window", n(p.Window)},
		{"cut", n(p.Cut)},
		{"reuse", p.Reuse},
		{"furl", p.FetchURL},
		{"fetch", p.Fetch},
		{"fauth", p.FetchAuth},
		{"fca", p.FetchCA},
		{"fplain", flag(p.FetchPlain)},
		{"activate", flag(p.Activate)},
		{"unpin", flag(p.Unpin)},
		{"dry", flag(p.DryRun)},
		{"hid", p.Health.ID},
		{"hmode", p.Health.Mode},
		{"hof", p.Health.RevertOf},
		{"hplan", p.Health.Plan},
		{"restart", p.Health.Restart},
		{"checks", strings.Join(p.Health.Exec, "\n")},
		{"ndial", n(int64(p.Health.Dialled))},
		{"cint", n(p.Health.Interval.Milliseconds())},
		{"ctimeout", n(p.Health.Timeout.Milliseconds())},
		{"cdeadline", n(p.Health.Deadline.Milliseconds())},
		{"stable", n(p.Health.Stable.Milliseconds())},
		{"rhosts", rolloutHosts(p.Rollout.Hosts)},
		{"rindex", n(int64(p.Rollout.Index))},
		{"rdecider", n(int64(p.Rollout.Decider))},
		{"pause", p.Pause.Dir},
		{"pauseat", strings.Join(p.Pause.At, " ")},
	}
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

// assign writes name=value, value quoted; an empty value is name= alone.
func assign(b *strings.Builder, name, value string) {
	if value == "" {
		b.WriteString(name + "=\n")
		return
	}
	b.WriteString(name + "=" + shellescape.Quote(value) + "\n")
}

// rolloutHosts is a plan's hosts= field: each target percent-encoded (as a
// lock record's values), joined by commas.
func rolloutHosts(hs []string) string {
	out := make([]string, len(hs))
	for i, h := range hs {
		out[i] = pct(h)
	}
	return strings.Join(out, ",")
}

// PlanFields is a batch record's plan of its rollout, as the plan line
// keeps it: " hosts=H1,H2,... opts=A1,A2,...", the hosts and the option
// argv each percent-encoded (as the lock record's values) and joined by
// commas, from already encoded lists.
func PlanFields(hosts, opts string) string {
	return " hosts=" + hosts + " opts=" + opts
}

// EncodeList is a list of values as a plan field keeps it: each
// percent-encoded, joined by commas.
func EncodeList(vs []string) string { return rolloutHosts(vs) }

// DecodeList reads a list EncodeList wrote, strictly: every value is
// non-empty, of the characters EncodeList writes, and decodes.
func DecodeList(s string) ([]string, error) {
	var out []string
	for _, e := range strings.Split(s, ",") {
		if e == "" || strings.Trim(e, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~/:@+%") != "" {
			return nil, fmt.Errorf("%q is not a percent-encoded value", e)
		}
		d, err := url.PathUnescape(e)
		if err != nil || d == "" {
			return nil, fmt.Errorf("%q is not a percent-encoded value", e)
		}
		out = append(out, d)
	}
	return out, nil
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
