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
