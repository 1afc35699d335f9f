package main

import (
	"context"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/hoistdev/hoist/lock"
)

func (a *app) cmdLock(cmd string) int {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sig := a.interrupted(ctx, func(os.Signal) { cancel() }, func(s os.Signal) { os.Exit(signalExit(s)) })
	var code int
	switch cmd {
	case "lock status":
		code = a.fleet(ctx, a.lockStatus)
	case "lock acquire":
		code = a.fleet(ctx, a.lockAcquire)
	case "lock release":
		code = a.fleet(ctx, func(ctx context.Context, l *lock.Lock) result {
			if err := l.Release(ctx, a.token); err != nil {
				return result{err: err}
			}
			a.say(l.Host().Name(), "released")
			return result{json: map[string]any{"released": true}}
		})
	case "lock break":
		code = a.fleet(ctx, a.lockBreak)
	default:
		return a.usage(usageErr("unknown command %q (lock takes status, acquire, release or break)", cmd))
	}
	if s := sig(); s != 0 {
		return s
	}
	return code
}

func (a *app) lockStatus(ctx context.Context, l *lock.Lock) result {
	s, err := l.Status(ctx)
	if err != nil {
		return result{err: err}
	}
	r := result{json: stateJSON(s)}
	name := l.Host().Name()
	switch {
	case !s.Store:
		r.data = fmt.Sprintf("%s: free (no store yet)", name)
	case !s.Locked:
		r.data = fmt.Sprintf("%s: free", name)
	default:
		token := s.Record.Token
		if !s.RecordOK {
			token = "-"
		}
		r.data = fmt.Sprintf("%s: locked by %s; token %s; %s", name, s.Describe(), token, s.Reason())
		if match, known := s.BootMatch(); known && !match {
			r.data += "; recorded on another boot"
		}
	}
	for _, d := range s.Debris {
		r.data += fmt.Sprintf("\n%s: %s was left by an earlier hoist and nothing uses it; remove it (rm -r)", name, d)
	}
	return r
}

// lockAcquire takes a manual hold and prints its token. If this process is
// interrupted after the host confirmed the hold, the hold is released again
// (owner-checked) before exiting.
func (a *app) lockAcquire(ctx context.Context, l *lock.Lock) result {
	name := l.Host().Name()
	var mu sync.Mutex
	var confirmed string
	ev := a.waitEvents(name)
	ev.Acquired = func(token string) {
		a.debug(name, "the host holds the lock for us (token %s)", token)
		mu.Lock()
		confirmed = token
		mu.Unlock()
	}
	var held *lock.Held
	var err error
	if a.try {
		held, err = l.TryAcquire(ctx, ev)
	} else {
		held, err = l.Acquire(ctx, a.wait, ev)
	}
	a.clearLive()
	if ctx.Err() != nil {
		mu.Lock()
		token := confirmed
		mu.Unlock()
		if token != "" {
			rctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
			defer cancel()
			if rerr := l.Release(rctx, token); rerr == nil {
				a.say(name, "interrupted: released the lock it had just taken")
			} else {
				a.say(name, "interrupted: could not release token %s: %v", token, rerr)
			}
		}
		if token == "" {
			a.say(name, "interrupted: stopped waiting; nothing is held")
		}
		return result{json: map[string]any{"interrupted": true}}
	}
	if err != nil {
		return result{err: err}
	}
	r := result{json: map[string]any{"token": held.Token}}
	if a.multi {
		r.data = name + " " + held.Token
	} else {
		r.data = held.Token
	}
	if held.Stolen != nil {
		r.json["stolen"] = stateJSON(*held.Stolen)
	}
	return r
}

func (a *app) lockBreak(ctx context.Context, l *lock.Lock) result {
	s, err := l.Break(ctx, a.force, a.token)
	if err != nil {
		r := result{err: err}
		if s.Locked {
			r.err = fmt.Errorf("%w: held by %s; %s", err, s.Describe(), s.Reason())
		}
		return r
	}
	a.say(l.Host().Name(), "broke the lock of %s (%s)", s.Describe(), s.Reason())
	return result{json: map[string]any{"broken": stateJSON(s)}}
}

// waitEvents says once per holder who holds the lock, since when and for
// what, keeps a live line on a terminal, and says why a lock was taken over.
func (a *app) waitEvents(host string) lock.Events {
	return lock.Events{
		Waiting: func(s lock.State) {
			if a.wait == 0 || a.try {
				return // one attempt: the busy error says it all
			}
			a.say(host, "waiting for the store lock, held by %s (%s)", s.Describe(), s.Reason())
			a.startLive(host, a.wait)
		},
		Stole: func(s lock.State) {
			a.say(host, "took over the store lock of %s: %s", s.Describe(), s.Reason())
		},
	}
}
