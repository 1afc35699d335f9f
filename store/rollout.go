package store

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/hoistdev/hoist/lock"
	"github.com/hoistdev/hoist/remote"
	"github.com/hoistdev/hoist/shellcmd"
)

// Rollout is one host's place in an --atomic rollout (docs/rollout.md,
// "All or nothing"): the rollout's id, every target of it in the order
// given, this host's index among them and the decider's (the first host
// that takes part), and the hold lease its participant keeps its lock
// with (zero: DefaultHoldLease).
type Rollout struct {
	ID             string
	Hosts          []string
	Index, Decider int
	HoldLease      time.Duration
}

// DefaultHoldLease is an --atomic participant's lease: the time after the
// coordinator was last heard that the host takes it for gone.
const DefaultHoldLease = 30 * time.Second

// ErrInDoubt: the host voted ready and has no outcome; it changed nothing
// and released its lock: hoist rollout resume finishes it.
var ErrInDoubt = errors.New("in doubt: voted ready, and the decision did not reach this host")

// errEnded: the host command ended before saying what was waited for.
var errEnded = errors.New("the host command ended")

// session is a host command that a client talks to as it goes: the
// verdicts a step waits for queue up, and a beat goes to the host every
// quarter lease so that it knows the client is there.
type session struct {
	queue chan shellcmd.Verdict
	// pending are the verdicts read from queue that no step has taken yet
	// (a DONE that came while a vote was waited for).
	pending []shellcmd.Verdict
	mu      sync.Mutex
	send    func(string)
	done    chan struct{}
	reply   *remote.Reply
	err     error // the exec's, or the reply's
}

// waitFor are the verdicts a session's steps wait for.
var waitFor = []shellcmd.Verb{shellcmd.VerbPrepared, shellcmd.VerbHealthy, shellcmd.VerbReverted, shellcmd.VerbVoted,
	shellcmd.VerbDecided, shellcmd.VerbInDoubt, shellcmd.VerbDone, shellcmd.VerbPlan, shellcmd.VerbNoRecord}

func (s *Store) session(ctx context.Context, op *shellcmd.Op, p shellcmd.Params, lease time.Duration, ev lock.Events,
	stop <-chan struct{}, also func(shellcmd.Verdict, func(string))) *session {
	ss := &session{queue: make(chan shellcmd.Verdict, 64), done: make(chan struct{})}
	go func() {
		defer close(ss.done)
		r, err := s.wire().ExecAnswering(ctx, shellcmd.Render(op, p), ev, stop, func(v shellcmd.Verdict, send func(string)) {
			ss.mu.Lock()
			ss.send = send
			ss.mu.Unlock()
			if also != nil {
				also(v, send)
			}
			if slices.Contains(waitFor, v.Verb) {
				ss.queue <- v
			}
		})
		ss.reply = r
		if err == nil {
			err = s.err(r, op.Name)
		}
		ss.err = err
	}()
	go func() {
		t := time.NewTicker(lease / 4)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				ss.say("beat")
			case <-ss.done:
				return
			}
		}
	}()
	return ss
}

// say sends a control line (before the host said anything, there is no
// command to send it to yet: it is dropped).
func (ss *session) say(line string) {
	ss.mu.Lock()
	send := ss.send
	ss.mu.Unlock()
	if send != nil {
		send(line + "\n")
	}
}

// next is the first verdict of those waited for, not taken yet, that is
// one of verbs; an error when the command ended first (its own, or
// errEnded). Its steps call it from one goroutine at a time.
func (ss *session) next(ctx context.Context, verbs ...shellcmd.Verb) (shellcmd.Verdict, error) {
	for i, v := range ss.pending {
		if slices.Contains(verbs, v.Verb) {
			ss.pending = slices.Delete(ss.pending, i, i+1)
			return v, nil
		}
	}
	for {
		select {
		case v := <-ss.queue:
			if slices.Contains(verbs, v.Verb) {
				return v, nil
			}
			ss.pending = append(ss.pending, v)
		case <-ss.done:
			for {
				select {
				case v := <-ss.queue:
					if slices.Contains(verbs, v.Verb) {
						return v, nil
					}
					ss.pending = append(ss.pending, v)
				default:
					if ss.err != nil {
						return shellcmd.Verdict{}, ss.err
					}
					return shellcmd.Verdict{}, errEnded
				}
			}
		case <-ctx.Done():
			return shellcmd.Verdict{}, ctx.Err()
		}
	}
}

// Participant is one host's part in an --atomic rollout: a host command
// holding the host's lock from its record to its end, told each step on
// its standard input. A client that goes away (EOF, or silent for a hold
// lease) leaves the host to settle by itself: it goes back unless it has
// voted ready, and then is in doubt.
type Participant struct {
	ss       *session
	rd       *seqReader
	switched chan struct{}
	once     sync.Once
	// Health is the switch's account, filled in as the host says it.
	Health *Health
	// From is what current was when the record was made ("" for nothing).
	From string
}

