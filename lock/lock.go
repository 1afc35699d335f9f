package lock

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/hoistdev/hoist/remote"
	"github.com/hoistdev/hoist/shellcmd"
	"github.com/hoistdev/hoist/transport"
)

// Lock is the store lock of one host. Set its fields before its first
// command.
type Lock struct {
	host *remote.Host
	root Root
	// AssumedLease is the lease assumed for a record that names none (an
	// earlier version's, or one that does not parse): such a lock may be
	// stolen once it was not renewed for this long. Zero means
	// DefaultLease.
	AssumedLease time.Duration
	// Lease is the lease the locks this client takes carry: a lock whose
	// holder did not renew it for this long may be taken. Commands that
	// work under the lock renew it on the host every quarter lease. Zero
	// means DefaultLease.
	Lease time.Duration
	// Hold, when set, is the token of a manual hold (Acquire) that Run and
	// the store's commands work under instead of taking the lock: the host
	// checks, in the same command, that it still holds the lock, renews
	// its lease while they work, and leaves it held.
	Hold string
	// Owner holds the client's part of the owner record: who, what, which
	// version. Token, boot and time are filled in on the host.
	Owner Record
	// Logger, when set, receives a debug record of every host command
	// (its operation, duration, round trips, exit status and verdict
	// count) and of the facts the host reports.
	Logger *slog.Logger
	// pause stops every command on this lock at the protocol steps it
	// names: a test's (export_test.go).
	pause struct {
		dir string
		at  []string
	}
	// Redial, when set, reaches the host again over a new connection: Run
	// uses it to follow a run whose connection was lost (RunOptions.Reconnect
	// overrides it). The caller closes what it opens.
	Redial func(context.Context) (transport.Transport, error)
}

// New returns the lock of the store under root on the host t reaches
// (transport.Local for this machine, transport.DialSSH for a host). The
// owner record names this process; set Owner.Command and Owner.Message to
// say what it does.
func New(t transport.Transport, root Root) *Lock {
	return &Lock{host: remote.New(t), root: root, Owner: Record{PID: os.Getpid(), Who: whoAmI()}}
}

// on is a Lock like l on the host t reaches (a new connection to l's host).
func (l *Lock) on(t transport.Transport) *Lock {
	return &Lock{host: remote.New(t), root: l.root, AssumedLease: l.AssumedLease, Lease: l.Lease,
		Owner: l.Owner, Logger: l.Logger}
}

// Root is the store root the lock guards.
func (l *Lock) Root() Root { return l.root }

// Transport is how the lock reaches its host.
func (l *Lock) Transport() transport.Transport { return l.host.Transport() }

// Facts returns what the host told about itself in this connection's first
// command, nil before that.
func (l *Lock) Facts() *Facts { return factsFrom(l.host.Facts()) }

// exec runs a call on the host, logged on l.Logger.
func (l *Lock) exec(ctx context.Context, c remote.Call) (*remote.Reply, error) {
	c.Logger = l.Logger
	return l.host.Exec(ctx, c)
}

// Events report progress while a fragment runs. Every field is optional.
type Events struct {
	// Waiting is called once for each holder the host waits behind.
	Waiting func(State)
	// Stole is called when the host took a lock a rule let it take (a
	// stale lease, an exited holder, a previous boot: State.Why); the
	// State describes the lock that was taken.
	Stole func(State)
	// Acquired is called with the token once the host holds the lock.
	Acquired func(token string)
	// Unfinished is called, for a run, with each rollout record the
	// store keeps with no done, once the host holds the lock and before
	// the command starts: the run names them and settles nothing.
	Unfinished func(shellcmd.UnfinishedRecord)
	// Confirm, for a manual hold (Acquire, TryAcquire), is called with the
	// token once the host holds the lock and before this client confirms
	// the hold to the host: a caller that must hand the token on (print it)
	// does it here. An error leaves the hold unconfirmed, and the host
	// releases it at once; the acquire then returns that error.
	Confirm func(token string) error
	// Started is called when a command run under the lock has started.
	Started func()
	// Opened is called once the host command has its session on the host,
	// before its fragment is sent: what should overlap the command (a
	// push's first SFTP channel) can start then.
	Opened func()
}

