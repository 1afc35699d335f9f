package lock

import (
	"context"
	"fmt"

	"github.com/hoistdev/hoist/remote"
	"github.com/hoistdev/hoist/shellcmd"
	"github.com/hoistdev/hoist/transport"
)

// Wire is the plumbing between package lock and package store, whose
// operations are host commands on a lock's store: it gives them the lock's
// parameters, runs them with the lock's waiting events and reads the lock's
// part of their replies. A library user has no use for it: package store's
// operations are the API.
//
// Its types are hoist's wire layer (packages shellcmd and remote), which
// promise no compatibility, and so does Wire. It is exported only because
// package store is another package: an internal/ folder of lock's could be
// imported by lock's own subfolders only, and hoist's top level, where a
// folder both could import would go, is fixed.
type Wire struct{ l *Lock }

// Wire returns l's plumbing for package store (see [Wire]).
func (l *Lock) Wire() Wire { return Wire{l} }

// Params returns what every fragment on this lock needs, with new tokens: a
// first and its spares, which a command that takes the lock may go on with
// (docs/protocol.md, Create); one Params for one command. With [Lock.Hold]
// set they work under that manual hold.
func (w Wire) Params() shellcmd.Params { return w.l.working() }

// Exec runs a fragment on the lock's host. One that waits for the lock on
// the host, works under it and has the host release it (package store's
// promote, activate, pin, gc) reports the waiting events like
// [Lock.Acquire], and a closed stop makes the host stop waiting. The
// reply's verdicts are the caller's to read; [Wire.ReplyError] reads the lock's.
func (w Wire) Exec(ctx context.Context, fr shellcmd.Fragment, ev Events, stop <-chan struct{}) (*remote.Reply, error) {
	return w.l.waiting(ctx, remote.Call{Fragment: fr}, ev, stop, nil)
}

// ExecAnswering is Exec for a fragment that asks the client as it goes (a
// health-checked switch's PROBE): each verdict goes to on first, which
// may answer on the command's standard input with send (lines each ending
// in a newline, kept together; from any goroutine, until it returns).
func (w Wire) ExecAnswering(ctx context.Context, fr shellcmd.Fragment, ev Events, stop <-chan struct{},
	on func(v shellcmd.Verdict, send func(lines string))) (*remote.Reply, error) {
	return w.l.waiting(ctx, remote.Call{Fragment: fr}, ev, stop, func(v shellcmd.Verdict, c *control) {
		on(v, c.sendLines)
	})
}

// ExecFeeding is Exec for a fragment that reads what the client sends as it
// goes (a promotion begun with its upload): each verdict goes to on first,
// with feed, which writes lines (each ending in a newline) on the command's
// standard input in the order of its calls, returning once the transport
// took them, and end, which closes that input (end of file on the host).
// Both may be called from any goroutine until ExecFeeding returns; feed
// then fails.
func (w Wire) ExecFeeding(ctx context.Context, fr shellcmd.Fragment, ev Events, stop <-chan struct{},
	on func(v shellcmd.Verdict, feed func(lines string) error, end func())) (*remote.Reply, error) {
	return w.l.waiting(ctx, remote.Call{Fragment: fr}, ev, stop, func(v shellcmd.Verdict, c *control) {
		on(v, c.feed, c.close)
	})
}

// ReplyError reads the lock's part of a reply: a *BusyError, ErrAbandoned,
// ErrNoStore, a *LostError (fencing found the lock taken over, or the
// release did), a *NotHolderError (under a manual hold whose token the
// store's lock did not have when the command began), a *HostError, or nil
// when the reply holds none of them. A reply without any verdict is an
// error too, and one that took the lock without saying it released it is
// an unknown outcome.
func (w Wire) ReplyError(r *remote.Reply, op string) error { return w.l.replyErr(r, op) }

// waiting runs a fragment that may wait for the lock on the host, with this
// client's control channel on its stdin: a closed stop sends "stop", and
// closing the channel when waiting ends is EOF on the host. Each verdict goes
// first to also (which may answer through the channel), then to the events.
func (l *Lock) waiting(ctx context.Context, call remote.Call, ev Events, stop <-chan struct{},
	also func(shellcmd.Verdict, *control)) (*remote.Reply, error) {
	ctl := newControl()
	defer ctl.close()
	done := make(chan struct{})
	defer close(done)
	if stop != nil {
		go func() {
			select {
			case <-stop:
				ctl.send("stop")
			case <-done:
			}
		}()
	}
	call.Stdin = ctl.r
	call.Opened = ev.Opened
	call.OnVerdict = func(v shellcmd.Verdict) {
		if also != nil {
			also(v, ctl)
		}
		l.progress(v, ev)
	}
	return l.exec(ctx, call)
}

// lost reads a LOST verdict's holder: the lock someone else holds now.
func (l *Lock) lost(h shellcmd.Holder) *LostError { return l.lostAs(h, "") }

// lostAs is lost for a command whose token was mine: a record that is still
// mine means its lease ran out before it was renewed.
func (l *Lock) lostAs(h shellcmd.Holder, mine string) *LostError {
	if h.Raw == "" {
		return &LostError{Holder: State{Store: true}}
	}
	e := &LostError{Holder: l.state(h)}
	e.Expired = mine != "" && e.Holder.RecordOK && e.Holder.Record.Token == mine
	return e
}

// lostUnder reads a LOST verdict of a command whose token was mine: under
// a manual hold, before the command said it had the lock (the hold is
// checked first, and nothing is done before), it means the hold's token is
// not the store's lock, unless the record is the hold's own, whose lease
// ran out.
func (l *Lock) lostUnder(h shellcmd.Holder, mine string, acquired bool) error {
	e := l.lostAs(h, mine)
	if l.Hold == "" || acquired || e.Expired {
		return e
	}
	return &NotHolderError{Token: l.Hold, Holder: e.Holder}
}

// replyErr is [Wire.ReplyError].
func (l *Lock) replyErr(r *remote.Reply, op string) error {
	acquired, released, mine := false, false, l.Hold
	for _, v := range r.Verdicts {
		switch v.Verb {
		case shellcmd.VerbAcquired:
			acquired, mine = true, v.Token()
		case shellcmd.VerbReleased, shellcmd.VerbKept:
			released = true
		case shellcmd.VerbBusy:
			return &BusyError{Holder: l.state(v.Holder())}
		case shellcmd.VerbAbandoned:
			return ErrAbandoned
		case shellcmd.VerbNoStore:
			return ErrNoStore
		case shellcmd.VerbLost:
			return l.lostUnder(v.Holder(), mine, acquired)
		case shellcmd.VerbError:
			return hostError(v)
		}
	}
	if len(r.Verdicts) == 0 {
		return l.failure(op, r)
	}
	if acquired && !released {
		// The host shell stopped between taking the lock and releasing it:
		// what it did and whether the lock is still held are unknown.
		return transport.UnknownOutcome(fmt.Errorf("%s: the host stopped before it released the lock (exit %d)", op, r.Status))
	}
	return nil
}
