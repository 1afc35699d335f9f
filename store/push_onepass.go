package store

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/hoistdev/hoist/lock"
	"github.com/hoistdev/hoist/remote"
	"github.com/hoistdev/hoist/shellcmd"
	"github.com/hoistdev/hoist/transport"
)

// pushOnePass is the upload with its promotion begun beside it
// (docs/protocol.md, "Promotion in one pass"): once the upload's files are
// open, the promotion command starts on the same connection; it claims the
// stage, says STREAMING, and digests and unpacks the archive as far as the
// W lines say it is whole (the upload's acknowledged prefix). After the
// upload, E gives the archive's length and digest, and the command goes on
// to the lock as the promotion does. A command that could not start, or
// that gave the stage back (YIELDED: the upload went quiet), leaves the
// push to the promotion after the upload; one that failed otherwise stops
// the upload. A failed upload makes the command give the stage back first,
// then the stage is kept or dropped as after any failed upload. op, when
// not nil, is the push's first command, which went on as the promotion
// (STREAMING): no command more is started.
func (s *Store) pushOnePass(ctx context.Context, up transport.Uploader, src pushSource, p shellcmd.Params, st staged, res *PushResult, opts PushOptions, op *onePass) (*PushResult, error) {
	upCtx, cancelUp := context.WithCancel(ctx)
	defer cancelUp()
	stopped := make(chan struct{})
	go func() {
		select {
		case <-opts.Stop:
			close(stopped)
			cancelUp()
		case <-upCtx.Done():
		}
	}()
	// A command the host ended before E without giving the stage back
	// refused it: the upload stops. One whose connection failed leaves
	// the upload to fail (or not) on its own: its error says what the
	// host keeps.
	watch := func() {
		go func() {
			select {
			case <-op.ended:
				if op.refused() {
					cancelUp()
				}
			case <-upCtx.Done():
			}
		}()
	}
	var launch sync.Once
	launched := op != nil
	// The first command's session stays open through the upload.
	hooks := transport.UploadOptions{Busy: launched}
	if launched {
		watch()
	} else {
		op = newOnePass()
		q := s.wire().Params()
		sp := p
		sp.Token, sp.Spares = q.Token, q.Spares
		hooks.Opened = func() {
			launch.Do(func() {
				launched = true
				res.Execs++
				go op.run(ctx, s, shellcmd.Render(shellcmd.OpStream, sp), opts.Events, opts)
				watch()
			})
		}
	}
	hooks.Whole = op.whole
	sum, err := s.upload(upCtx, up, src.arch, p.Stage, st, res, opts, hooks)
	// Opened is called within the upload, or not at all.
	launch.Do(func() {})
	if err != nil {
		if launched {
			op.yield()
			<-op.ended
			if op.refused() {
				// The host's refusal stopped the upload: it is the
				// answer, and the stage was not left to this push.
				return s.promoted(op.r, "", opts, res)
			}
			if hooks.Busy && transport.SessionsFull(err) && res.Uploaded == 0 && upCtx.Err() == nil {
				// A host that allows one session at a time: the
				// first command gave the stage back, and the upload
				// goes after it, the promotion after that.
				return s.pushTwoPass(ctx, up, src, p, st, res, opts)
			}
		}
		return s.uploadFailed(ctx, p, res, err, stopped)
	}
	if opts.Uploaded != nil {
		opts.Uploaded(res.Uploaded)
	}
	if launched {
		select {
		case <-op.started:
			op.finish <- fmt.Sprintf("E %d %s\n", res.Resumed+res.Uploaded, sum)
		case <-op.ended:
		}
		<-op.ended
		if op.failed() {
			if op.err != nil {
				return res, op.err
			}
			return s.promoted(op.r, sum, opts, res)
		}
	}
	// The command could not start, or gave the stage back: the promotion
	// after the upload, which claims the stage again (or finds it taken).
	return s.promote(ctx, p, sum, opts, res)
}

// onePass is the promotion command of pushOnePass and what the upload
// tells it.
type onePass struct {
	started chan struct{} // the command said STREAMING: feed, end and first are set
	ended   chan struct{} // the command ended: r and err are set
	finish  chan string   // the E line, for the feeder to send last
	feed    func(string) error
	end     func()
	first   []shellcmd.Verdict // what the command said before STREAMING
	r       *remote.Reply
	err     error

	mu     sync.Mutex
	at     int64 // the archive is whole below at
	moved  bool  // bytes arrived since the last W
	opened bool  // the upload began: whole was called
}

func newOnePass() *onePass {
	return &onePass{started: make(chan struct{}), ended: make(chan struct{}), finish: make(chan string, 1)}
}

const (
	// feedEvery is how often the feeder may send a W: at most ten lines
	// a second, each a copy on the host.
	feedEvery = 100 * time.Millisecond
	// beatEvery is how often the feeder says "W 0" while the upload has
	// not begun (a push's first command that went on as its promotion
	// waits for the client to compare a resumed prefix and open the
	// upload): well within the host's 5 s of quiet.
	beatEvery = time.Second
)

// run runs fr, OpStream or OpPushStream, with ev.
func (op *onePass) run(ctx context.Context, s *Store, fr shellcmd.Fragment, ev lock.Events, opts PushOptions) {
	defer close(op.ended)
	var first []shellcmd.Verdict
	op.r, op.err = s.wire().ExecFeeding(ctx, fr, ev, opts.Stop,
		func(v shellcmd.Verdict, feed func(string) error, end func()) {
			if v.Verb != shellcmd.VerbStreaming {
				first = append(first, v)
				return
			}
			op.feed, op.end, op.first = feed, end, first
			close(op.started)
			go op.feeder()
		})
}

// whole is the upload's UploadOptions.Whole.
func (op *onePass) whole(at int64) {
	op.mu.Lock()
	op.at, op.moved, op.opened = at, true, true
	op.mu.Unlock()
}

// feeder sends "W offset" while bytes arrive (a stalled upload sends
// nothing, and after 5 s the host gives the stage back), then the E line.
// Until the upload begins it says "W 0" every beatEvery: the client is
// there, getting its upload ready.
func (op *onePass) feeder() {
	t := time.NewTicker(feedEvery)
	defer t.Stop()
	last := time.Now()
	for {
		select {
		case e := <-op.finish:
			_ = op.feed(e)
			return
		case <-op.ended:
			return
		case <-t.C:
		}
		op.mu.Lock()
		at, moved, opened := op.at, op.moved, op.opened
		op.moved = false
		op.mu.Unlock()
		if !opened && time.Since(last) >= beatEvery {
			moved = true
		}
		if !moved {
			continue
		}
		if op.feed(fmt.Sprintf("W %d\n", at)) != nil {
			return
		}
		last = time.Now()
	}
}

// yield makes the command give the stage back: its input ends before E.
func (op *onePass) yield() {
	select {
	case <-op.started:
		op.end()
	case <-op.ended:
	}
}

// refused reports whether the command, once ended, ended with a verdict
// but YIELDED: the host's answer.
func (op *onePass) refused() bool {
	return op.err == nil && op.r.Last().Verb != shellcmd.VerbYielded
}

// failed reports whether the command, once ended, failed: any end but
// YIELDED, or a transport's error but one that says it could not start.
// Before E that stops the upload; after it, it is the push's answer.
func (op *onePass) failed() bool {
	if op.err != nil {
		return !errors.Is(op.err, transport.ErrNotStarted)
	}
	return op.r.Last().Verb != shellcmd.VerbYielded
}