// Held is a lock acquired for a manual hold.
type Held struct {
	Token string
	// Stolen describes the lock this acquire took over, when it stole one.
	Stolen *State
}

// UnknownError is contact lost after the host took the lock for this client:
// the lock may be held with Token. It matches transport.ErrUnknownOutcome.
type UnknownError struct {
	Token string
	Err   error
}

func (e *UnknownError) Error() string {
	return fmt.Sprintf("%v; the lock may be held with token %s (release it with hoist lock release --token %s)", e.Err, e.Token, e.Token)
}
func (e *UnknownError) Unwrap() error { return e.Err }

func (l *Lock) params(token string) shellcmd.Params {
	p := shellcmd.Params{
		Root:   shellcmd.Root(l.root),
		Token:  token,
		Record: shellcmd.Record(l.Owner).Encode(),
		Stale:  l.assumedLease(),
		Lease:  cmp.Or(l.Lease, DefaultLease),
	}
	p.Pause.Dir, p.Pause.At = l.pause.dir, l.pause.at
	return p
}

// spareTokens is how many tokens a command that waits for the lock brings
// besides its first: after an attempt whose token is spent
// (docs/protocol.md, Create) the host goes on with the next, and when none
// is left the acquire ends busy.
const spareTokens = 4

// acquiring is the params of a command that may take the lock: a new token
// and new spares, none of them ever sent before.
func (l *Lock) acquiring() shellcmd.Params {
	p := l.params(uuid.NewString())
	p.Spares = make([]string, spareTokens)
	for i := range p.Spares {
		p.Spares[i] = uuid.NewString()
	}
	return p
}

// ours reports whether token is one the command of p may hold the lock
// with: its token or one of its spares.
func ours(p shellcmd.Params, token string) bool {
	return token != "" && (token == p.Token || slices.Contains(p.Spares, token))
}

// working is the params of a command that works under the lock: with new
// tokens, or under the manual hold l.Hold (then its scratch directory gets a
// name of its own, since several commands may work under one hold).
func (l *Lock) working() shellcmd.Params {
	if l.Hold == "" {
		return l.acquiring()
	}
	p := l.params(l.Hold)
	p.Hold, p.Run = true, uuid.NewString()
	return p
}

func (l *Lock) assumedLease() time.Duration { return cmp.Or(l.AssumedLease, DefaultLease) }

// Status reads the lock. It changes nothing on the host.
func (l *Lock) Status(ctx context.Context) (State, error) {
	r, err := l.exec(ctx, remote.Call{Fragment: shellcmd.Render(shellcmd.OpStatus, l.params(""))})
	if err != nil {
		return State{}, err
	}
	var s State
	v := r.Last()
	switch v.Verb {
	case shellcmd.VerbNoStore:
		s = State{}
	case shellcmd.VerbFree:
		s = State{Store: true}
	case shellcmd.VerbLock:
		s = l.state(v.Holder())
	default:
		return State{}, l.failure("status", r)
	}
	s.Host = l.Facts()
	for _, d := range r.Verdicts {
		switch d.Verb {
		case shellcmd.VerbDebris:
			s.Debris = append(s.Debris, d.Path())
		case shellcmd.VerbUnfinished:
			s.Unfinished = append(s.Unfinished, d.Unfinished())
		}
	}
	return s, nil
}

// Acquire takes the lock for a manual hold, waiting on the host up to wait
// (zero makes one attempt, including a steal). The store is created if
// missing. The host keeps the lock only once this client has confirmed it
// received the token, so an acquire whose client went away leaves nothing
// behind.
func (l *Lock) Acquire(ctx context.Context, wait time.Duration, ev Events) (*Held, error) {
	p := l.acquiring()
	p.Wait = wait
	return l.acquire(ctx, p, ev)
}

