package shellcmd

import (
	"slices"
	"strconv"
	"strings"
	"time"
)

// The readers of the verdicts that carry fields: what lock, store, remote
// and the CLI read, by name ([protocol] gives each verb's fields), so that
// no caller indexes fields. A field is "-" where the host had nothing to say
// there (unknown, or none); a reader turns it into the zero value, with a
// flag where zero means something (an age of 0 s). A reader of another
// verb's verdict reads zero values.

// get is the field of v called name in its verb's row, "" when v has no
// such field or the host said "-".
func (v Verdict) get(name string) string {
	spec, ok := specs[v.Verb]
	if !ok {
		return ""
	}
	i := slices.Index(spec.fields, name)
	if i < 0 || i >= len(v.fields) || v.fields[i] == "-" {
		return ""
	}
	return v.fields[i]
}

// of is v when it is one of verbs, else a verdict with no fields: what a
// reader of another verb's verdict reads.
func (v Verdict) of(verbs ...Verb) Verdict {
	if slices.Contains(verbs, v.Verb) {
		return v
	}
	return Verdict{}
}

func number(s string) (int64, bool) {
	n, err := strconv.ParseInt(s, 10, 64)
	return n, err == nil
}

// epoch is a time in seconds since 1970, zero when s is none.
func epoch(s string) time.Time {
	if n, ok := number(s); ok {
		return time.Unix(n, 0)
	}
	return time.Time{}
}

// unix is a time in seconds since 1970, 1970 itself when s is none.
func unix(s string) time.Time {
	n, _ := number(s)
	return time.Unix(n, 0)
}

// Holder is the lock a verdict names, as the host saw it: LOCK, HELD,
// STOLEN, BUSY, BROKEN, NOTSTALE, NOTOWNER and LOST.
type Holder struct {
	// Age is the time since the lock's record last changed, by the host's
	// clock; AgeKnown is false when the host could not tell.
	Age      time.Duration
	AgeKnown bool
	// Why is the rule that lets anyone take the lock (sh/rules.sh: boot,
	// exited, stale; forced for a forced break), "" when none does.
	Why string
	// Proc is what the exited rule found of the holder process (alive,
	// exited, none, boot, pidns, uid, unknown), "" when the host did not
	// look.
	Proc string
	// Raw is the record's first line as found, "" when there is none;
	// Record is Raw parsed, RecordOK false when it does not parse.
	Raw      string
	Record   Record
	RecordOK bool
}

// Holder reads the holder a verdict names: one whose fields are a
// holder's ([protocol]).
func (v Verdict) Holder() Holder {
	var h Holder
	if spec, ok := specs[v.Verb]; !ok || !slices.Equal(spec.fields, holder) {
		return h
	}
	if n, ok := number(v.get("age")); ok && n >= 0 {
		h.Age, h.AgeKnown = time.Duration(n)*time.Second, true
	}
	h.Why, h.Proc, h.Raw = v.get("why"), v.get("proc"), v.get("record")
	if h.Raw != "" {
		h.Record, h.RecordOK = ParseRecord(h.Raw)
	}
	return h
}

// Facts reads FACTS.
func (v Verdict) Facts() Facts {
	v = v.of(VerbFacts)
	return Facts{Machine: v.get("mach"), BootID: v.get("boot"), PIDNS: v.get("pidns"), Init: v.get("init"),
		Stat: v.get("stat"), Nap: v.get("nap"), UID: v.get("uid"), Home: v.get("home")}
}

// RunLine is a run's record on the host, as RUN (hoist runs) and RUNSTATE
// (hoist logs, for the run asked for) say it.
type RunLine struct {
	ID string // RUN's; "" in RUNSTATE
	// End is zero while the run goes on.
	Start, End time.Time
	// Status is the exit status, valid when Exited.
	Status int
	Exited bool
	// Who and Command are the client's (RunInfo), decoded.
	Who, Command string
}

// Run reads RUN and RUNSTATE.
func (v Verdict) Run() RunLine {
	v = v.of(VerbRun, VerbRunState)
	r := RunLine{ID: v.get("id"), Start: epoch(v.get("start")), End: epoch(v.get("end")),
		Who: unpct(v.get("who")), Command: unpct(v.get("cmd"))}
	if n, err := strconv.Atoi(v.get("status")); err == nil {
		r.Status, r.Exited = n, true
	}
	return r
}

// RuntimeLine is one runtime of a store's list (RT).
type RuntimeLine struct {
	ID       string
	Promoted time.Time
	Size     int64
	// Current, Previous, Pinned and Bad are its flags (c, p, P, b).
	Current, Previous, Pinned, Bad bool
	// Order is its place among the store's promotions, newest highest.
	Order int64
	// Name is the name it was pushed under, "" when its mark names none.
	Name string
}

