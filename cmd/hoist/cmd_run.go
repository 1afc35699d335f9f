package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/hoistdev/hoist/lock"
	"github.com/hoistdev/hoist/transport"
)

// stopGrace is how long hoist waits, after asking the host to stop the
// command, before it detaches on its own.
const stopGrace = 10 * time.Second

// cmdRun runs argv on every host under the store lock and exits with the
// command's status (the worst one for several hosts).
//
// The first Ctrl-C (or SIGTERM, SIGHUP) asks the host to stop the command,
// which then releases the lock itself, and waits up to stopGrace for the
// outcome; a second one detaches and leaves the host to finish and release.
func (a *app) cmdRun(argv []string) int {
	if len(argv) == 0 {
		return a.usage(usageErr("run needs a command: hoist run [--wait D] -- CMD [ARG...]"))
	}
	ctx, detach := context.WithCancel(context.Background())
	defer detach()
	stop := make(chan struct{})
	var stopOnce sync.Once
	sig := a.interrupted(ctx,
		func(os.Signal) {
			stopOnce.Do(func() { close(stop) })
			a.note("asking the host to stop the command; interrupt again to detach")
			time.AfterFunc(stopGrace, detach)
		},
		func(os.Signal) { detach() })

	code := a.fleet(ctx, func(ctx context.Context, l *lock.Lock) result {
		return a.runOn(ctx, l, argv, stop, sig)
	})
	if s := sig(); s != 0 {
		return s
	}
	return code
}

func (a *app) runOn(ctx context.Context, l *lock.Lock, argv []string, stop chan struct{}, sig func() int) result {
	name := l.Host().Name()
	stdout, stderr := io.Writer(a.stdout), io.Writer(a.stderr)
	if a.multi || a.json {
		out := a.stdout
		if a.json {
			out = a.stderr // stdout carries only the JSON results
		}
		stdout = newPrefixWriter(out, name+": ")
		stderr = newPrefixWriter(a.stderr, name+": ")
		defer stdout.(*prefixWriter).Flush()
		defer stderr.(*prefixWriter).Flush()
	}
	ev := a.waitEvents(name)
	ev.Started = a.clearLive
	res, err := l.Run(ctx, argv, lock.RunOptions{Wait: a.wait, Stdout: stdout, Stderr: stderr, Stop: stop, Events: ev})
	a.clearLive()
	r := result{json: map[string]any{"token": res.Token, "started": res.Started}}
	if res.Lost != nil {
		a.say(name, "%v; the new holder was left alone", res.Lost)
		r.json["lock_lost"] = true
	}
	if res.ReleaseErr != nil {
		a.say(name, "the command ended, but the lock may still be held: %v; see hoist lock status", res.ReleaseErr)
		r.json["release_error"] = res.ReleaseErr.Error()
	}
	switch {
	case err != nil && errors.Is(err, transport.ErrUnknownOutcome) && sig() != 0:
		if res.Started {
			a.say(name, "detached: the command keeps running on the host, which releases the lock when it ends")
		} else {
			a.say(name, "detached while waiting: the host stops waiting and releases anything it took")
		}
		r.code, r.json["interrupted"] = sig(), true
	case err != nil && errors.Is(err, lock.ErrAbandoned) && sig() != 0:
		a.say(name, "stopped waiting for the lock; nothing was run")
		r.code, r.json["interrupted"] = sig(), true
	case err != nil:
		if errors.Is(err, transport.ErrUnknownOutcome) && res.Started {
			err = fmt.Errorf("%w; the command had started", err)
		}
		r.err = err
	case sig() != 0:
		a.say(name, "stopped: the command exited with status %d; lock released", res.Status)
		r.code, r.json["interrupted"] = sig(), true
	default:
		r.code = res.Status
	}
	r.json["exit_status"] = res.Status
	return r
}

// prefixWriter starts every line with a prefix, for output from several
// hosts at once.
type prefixWriter struct {
	mu     sync.Mutex
	w      io.Writer
	prefix []byte
	buf    []byte
}

func newPrefixWriter(w io.Writer, prefix string) *prefixWriter {
	return &prefixWriter{w: w, prefix: []byte(prefix)}
}

func (p *prefixWriter) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.buf = append(p.buf, b...)
	for {
		i := bytes.IndexByte(p.buf, '\n')
		if i < 0 {
			return len(b), nil
		}
		line := append(append([]byte{}, p.prefix...), p.buf[:i+1]...)
		p.w.Write(line)
		p.buf = p.buf[i+1:]
	}
}

// Flush writes a last line that had no newline.
func (p *prefixWriter) Flush() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.buf) > 0 {
		p.w.Write(append(append(append([]byte{}, p.prefix...), p.buf...), '\n'))
		p.buf = nil
	}
}