// TryAcquire makes one attempt, stealing a lock a rule lets it take, and
// never waits. It returns ErrNoStore, without creating anything, when the
// store does not exist, and a *BusyError when the lock is held.
func (l *Lock) TryAcquire(ctx context.Context, ev Events) (*Held, error) {
	p := l.acquiring()
	p.Try = true
	return l.acquire(ctx, p, ev)
}

func (l *Lock) acquire(ctx context.Context, p shellcmd.Params, ev Events) (*Held, error) {
	// The token the host holds the lock with is the one ACQUIRED names:
	// the first, or a spare after a spent attempt.
	held := &Held{}
	acked := false
	var confirmErr error
	r, err := l.waiting(ctx, remote.Call{Fragment: shellcmd.Render(shellcmd.OpAcquire, p)}, ev, nil, func(v shellcmd.Verdict, ctl *control) {
		switch v.Verb {
		case shellcmd.VerbAcquired:
			if held.Token != "" || !ours(p, v.Token()) {
				break
			}
			held.Token = v.Token()
			if ev.Confirm != nil {
				if confirmErr = ev.Confirm(held.Token); confirmErr != nil {
					ctl.close() // EOF: the host releases what it took
					break
				}
			}
			acked = true
			ctl.send("ack")
		case shellcmd.VerbStolen:
			s := l.state(v.Holder())
			held.Stolen = &s
		}
	})
	if confirmErr != nil {
		return nil, fmt.Errorf("the hold was not confirmed, and the host released it: %w", confirmErr)
	}
	if err != nil {
		if acked && isUnknown(err) {
			return nil, &UnknownError{Token: held.Token, Err: err}
		}
		return nil, err
	}
	v := r.Last()
	switch v.Verb {
	case shellcmd.VerbHolding:
		if held.Token != "" && v.Token() == held.Token {
			return held, nil
		}
	case shellcmd.VerbBusy:
		return nil, &BusyError{Holder: l.state(v.Holder())}
	case shellcmd.VerbNoStore:
		return nil, ErrNoStore
	case shellcmd.VerbAbandoned:
		return nil, ErrAbandoned
	}
	return nil, l.failure("acquire", r)
}

// Refresh renews the lease of the manual hold token (on the host, owner
// checked) and returns that lease. A hold whose lease ran out before the
// renewal, or that someone else holds now, is a *LostError; ErrNotHeld when
// the lock is free.
func (l *Lock) Refresh(ctx context.Context, token string) (time.Duration, error) {
	if !ValidToken(token) {
		return 0, badToken(token)
	}
	r, err := l.exec(ctx, remote.Call{Fragment: shellcmd.Render(shellcmd.OpRefresh, l.params(token))})
	if err != nil {
		return 0, err
	}
	v := r.Last()
	switch v.Verb {
	case shellcmd.VerbRefreshed:
		return v.Lease(), nil
	case shellcmd.VerbLost:
		return 0, l.lostAs(v.Holder(), token)
	case shellcmd.VerbNotHeld:
		return 0, ErrNotHeld
	case shellcmd.VerbNoStore:
		return 0, ErrNoStore
	}
	return 0, l.failure("refresh", r)
}

// Release removes the lock if, and only if, it still carries token. A lock
// someone else holds now is left alone and a *LostError says whose it is.
func (l *Lock) Release(ctx context.Context, token string) error {
	if !ValidToken(token) {
		return badToken(token)
	}
	r, err := l.exec(ctx, remote.Call{Fragment: shellcmd.Render(shellcmd.OpRelease, l.params(token))})
	if err != nil {
		return err
	}
	return l.releaseVerdict(r.Last(), r)
}

func (l *Lock) releaseVerdict(v shellcmd.Verdict, r *remote.Reply) error {
	switch v.Verb {
	case shellcmd.VerbReleased, shellcmd.VerbKept:
		return nil
	case shellcmd.VerbLost:
		return l.lost(v.Holder())
	case shellcmd.VerbNotHeld:
		return ErrNotHeld
	}
	return l.failure("release", r)
}