// Participate starts the participant for r on this host, to runtime id,
// with the checks of c (a closed c.Stop stops a wait for the lock, and a
// switch not yet found healthy: the host goes back by itself); it returns once the host has its record in place
// (PREPARED) and nothing is switched, or with the error that stopped it
// (busy, the runtime marked bad, a record in doubt here, ...).
func (s *Store) Participate(ctx context.Context, id string, r Rollout, c Checks, wait time.Duration, ev lock.Events) (*Participant, error) {
	if !ValidName(id) {
		return nil, fmt.Errorf("%w: %q is not a runtime id", ErrNotFound, id)
	}
	if err := checkLines(c); err != nil {
		return nil, err
	}
	lease := r.HoldLease
	if lease <= 0 {
		lease = DefaultHoldLease
	}
	p := s.wire().Params()
	p.ID, p.Wait, p.Force, p.Lease = id, wait, c.Force, lease
	var dial *dialled
	p.Health, dial = s.sequence(r.ID, c)
	p.Rollout = shellcmd.Rollout{Hosts: r.Hosts, Index: r.Index, Decider: r.Decider}
	pt := &Participant{Health: &Health{ID: r.ID}, switched: make(chan struct{})}
	pt.rd = newSeqReader(ctx, pt.Health, dial)
	pt.ss = s.session(ctx, shellcmd.OpRollout, p, lease, ev, c.Stop, func(v shellcmd.Verdict, send func(string)) {
		pt.rd.on(v, send)
		if v.Verb == shellcmd.VerbActivated {
			pt.once.Do(func() { close(pt.switched) })
		}
	})
	v, err := pt.ss.next(ctx, shellcmd.VerbPrepared)
	if err != nil {
		return nil, notSaid(err, "its record")
	}
	_, pt.From, pt.Health.To = v.Prepared()
	pt.Health.From = pt.From
	return pt, nil
}

// notSaid is err, for a command that ended before saying what.
func notSaid(err error, what string) error {
	if errors.Is(err, errEnded) {
		return fmt.Errorf("the host ended the rollout's command before it had %s: check hoist history and hoist rollout status", what)
	}
	return err
}

// Switch switches the host, restarts and checks it: the Health when it
// is healthy; an *UnhealthyError when it failed its checks (the host has
// voted aborted, or decided abort on the decider, and gone back by
// itself).
func (pt *Participant) Switch(ctx context.Context) (*Health, error) {
	pt.ss.say("switch")
	v, err := pt.ss.next(ctx, shellcmd.VerbHealthy, shellcmd.VerbReverted)
	pt.rd.tries.Wait()
	if err != nil {
		return pt.Health, notSaid(err, "a verdict")
	}
	if v.Verb == shellcmd.VerbHealthy {
		return pt.Health, nil
	}
	return pt.Health, &UnhealthyError{Health: pt.Health, Reverted: pt.Health.RevertVerdict == "healthy"}
}

// Switched is closed once the host said it switched current (the first
// ACTIVATED after Switch).
func (pt *Participant) Switched() <-chan struct{} { return pt.switched }

// Ended is closed once the host command ended.
func (pt *Participant) Ended() <-chan struct{} { return pt.ss.done }

// Vote asks a host that is not the decider for its vote: ready, or
// aborted when a settler wrote that first (the host then goes back).
func (pt *Participant) Vote(ctx context.Context) (string, error) {
	pt.ss.say("go")
	v, err := pt.ss.next(ctx, shellcmd.VerbVoted)
	if err != nil {
		return "", notSaid(err, "voted")
	}
	return v.Rollout().Vote, nil
}

// Decide asks the decider to commit: the decision as written, commit, or
// abort when one was written first. The decider then finishes by it.
func (pt *Participant) Decide(ctx context.Context) (string, error) {
	pt.ss.say("commit")
	v, err := pt.ss.next(ctx, shellcmd.VerbDecided)
	if err != nil {
		return "", notSaid(err, "decided")
	}
	return v.Rollout().Decision, nil
}

// Finish tells the host word (commit or abort; "" tells nothing: the
// host finishes by what it knows, as the decider does after deciding)
// and returns the side it finished on (to or from); ErrInDoubt when it
// voted ready and was told nothing (settle).
func (pt *Participant) Finish(ctx context.Context, word string) (string, error) {
	if word != "" {
		pt.ss.say(word)
	}
	v, err := pt.ss.next(ctx, shellcmd.VerbDone, shellcmd.VerbInDoubt)
	if err != nil {
		return "", notSaid(err, "finished")
	}
	if v.Verb == shellcmd.VerbInDoubt {
		return "", ErrInDoubt
	}
	return v.Rollout().Side, nil
}

