package store

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/hoistdev/hoist/lock"
	"github.com/hoistdev/hoist/remote"
	"github.com/hoistdev/hoist/shellcmd"
)

// Checks make an activation or a rollback health-checked
// (docs/rollout.md, "One host"): one host command, under one hold of the
// lock, switches current, runs Restart, probes the runtime, and when it is
// not found healthy reverts current to the runtime it replaced, runs
// Restart again and probes that one. The host finishes the sequence if the
// client goes away: it reverts unless the new runtime was found healthy.
type Checks struct {
	// Exec are commands run on the host with /bin/sh -c, in the runtime's
	// directory, with HOIST_RUNTIME, HOIST_PREVIOUS and HOIST_DIR set;
	// exit 0 is healthy.
	Exec []string
	// HTTP are URLs (http://HOST:PORT/PATH, as the host sees it) that this
	// client GETs through the connection (a direct-tcpip channel): a 2xx
	// status is healthy. TCP are HOST:PORT addresses that must accept a
	// connection, dialled the same way. The host waits for their answers;
	// silence is a failure.
	HTTP, TCP []string
	// Restart runs on the host after the switch and after a revert; it
	// must exit 0 within Deadline. It must start the service from
	// <root>/current.
	Restart string
	// Interval between the starts of two tries, Timeout per try, Deadline
	// to the first success after the restart: zero means the defaults
	// (1 s, 5 s, 30 s). Stable is the time every try must pass for after
	// the first success: zero, and the first success is enough (hoist's
	// command line gives DefaultStable).
	Interval, Timeout, Deadline, Stable time.Duration
	// Force switches to a runtime marked bad on the host.
	Force bool
	// Rollout, when set, is the id of the fleet's rollout this switch is
	// part of: the host's record is named by it (runtimes/.rollouts/ID,
	// mode batch) instead of a fresh sequence id. RevertOf, when set, is
	// the rollout a revert undoes: its record has an id of its own and
	// says revert-of=ID.
	Rollout, RevertOf string
	// Plan, with Rollout (not with RevertOf), is what the host's record
	// keeps of the rollout: its hosts and options, for a resume to go on
	// with (docs/rollout.md, "Resume of a rollout in batches").
	Plan *BatchPlan
	// Stop, when closed, asks the host to stop: waiting for the lock, it
	// stops waiting; once switched, the new runtime was not confirmed
	// healthy, and the host goes back (checking the runtime it goes back
	// to with the Exec probes only).
	Stop <-chan struct{}
}

// The defaults of [Checks], kamal-proxy's and Nomad's.
const (
	DefaultCheckInterval = time.Second
	DefaultCheckTimeout  = 5 * time.Second
	DefaultCheckDeadline = 30 * time.Second
	DefaultStable        = 10 * time.Second
)

// Sequenced reports whether c asks for the health-checked sequence (a
// restart or a probe); without it a switch is a plain one.
func (c Checks) Sequenced() bool {
	return c.Restart != "" || len(c.Exec)+len(c.HTTP)+len(c.TCP) > 0
}

// Health is what a health-checked switch did.
type Health struct {
	// ID names the sequence's record on the host (runtimes/.rollouts/ID).
	ID string
	// From is what current pointed at before ("" for nothing), To the
	// runtime switched to, Current what it points at now.
	From, To, Current string
	// Healthy: To passed its checks and stays current.
	Healthy bool
	// Why To failed ("deadline: ...", "stable: ...", "restart: ...",
	// "client: ...").
	Why string
	// Check is To's restart and probes; Revert the reverted runtime's,
	// nil when there was no revert.
	Check  Phase
	Revert *Phase
	// RevertVerdict: healthy, unhealthy, unchecked (no probe could run
	// without the client), or none (nothing to revert to).
	RevertVerdict string
	// Settled are the unfinished records of earlier rollouts the host
	// settled by the local rule before the switch, each with how its
	// checks went after the settle.
	Settled []Settle
}