// Runtime reads RT.
func (v Verdict) Runtime() RuntimeLine {
	v = v.of(VerbRuntime)
	rt := RuntimeLine{ID: v.get("id"), Promoted: unix(v.get("promoted")), Name: v.get("name")}
	rt.Size, _ = number(v.get("size"))
	rt.Order, _ = number(v.get("order"))
	for _, f := range v.get("flags") {
		switch f {
		case 'c':
			rt.Current = true
		case 'p':
			rt.Previous = true
		case 'P':
			rt.Pinned = true
		case 'b':
			rt.Bad = true
		}
	}
	return rt
}

// HistoryLine is one switch of current (HIST).
type HistoryLine struct {
	When   time.Time
	Action string
	// From is "" when nothing was current.
	From, To string
	// Who is the client's part of the record of whoever switched it.
	Who Record
}

// History reads HIST.
func (v Verdict) History() HistoryLine {
	v = v.of(VerbHistory)
	return HistoryLine{When: unix(v.get("when")), Action: v.get("action"), From: v.get("from"), To: v.get("to"),
		Who: parseClient(v.get("who"), ",")}
}

// Reused reads REUSED: a file of the runtime (its ReuseName) that the host
// already had is reused: copied and verified in the stage's pool, at
// pool/<path>.
func (v Verdict) Reused() (name, path string) {
	v = v.of(VerbReused)
	return v.get("pool-name"), v.get("path")
}

// Resume reads RESUME: the push took over a cut upload of id, and goes on
// from offset; the bytes before it have the SHA-256 sum ("" when the host
// could not hash them).
func (v Verdict) Resume() (id string, offset int64, sum string) {
	v = v.of(VerbResume)
	offset, _ = number(v.get("offset"))
	return v.get("id"), offset, v.get("sha256")
}

// Fetched reads FETCHED: the host fetched the blob of this SHA-256 (hex)
// from the registry, size bytes in tries tries (more than one: it resumed
// with Range), and verified it.
func (v Verdict) Fetched() (sum string, size int64, tries int) {
	v = v.of(VerbFetched)
	size, _ = number(v.get("bytes"))
	n, _ := number(v.get("tries"))
	return v.get("sha256"), size, int(n)
}

// NoFetch reads NOFETCH: why the fetch ended (tool, reach, tls, http, cut,
// size, digest, write) and the host's words.
func (v Verdict) NoFetch() (why, detail string) {
	v = v.of(VerbNoFetch)
	return v.get("why"), v.get("detail")
}

// FetchEnd reads FETCHEND: the tool the fetch used ("" when none).
func (v Verdict) FetchEnd() (tool string) { return v.of(VerbFetchEnd).get("tool") }

// Stage reads STAGE: the stage of id exists; shared when its archive bears
// the push's date (a store its group may write).
func (v Verdict) Stage() (id string, shared bool) {
	v = v.of(VerbStage)
	return v.get("id"), v.get("share") == "shared"
}

// Activated reads ACTIVATED: current points at id now, and pointed at
// previous ("" when nothing was current).
func (v Verdict) Activated() (id, previous string) {
	v = v.of(VerbActivated)
	return v.get("id"), v.get("previous")
}

// GCItem reads KEEP (why, and the name it keeps, decoded), DELETE (a
// runtime id, and plan, done or failed) and SWEEP (a leftover's path, and
// plan or done).
func (v Verdict) GCItem() (name, note string) {
	switch v.Verb {
	case VerbKeep:
		return unpct(v.get("name")), v.get("why")
	case VerbDelete:
		return v.get("id"), v.get("state")
	case VerbSweep:
		return v.get("path"), v.get("state")
	}
	return "", ""
}

// CheckLine is one item of the doctor's checklist (CHECK).
type CheckLine struct {
	// Status is ok, warn or fail; Value and Detail are "" when the host
	// said none.
	Name, Status, Value, Detail string
}

// Check reads CHECK.
func (v Verdict) Check() CheckLine {
	v = v.of(VerbCheck)
	return CheckLine{Name: v.get("name"), Status: v.get("status"), Value: v.get("value"), Detail: v.get("detail")}
}

// Cut reads CUT: a finished run no longer keeps the first bytes of stream.
func (v Verdict) Cut() (stream string, bytes int64) {
	v = v.of(VerbCut)
	bytes, _ = number(v.get("bytes"))
	return v.get("stream"), bytes
}

// Failure reads ERROR: the code, and the host's text ("" when none).
func (v Verdict) Failure() (code Code, text string) {
	v = v.of(VerbError)
	return Code(v.get("code")), v.get("text")
}