// noRecord is the token that names, to a forced Break, a lock whose record
// is missing or unreadable (h_op_break compares it with the record's).
const noRecord = "-"

// Break removes the lock if a rule makes it stealable (a stale lease, an
// exited holder, a previous boot) or, with force, if its token is token
// ("-" names a lock without a readable record). It returns the State of the
// lock it removed; ErrNotStealable when no rule applies.
func (l *Lock) Break(ctx context.Context, force bool, token string) (State, error) {
	if force && token != noRecord && !ValidToken(token) {
		return State{}, badToken(token)
	}
	p := l.params(token)
	p.Force = force
	r, err := l.exec(ctx, remote.Call{Fragment: shellcmd.Render(shellcmd.OpBreak, p)})
	if err != nil {
		return State{}, err
	}
	v := r.Last()
	switch v.Verb {
	case shellcmd.VerbBroken:
		return l.state(v.Holder()), nil
	case shellcmd.VerbNotStale:
		return l.state(v.Holder()), ErrNotStealable
	case shellcmd.VerbNotOwner:
		return l.state(v.Holder()), ErrNotOwner
	case shellcmd.VerbFree:
		return State{Store: true}, ErrNotHeld
	case shellcmd.VerbNoStore:
		return State{}, ErrNoStore
	}
	return State{}, l.failure("break", r)
}

// state is the State of the holder a verdict names.
func (l *Lock) state(h shellcmd.Holder) State {
	return stateFrom(h, l.assumedLease(), l.Facts())
}

// progress turns the verdicts common to waiting fragments into events.
func (l *Lock) progress(v shellcmd.Verdict, ev Events) {
	switch v.Verb {
	case shellcmd.VerbHeld:
		if ev.Waiting != nil {
			ev.Waiting(l.state(v.Holder()))
		}
	case shellcmd.VerbStolen:
		if ev.Stole != nil {
			ev.Stole(l.state(v.Holder()))
		}
	case shellcmd.VerbAcquired:
		if ev.Acquired != nil {
			ev.Acquired(v.Token())
		}
	}
}

// failure turns a reply without an expected final verdict into an error. An
// ERROR verdict becomes a *HostError; anything else is a protocol error, and
// is never read as success.
func (l *Lock) failure(op string, r *remote.Reply) error {
	v := r.Last()
	if v.Verb == shellcmd.VerbError {
		return hostError(v)
	}
	if v.Verb == "" {
		return fmt.Errorf("%s: the host gave no answer (exit %d: %s)", op, r.Status, shellcmd.Printable(r.NoiseLine()))
	}
	return unexpected(op, v)
}

func isUnknown(err error) bool { return errors.Is(err, transport.ErrUnknownOutcome) }

// control is the client's end of a fragment's stdin: control lines go in, and
// closing it (or this process dying) is EOF on the host.
type control struct {
	r  *io.PipeReader
	w  *io.PipeWriter
	mu sync.Mutex
}

func newControl() *control {
	r, w := io.Pipe()
	return &control{r: r, w: w}
}

// send writes a line without blocking the caller; a host that is gone is
// not an error here, the exec's outcome reports it.
func (c *control) send(line string) {
	go func() { _, _ = io.WriteString(c.w, line+"\n") }()
}

// sendLines writes lines (each ending in a newline) without blocking the
// caller; the lines of one call stay together.
func (c *control) sendLines(lines string) {
	go func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		_, _ = io.WriteString(c.w, lines)
	}()
}

// feed writes lines, blocking until they are taken (or the channel is
// closed); calls are written in their order.
func (c *control) feed(lines string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, err := io.WriteString(c.w, lines)
	return err
}

func (c *control) close() { c.w.Close() }

// ValidToken reports whether token can be a lock's owner token: a UUID as
// hoist makes them, in lower case.
func ValidToken(token string) bool {
	u, err := uuid.Parse(token)
	return err == nil && u.String() == token
}

func badToken(token string) error {
	return fmt.Errorf("%q is not a lock token (a UUID, as hoist lock acquire prints it); check it with hoist lock status", shellcmd.Printable(token))
}