// Settle is what the local rule did with an unfinished record
// (docs/rollout.md, "The local rule"): it finished rollout ID on Side
// (from, to) with Runtime current, and ran the record's exec checks after
// its restart. Checks is healthy, unhealthy (Why), unchecked (the record
// has no exec check), old (a record of an older hoist, which does not
// keep its checks: not re-run) or "" (nothing was restarted: nothing to
// check). Dialled is how many HTTP and TCP checks the record had: the
// local rule never runs those (they are dialled by a client).
type Settle struct {
	ID, Side, Runtime, Checks, Why string
	Dialled                        int
}

// Unhealthy: the settled runtime failed its checks.
func (st Settle) Unhealthy() bool { return st.Checks == "unhealthy" }

func settleOf(v shellcmd.Verdict) Settle {
	l := v.Settled()
	return Settle{ID: l.ID, Side: l.Side, Runtime: l.Runtime, Checks: l.Checks, Why: l.Why, Dialled: l.Dialled}
}

// Phase is one restart and its probe loop.
type Phase struct {
	RestartStatus string // the exit status, "timeout", "" when none ran
	RestartTook   time.Duration
	Tries         []Try
	// FirstOK is the time from the restart's end to the first passing
	// try's start; Stable how long every try passed after it.
	FirstOK, Stable time.Duration
}

// Try is one try of every probe.
type Try struct {
	Seq    int
	OK     bool
	Took   time.Duration
	Detail string
	Probes []Probe
}

// Probe is one probe's result in a try.
type Probe struct {
	Name   string // check1..., http1..., tcp1...
	OK     bool
	Took   time.Duration
	Detail string
}

// UnhealthyError is the error of a health-checked switch whose new runtime
// failed its checks: Reverted when the host is back on the runtime it
// replaced and that one passed them (exit status 3), else the revert
// failed too, or there was nothing to revert to (4).
type UnhealthyError struct {
	Health   *Health
	Reverted bool
}

func (e *UnhealthyError) Error() string {
	h := e.Health
	if e.Reverted {
		return fmt.Sprintf("%s failed its checks (%s); current is back on %s, which passed them", h.To, h.Why, h.From)
	}
	switch h.RevertVerdict {
	case "none":
		return fmt.Sprintf("%s failed its checks (%s) and there is nothing to revert to: current is still %s; fix it or activate another runtime", h.To, h.Why, h.To)
	case "unchecked":
		return fmt.Sprintf("%s failed its checks (%s); current is back on %s, restarted but unchecked (the client was gone): check the service", h.To, h.Why, h.From)
	}
	why := "its checks failed too"
	if h.Revert != nil && h.Revert.RestartStatus != "" && h.Revert.RestartStatus != "0" {
		why = "its restart failed (" + h.Revert.RestartStatus + ")"
	} else if h.Revert != nil && len(h.Revert.Tries) > 0 {
		why = "its checks failed too: " + h.Revert.Tries[len(h.Revert.Tries)-1].Detail
	}
	return fmt.Sprintf("%s failed its checks (%s); current is back on %s, but %s: operator needed", h.To, h.Why, h.From, why)
}

// ExitCode is 3 for a revert that passed its checks, else 4.
func (e *UnhealthyError) ExitCode() int {
	if e.Reverted {
		return 3
	}
	return 4
}

// ErrBad: the runtime is marked bad on the host (it failed its checks
// there); Checks.Force switches to it anyway.
var ErrBad = errors.New("the runtime is marked bad on this host")

// ActivateChecked is Activate with the health-checked sequence of c (see
// [Checks]). It returns the sequence's account and, when the new runtime
// was not found healthy, an *UnhealthyError. Without a restart or a probe
// in c it is a plain activation (Health then has no ID).
func (s *Store) ActivateChecked(ctx context.Context, id string, c Checks, wait time.Duration, ev lock.Events) (*Health, error) {
	if !ValidName(id) {
		return nil, fmt.Errorf("%w: %q is not a runtime id", ErrNotFound, id)
	}
	return s.checked(ctx, shellcmd.OpActivate, id, c, wait, ev)
}

