package main

import (
	"context"
	"os"
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