// ExitStatus reads EXIT: the command's exit status.
func (v Verdict) ExitStatus() int {
	n, _ := strconv.Atoi(v.of(VerbExit).get("status"))
	return n
}

// Lease reads REFRESHED: the lease a manual hold was renewed for.
func (v Verdict) Lease() time.Duration {
	n, _ := number(v.of(VerbRefreshed).get("lease"))
	return time.Duration(n) * time.Second
}

// Token reads ACQUIRED, HOLDING and KEPT: the lock's owner token.
func (v Verdict) Token() string { return v.of(VerbAcquired, VerbHolding, VerbKept).get("token") }

// Path reads DEBRIS (what an
// earlier version left).
func (v Verdict) Path() string {
	switch v.Verb {
	case VerbDebris:
		return v.get("path")
	}
	return ""
}

// RootPlace is where a store's root is on its host (ROOT), each part ""
// where the host could not tell: the mount namespace, the "dev:ino" of the
// root's parent or nearest existing directory above it, and the way from
// there to the root.
type RootPlace struct{ MountNS, Dir, Rest string }

// Root reads ROOT.
func (v Verdict) Root() RootPlace {
	v = v.of(VerbRoot)
	return RootPlace{MountNS: v.get("mntns"), Dir: v.get("dir"), Rest: unpct(v.get("rest"))}
}

// Digest reads CORRUPT: the SHA-256 of the archive the host has.
func (v Verdict) Digest() string { return v.of(VerbCorrupt).get("sha256") }

// BadMark is a runtime's bad mark on a host (BAD): when it failed its
// checks, in which sequence, and why.
type BadMark struct {
	ID      string
	When    time.Time
	Rollout string
	Why     string
}

// Bad reads BAD.
func (v Verdict) Bad() BadMark {
	v = v.of(VerbBad)
	return BadMark{ID: v.get("id"), When: epoch(v.get("when")), Rollout: v.get("rollout"), Why: unpct(v.get("why"))}
}

// RecordPart reads RECORD (Name and Value empty, Plan the plan's
// name=value fields, percent-decoded, a "-" read as ""),
// RPART (a part of record ID: Value is "file" or the link's value) and
// JOURNAL (Path: what is not what hoist makes); RODD and RWITNESS (ID).
type RecordPart struct {
	ID, Name, Value, Path string
	Plan                  map[string]string
}

// Record reads RECORD, RPART and JOURNAL.
func (v Verdict) Record() RecordPart {
	v = v.of(VerbRecord, VerbRPart, VerbJournal, VerbROdd, VerbRWitness)
	rp := RecordPart{ID: v.get("id"), Name: v.get("name"), Value: v.get("value"), Path: unpct(v.get("path"))}
	if v.Verb == VerbRecord {
		rp.Plan = map[string]string{}
		for _, w := range strings.Fields(v.get("plan")) {
			if k, val, ok := strings.Cut(w, "="); ok && val != "-" {
				rp.Plan[k] = unpct(val)
			}
		}
	}
	return rp
}

// RStatus reads RSTATUS: the rollout read ("" none) and what current
// names ("" nothing).
func (v Verdict) RStatus() (id, current string) {
	v = v.of(VerbRStatus)
	return v.get("id"), v.get("current")
}

// Prepared reads PREPARED: the record id is in place, for a switch from
// ("" when nothing was current) to to.
func (v Verdict) Prepared() (id, from, to string) {
	v = v.of(VerbPrepared)
	return v.get("id"), v.get("from"), v.get("to")
}

// Restarted reads RESTARTED: the restart's exit status ("timeout" when it
// was stopped at the deadline) and how long it took.
func (v Verdict) Restarted() (status string, took time.Duration) {
	v = v.of(VerbRestarted)
	n, _ := number(v.get("ms"))
	return v.get("status"), time.Duration(n) * time.Millisecond
}

// ProbeSeq reads PROBE: the try whose dialled probes the client answers.
func (v Verdict) ProbeSeq() int {
	n, _ := number(v.of(VerbProbe).get("seq"))
	return int(n)
}

// ProbeLine is one try (TRY), or one exec probe of it (PROBED, with its
// Name).
type ProbeLine struct {
	Seq    int
	Name   string
	OK     bool
	Took   time.Duration
	Detail string
}

// Probe reads TRY and PROBED.
func (v Verdict) Probe() ProbeLine {
	v = v.of(VerbTry, VerbProbed)
	seq, _ := number(v.get("seq"))
	ms, _ := number(v.get("ms"))
	return ProbeLine{Seq: int(seq), Name: v.get("name"), OK: v.get("verdict") == "ok",
		Took: time.Duration(ms) * time.Millisecond, Detail: unpct(v.get("detail"))}
}

