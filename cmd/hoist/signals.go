package main

import (
	"context"
	"os"
	"sync"
)

// interrupted turns signals into cancellations while ctx lives. The first
// SIGINT, SIGTERM or SIGHUP calls first and decides the exit status (130,
// 143, 129); a second one calls second. The returned function gives the
// first signal, or nil while none has come; it is safe to call from any
// goroutine.
func (a *app) interrupted(ctx context.Context, first, second func(os.Signal)) func() os.Signal {
	go func() {
		n := 0
		for {
			select {
			case <-ctx.Done():
				return
			case s := <-a.signals:
				n++
				if n == 1 {
					a.mu.Lock()
					a.signal = s
					a.mu.Unlock()
					first(s)
				} else if second != nil {
					second(s)
				}
			}
		}
	}()
	return a.caught
}

// caught is the first signal received, or nil.
func (a *app) caught() os.Signal {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.signal
}

// untilSignal runs fn with a context that the first SIGINT, SIGTERM or
// SIGHUP cancels at once, and that decides the exit status: for a step
// that has nothing on a host to stop first (reading and hashing the
// artifact). It returns once nothing listens for signals any more, so one
// that comes later is the next step's.
func (a *app) untilSignal(fn func(ctx context.Context) error) error {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan struct{})
	go func() {
		defer close(done)
		select {
		case <-ctx.Done():
		case s := <-a.signals:
			a.mu.Lock()
			a.signal = s
			a.mu.Unlock()
			cancel()
		}
	}()
	err := fn(ctx)
	cancel()
	<-done
	return err
}

// reaching follows the hosts of one invocation: an interrupt ends at once
// the attempt to reach each host not reached yet (waiting for its turn
// under --parallel, or connecting), since nothing runs there to stop; a
// host reached has a host command running, or about to, and gets the grace
// its command's stop allows. A host whose turn comes after an interrupt is
// not attempted at all.
type reaching struct {
	mu          sync.Mutex
	interrupted bool
	hosts       map[string]*reach // by target, while hoist works on it
}

type reach struct {
	cancel  context.CancelFunc
	reached bool
}

func newReaching() *reaching { return &reaching{hosts: map[string]*reach{}} }

// add starts the work on target: its context, which an interrupt cancels
// until reached says it was reached; end, when the work is over.
func (r *reaching) add(ctx context.Context, target string) (_ context.Context, end func()) {
	ctx, cancel := context.WithCancel(ctx)
	st := &reach{cancel: cancel}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.interrupted {
		cancel()
	}
	r.hosts[target] = st
	return ctx, func() {
		r.mu.Lock()
		defer r.mu.Unlock()
		delete(r.hosts, target)
		cancel()
	}
}

// reached marks target reached, so that an interrupt leaves it to its
// command's stop; false when an interrupt came first.
func (r *reaching) reached(target string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	st := r.hosts[target]
	if st == nil || r.interrupted {
		return false
	}
	st.reached = true
	return true
}

// interrupt cancels every host not reached, and every later one, and
// reports whether a host reached is still being worked on.
func (r *reaching) interrupt() (busy bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.interrupted = true
	for _, st := range r.hosts {
		if st.reached {
			busy = true
		} else {
			st.cancel()
		}
	}
	return busy
}