// RollbackChecked is RollbackTo with the health-checked sequence of c. A
// rollback without id goes to previous unless it is marked bad, else to
// the newest runtime the history names that is not.
func (s *Store) RollbackChecked(ctx context.Context, id string, c Checks, wait time.Duration, ev lock.Events) (*Health, error) {
	if id != "" && !ValidName(id) {
		return nil, fmt.Errorf("%w: %q is not a runtime id", ErrNotFound, id)
	}
	return s.checked(ctx, shellcmd.OpRollback, id, c, wait, ev)
}

// NewSequenceID is a health-checked switch's id: <UTC time>-<6 hex>.
func NewSequenceID() string {
	b := make([]byte, 3)
	_, _ = rand.Read(b)
	return time.Now().UTC().Format("20060102T150405Z") + "-" + hex.EncodeToString(b)
}

var rolloutIDRE = regexp.MustCompile(`^[0-9]{8}T[0-9]{6}Z-[0-9a-f]{6}$`)

// ValidRolloutID reports whether id is shaped like NewSequenceID's ids.
func ValidRolloutID(id string) bool { return rolloutIDRE.MatchString(id) }

func (s *Store) checked(ctx context.Context, op *shellcmd.Op, id string, c Checks, wait time.Duration, ev lock.Events) (*Health, error) {
	if err := checkLines(c); err != nil {
		return nil, err
	}
	p := s.wire().Params()
	p.ID, p.Wait, p.Force = id, wait, c.Force
	for _, v := range []string{c.Rollout, c.RevertOf} {
		if v != "" && !ValidRolloutID(v) {
			return nil, fmt.Errorf("rollout %q: not a rollout id (<UTC time>-<6 hex>)", v)
		}
	}
	var dial *dialled
	if c.Sequenced() {
		p.Health, dial = s.sequence(cmp.Or(c.Rollout, NewSequenceID()), c)
		p.Health.RevertOf = c.RevertOf
		if c.Rollout != "" || c.RevertOf != "" {
			p.Health.Mode = "batch"
		}
		if c.Plan != nil && c.Rollout != "" && c.RevertOf == "" {
			f, err := c.Plan.Fields()
			if err != nil {
				return nil, err
			}
			p.Health.Plan = f
		}
	} else {
		dial = newDialled(s, c)
	}
	rd := newSeqReader(ctx, &Health{ID: p.Health.ID}, dial)
	r, err := s.wire().ExecAnswering(ctx, shellcmd.Render(op, p), ev, c.Stop, rd.on)
	rd.tries.Wait()
	h, unhealthy, reverted, activated, prepared := rd.h, rd.unhealthy, rd.reverted, rd.activated, rd.prepared
	if err != nil {
		return nil, err
	}
	for _, v := range r.Verdicts {
		switch v.Verb {
		case shellcmd.VerbNotFound:
			return nil, ErrNotFound
		case shellcmd.VerbNoPrevious:
			return nil, ErrNoPrevious
		case shellcmd.VerbNoStore:
			return nil, ErrNoStore
		}
	}
	if err := s.err(r, "activate"); err != nil {
		var he *HostError
		if errors.As(err, &he) && he.Code == shellcmd.CodeBad {
			he.Err = ErrBad
		}
		if unhealthy {
			return h, fmt.Errorf("%s failed its checks (%s), and the revert did not finish: %w", h.To, h.Why, err)
		}
		if errors.Is(err, ErrSettledUnhealthy) {
			// Stopped after the settle: no sequence of its own ran.
			h.ID = ""
		}
		return h, err
	}
	if !activated {
		return nil, s.err(&remote.Reply{Status: r.Status, Noise: r.Noise}, "activate")
	}
	if unhealthy {
		if !reverted {
			return h, fmt.Errorf("%s failed its checks (%s); the host did not say how its revert ended: check hoist history", h.To, h.Why)
		}
		return h, &UnhealthyError{Health: h, Reverted: h.RevertVerdict == "healthy"}
	}
	if !prepared {
		// A plain switch, or to the runtime that was current already:
		// nothing was checked.
		h.ID, h.Healthy = "", true
	}
	return h, nil
}