// HealthLine is a sequence's verdict: HEALTHY (the timings and tries),
// UNHEALTHY (Why), REVERTED (From, To, and Verdict: healthy, unhealthy,
// unchecked, or none when there was nothing to revert to).
type HealthLine struct {
	ID                string
	FirstOK, Stable   time.Duration
	Tries             int
	Why               string
	To, From, Verdict string
}

// Health reads HEALTHY, UNHEALTHY and REVERTED.
func (v Verdict) Health() HealthLine {
	v = v.of(VerbHealthy, VerbUnhealthy, VerbReverted)
	h := HealthLine{ID: v.get("id"), Why: unpct(v.get("why")), To: v.get("to"), From: v.get("from"), Verdict: v.get("verdict")}
	f, _ := number(v.get("first_ok_ms"))
	st, _ := number(v.get("stable_ms"))
	t, _ := number(v.get("tries"))
	h.FirstOK, h.Stable, h.Tries = time.Duration(f)*time.Millisecond, time.Duration(st)*time.Millisecond, int(t)
	return h
}

// SettledLine is SETTLED: the local rule finished record ID on Side
// (from, to) with Runtime current, and Checks says how its exec checks
// went after the settle (healthy, unhealthy with Why, unchecked: none
// kept; old: a record that does not keep them; "": nothing restarted);
// Dialled is how many dialled probes the record had, which a settle
// does not run.
type SettledLine struct {
	ID, Side, Runtime, Checks, Why string
	Dialled                        int
}

// Settled reads SETTLED.
func (v Verdict) Settled() SettledLine {
	v = v.of(VerbSettled)
	n, _ := number(v.get("dialled"))
	return SettledLine{ID: v.get("id"), Side: v.get("side"), Runtime: v.get("runtime"), Checks: v.get("checks"), Why: unpct(v.get("why")), Dialled: int(n)}
}

// RolloutLine is an --atomic rollout's verdict: VOTED (Vote), DECIDED
// (Decision), INDOUBT and NORECORD (ID), DONE (ID, Side), PLAN (ID,
// From, To, Index and Decider, -1 for "-", and Hosts decoded).
type RolloutLine struct {
	ID, Vote, Decision, Side string
	From, To                 string
	Index, Decider           int
	Hosts                    []string
	// Plan is a batch record's plan as written (PlanFields: its hosts
	// and options, percent-encoded), "" when it has none.
	Plan string
}

// Rollout reads VOTED, DECIDED, INDOUBT, DONE, PLAN, NORECORD, WITNESSED
// (ID, To) and WITNESS (ID, To, Plan; "" for "-").
func (v Verdict) Rollout() RolloutLine {
	v = v.of(VerbVoted, VerbDecided, VerbInDoubt, VerbDone, VerbPlan, VerbNoRecord, VerbWitnessed, VerbWitness)
	l := RolloutLine{ID: v.get("id"), Vote: v.get("vote"), Decision: v.get("decision"), Side: v.get("side"), From: v.get("from"), To: v.get("to"), Index: -1, Decider: -1}
	if n, ok := number(v.get("index")); ok {
		l.Index = int(n)
	}
	if n, ok := number(v.get("decider")); ok {
		l.Decider = int(n)
	}
	if hs := v.get("hosts"); hs != "" {
		for _, h := range strings.Split(hs, ",") {
			l.Hosts = append(l.Hosts, unpct(h))
		}
	}
	if o := v.get("opts"); o != "" && v.get("hosts") != "" && l.Decider < 0 {
		l.Plan = PlanFields(v.get("hosts"), o)
	}
	return l
}

// UnfinishedRecord is an UNFINISHED verdict: a rollout record the host keeps
// with no done: its id, mode, from ("" for nothing), to, and its state as
// its parts say (prepared, switched, voted, decided).
type UnfinishedRecord struct {
	ID, Mode, From, To, State string
	// Held: the hold the record's host command works under (its plan's
	// token) owned the store lock when the host looked: the rollout is
	// under way, or its holder died and the lock was neither released nor
	// taken since. Otherwise its host command ended without finishing it.
	Held bool
}

// Unfinished reads UNFINISHED. A hold other than "-" reads as held: doubt
// never makes a rollout look interrupted.
func (v Verdict) Unfinished() UnfinishedRecord {
	v = v.of(VerbUnfinished)
	return UnfinishedRecord{ID: v.get("id"), Mode: v.get("mode"), From: unpct(v.get("from")), To: unpct(v.get("to")), State: v.get("state"),
		Held: v.get("hold") != ""}
}