// Wait waits for the host command's end: its error (nil when it released
// its lock).
func (pt *Participant) Wait() error {
	<-pt.ss.done
	return pt.ss.err
}

// RolloutPlan is what a host's record of a rollout says of its place
// in it: Found is false when there is none; a tombstone (a resume ended
// the rollout here before it was prepared) has Index and Decider -1, and
// no From or To. A record of a rollout in batches (or of one host's
// health-checked switch) has no decider either, and its runtimes: it is
// Local, settled by the local rule alone (Resumer.Tell with "settle").
type RolloutPlan struct {
	ID, From, To   string
	Found          bool
	Index, Decider int
	Hosts          []string
	// Plan is a batch record's plan of its rollout, as the host said it
	// ("" for none: a record of an older hoist): ParseBatchPlan reads it.
	Plan string
}

func recordOf(v shellcmd.Verdict) RolloutPlan {
	l := v.Rollout()
	return RolloutPlan{ID: l.ID, From: l.From, To: l.To, Found: v.Verb == shellcmd.VerbPlan, Index: l.Index, Decider: l.Decider, Hosts: l.Hosts, Plan: l.Plan}
}

// Local: a record with no decider that is not a tombstone.
func (r RolloutPlan) Local() bool {
	return r.Found && r.Decider < 0 && r.To != ""
}

// Resumer is a resume's host command on one host (docs/rollout.md,
// "Resume"): it holds the host's lock, has settled every other unfinished
// record, and waits for the resumer's word on the record of the rollout.
type Resumer struct {
	ss *session
	// Record is that record.
	Record RolloutPlan

	mu      sync.Mutex
	settled []Settle
}

// Settled is what the local rule did on this host so far: every record
// it settled (the other unfinished ones first, then the rollout's own
// when the word was to settle or finish it), each with how its checks
// went after the settle.
func (rs *Resumer) Settled() []Settle {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	return slices.Clone(rs.settled)
}

// Resume starts the resume of rollout id on this host; it returns once
// the host holds its lock and said what its record is.
func (s *Store) Resume(ctx context.Context, id string, lease, wait time.Duration, ev lock.Events) (*Resumer, error) {
	if lease <= 0 {
		lease = DefaultHoldLease
	}
	p := s.wire().Params()
	p.Health.ID, p.Wait, p.Lease = id, wait, lease
	rs := &Resumer{}
	rs.ss = s.session(ctx, shellcmd.OpResume, p, lease, ev, nil, func(v shellcmd.Verdict, _ func(string)) {
		if v.Verb == shellcmd.VerbSettled {
			rs.mu.Lock()
			rs.settled = append(rs.settled, settleOf(v))
			rs.mu.Unlock()
		}
	})
	v, err := rs.ss.next(ctx, shellcmd.VerbPlan, shellcmd.VerbNoRecord)
	if err != nil {
		return nil, notSaid(err, "read its record")
	}
	rs.Record = recordOf(v)
	return rs, nil
}

// Decide, on the decider: abort unless a decision is there (a tombstone
// when there is no record), and finish by it. The decision, and the side
// the host finished on ("" for a tombstone).
func (rs *Resumer) Decide(ctx context.Context) (decision, side string, err error) {
	rs.ss.say("decide")
	v, err := rs.ss.next(ctx, shellcmd.VerbDecided)
	if err != nil {
		return "", "", notSaid(err, "decided")
	}
	decision = v.Rollout().Decision
	if rs.Record.Found && rs.Record.Index >= 0 {
		d, err := rs.ss.next(ctx, shellcmd.VerbDone)
		if err != nil {
			return decision, "", notSaid(err, "finished")
		}
		side = d.Rollout().Side
	}
	return decision, side, rs.Wait()
}

// Tell gives another host the decision (commit or abort), or settle when
// the decider could not be read: the side it finished on, "" when it has
// no record (or a tombstone), ErrInDoubt when it voted ready and was told settle.
func (rs *Resumer) Tell(ctx context.Context, word string) (string, error) {
	rs.ss.say(word)
	if !rs.Record.Found || (rs.Record.Index < 0 && !rs.Record.Local()) {
		// No record, or a tombstone: nothing to finish here.
		return "", rs.Wait()
	}
	v, err := rs.ss.next(ctx, shellcmd.VerbDone, shellcmd.VerbInDoubt)
	if err != nil {
		return "", notSaid(err, "finished")
	}
	side := v.Rollout().Side
	if v.Verb == shellcmd.VerbInDoubt {
		return "", errors.Join(ErrInDoubt, rs.Wait())
	}
	return side, rs.Wait()
}

// Leave ends the resume on this host without finishing its record: the
// host releases its lock, and the record stays as it was.
func (rs *Resumer) Leave() error {
	rs.ss.say("leave")
	return rs.Wait()
}

// Wait waits for the resume's host command to end.
func (rs *Resumer) Wait() error {
	<-rs.ss.done
	return rs.ss.err
}