// sequence is the host's part of c for a sequence id, and the probes this
// client dials for it.
func (s *Store) sequence(id string, c Checks) (shellcmd.Health, *dialled) {
	dial := newDialled(s, c)
	h := shellcmd.Health{ID: id, Restart: c.Restart, Exec: c.Exec, Dialled: len(dial.probes),
		Interval: orDur(c.Interval, DefaultCheckInterval), Timeout: orDur(c.Timeout, DefaultCheckTimeout),
		Deadline: orDur(c.Deadline, DefaultCheckDeadline), Stable: max(c.Stable, 0)}
	// A tenth of the try's time is left for the answer to reach the host:
	// a probe that hangs is its service's failure, not a silent client's.
	dial.timeout = h.Timeout * 9 / 10
	return h, dial
}

// checkLines refuses checks the host could not take a line each.
func checkLines(c Checks) error {
	for _, e := range c.Exec {
		if strings.TrimSpace(e) == "" || strings.ContainsAny(e, "\n\r") {
			return fmt.Errorf("check %q: a check is a command of one line", e)
		}
	}
	return nil
}

// seqReader reads a sequence's verdicts as they come into its Health,
// and answers PROBE with the dialled probes' results.
type seqReader struct {
	ctx                                      context.Context
	h                                        *Health
	ph                                       *Phase
	dial                                     *dialled
	tries                                    sync.WaitGroup // the dialled tries in flight, each bounded by the per-try timeout
	unhealthy, reverted, activated, prepared bool
}

func newSeqReader(ctx context.Context, h *Health, dial *dialled) *seqReader {
	return &seqReader{ctx: ctx, h: h, ph: &h.Check, dial: dial}
}

func (rd *seqReader) on(v shellcmd.Verdict, send func(string)) {
	h := rd.h
	switch v.Verb {
	case shellcmd.VerbProbe:
		seq, cur := v.ProbeSeq(), rd.ph
		rd.tries.Add(1)
		go func() {
			defer rd.tries.Done()
			send(rd.dial.try(rd.ctx, seq, cur))
		}()
	case shellcmd.VerbActivated:
		cur, prev := v.Activated()
		h.Current, rd.activated = cur, true
		switch {
		case h.Healthy:
			// An --atomic participant told to go back after its
			// checks passed: what follows is the revert's.
			h.Revert = &Phase{}
			rd.ph = h.Revert
		case !rd.unhealthy:
			h.To, h.From = cur, prev
		}
	case shellcmd.VerbSettled:
		h.Settled = append(h.Settled, settleOf(v))
	case shellcmd.VerbPrepared:
		rd.prepared = true
	case shellcmd.VerbRestarted:
		if rd.prepared { // not a settled record's
			rd.ph.RestartStatus, rd.ph.RestartTook = v.Restarted()
		}
	case shellcmd.VerbProbed:
		pl := v.Probe()
		rd.dial.add(rd.ph, pl.Seq, Probe{Name: pl.Name, OK: pl.OK, Took: pl.Took, Detail: pl.Detail})
	case shellcmd.VerbTry:
		pl := v.Probe()
		rd.dial.set(rd.ph, pl.Seq, pl.OK, pl.Took, pl.Detail)
	case shellcmd.VerbHealthy:
		hl := v.Health()
		h.Healthy, rd.ph.FirstOK, rd.ph.Stable = true, hl.FirstOK, hl.Stable
	case shellcmd.VerbUnhealthy:
		rd.unhealthy, h.Why = true, v.Health().Why
		h.Revert = &Phase{}
		rd.ph = h.Revert
	case shellcmd.VerbReverted:
		hl := v.Health()
		rd.reverted, h.RevertVerdict = true, hl.Verdict
		if hl.Verdict == "none" {
			h.Revert = nil
		}
	}
}

func orDur(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}
