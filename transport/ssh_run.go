package transport

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

	"golang.org/x/crypto/ssh"
)

// errTransportClosed is the cause when Close was called.
var errTransportClosed = errors.New("transport closed")

// Run implements [Transport]: it opens a session on the shared connection
// (waiting for one of MaxSessions slots) and runs req.Command in it.
//
// Errors wrapping ErrNotStarted (nothing ran): ctx ended before the command
// was sent; the session could not be opened (connection closed or lost,
// channel refused; a host whose sessions are full, sshd's MaxSessions, is
// asked again for about 1.3 s first); the host refused the exec
// request.
//
// Errors wrapping ErrUnknownOutcome: ctx ended while the command ran (the
// error wraps ctx.Err() too; the session is closed, no signal is sent);
// the connection dropped, was closed by the keepalive or by Close; the host
// closed the session without an exit status; reading req.Stdin failed (the
// session is closed, as on cancel, so the command never mistakes a partial
// input for a complete one).
//
// A command killed by a signal reports 128 plus the signal number, or 255
// for a signal name outside the POSIX set.
//
// Output is copied completely before Run returns a status, and never after
// Run returns (when ctx ends during a write to req.Stdout, Run waits for
// that write). An error writing to req.Stdout or req.Stderr is not
// reported: the rest of that stream is discarded so that the host is not
// blocked by a full window. A Read on req.Stdin may still be pending when
// Run returns; its data is then dropped.
func (s *SSH) Run(ctx context.Context, req Request) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, NotStarted(err)
	}
	select {
	case s.sessions <- struct{}{}:
	case <-ctx.Done():
		return 0, NotStarted(ctx.Err())
	case <-s.done:
		return 0, NotStarted(errTransportClosed)
	}
	release := func() { <-s.sessions }

	sess, err := whileFull(ctx, s.client.NewSession)
	if err != nil {
		release()
		return 0, NotStarted(s.explain(err))
	}
	if req.Opened != nil {
		req.Opened()
	}
	// Our own stdin pipe: x/crypto would send EOF at once for a nil Stdin,
	// and the host side relies on EOF to notice that its client went away.
	stdin, err := sess.StdinPipe()
	if err != nil {
		sess.Close()
		release()
		return 0, NotStarted(err)
	}
	stdout, stderr := &gate{w: req.Stdout}, &gate{w: req.Stderr}
	sess.Stdout, sess.Stderr = stdout, stderr
	if err := sess.Start(req.Command); err != nil {
		sess.Close()
		release()
		if err.Error() == fmt.Sprintf("ssh: command %v failed", req.Command) {
			return 0, NotStarted(errors.New("the host refused the exec request"))
		}
		// The request may have reached the host before contact was lost.
		return 0, UnknownOutcome(s.explain(err))
	}

	exited := make(chan error, 1)
	go func() {
		// The slot is held until the channel is closed at both ends, so
		// that a cancelled Run does not push the host over its MaxSessions.
		err := sess.Wait() // returns once all output is copied
		release()
		exited <- err
	}()
	stdinFailed := make(chan error, 1)
	if req.Stdin != nil {
		go copyStdin(stdin, req.Stdin, stdinFailed)
	}

	abandon := func(cause error) (int, error) {
		sess.Close()
		stdout.shut()
		stderr.shut()
		return 0, UnknownOutcome(cause)
	}
	select {
	case err := <-exited:
		sess.Close()
		return s.status(err)
	case err := <-stdinFailed:
		return abandon(fmt.Errorf("reading stdin: %w", err))
	case <-ctx.Done():
		select {
		case err := <-exited: // the status won the race; it is the truth
			sess.Close()
			return s.status(err)
		default:
		}
		return abandon(ctx.Err())
	}
}

// copyStdin sends r to the command and then EOF. A read error is reported
// instead of being passed off as EOF; a write error means the session is
// over, which Wait reports.
func copyStdin(stdin io.WriteCloser, r io.Reader, failed chan<- error) {
	er := &errReader{r: r}
	if _, err := io.Copy(stdin, er); err != nil {
		if er.err != nil {
			failed <- er.err
		}
		return
	}
	_ = stdin.Close() // CloseWrite: EOF for the command
}

type errReader struct {
	r   io.Reader
	err error
}

func (e *errReader) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	if err != nil && err != io.EOF {
		e.err = err
	}
	return n, err
}

// status turns the result of Session.Wait into Run's results.
func (s *SSH) status(err error) (int, error) {
	var ee *ssh.ExitError
	switch {
	case err == nil:
		return 0, nil
	case errors.As(err, &ee) && ee.Signal() != "":
		return signalStatus(ee.Signal()), nil
	case errors.As(err, &ee):
		return ee.ExitStatus(), nil
	default:
		return 0, UnknownOutcome(s.explain(err))
	}
}

// explain adds why the connection is gone, when we know, to a session
// error such as x/crypto's "remote command exited without exit status".
func (s *SSH) explain(err error) error {
	s.awaitMaster()
	if why := s.lostReason(); why != nil {
		return fmt.Errorf("%w: %w", why, err)
	}
	if isClosed(s.done) {
		return fmt.Errorf("%w: %w", errTransportClosed, err)
	}
	if isClosed(s.connDone) {
		return fmt.Errorf("connection lost: %w", err)
	}
	return err
}

func isClosed(c <-chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

// signalNumbers are the POSIX signals whose numbers are the same on every
// Unix that matters, by their RFC 4254 names.
var signalNumbers = map[string]int{
	"HUP": 1, "INT": 2, "QUIT": 3, "ILL": 4, "ABRT": 6, "FPE": 8, "KILL": 9,
	"USR1": 10, "SEGV": 11, "USR2": 12, "PIPE": 13, "ALRM": 14, "TERM": 15,
}

// signalStatus is 128 plus the signal number, as a shell reports it, or
// 255 when the name is not one we can number.
func signalStatus(name string) int {
	if n, ok := signalNumbers[strings.TrimPrefix(name, "SIG")]; ok {
		return 128 + n
	}
	return 255
}

// gate forwards output to w until shut, after which Run has returned and
// the caller owns w again. A failing w is not retried, and the stream is
// still drained so that the host is not blocked.
type gate struct {
	mu     sync.Mutex
	w      io.Writer
	closed bool
}

func (g *gate) Write(p []byte) (int, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.w != nil && !g.closed {
		if _, err := g.w.Write(p); err != nil {
			g.w = nil
		}
	}
	return len(p), nil
}

// shut waits for a write in progress, then stops forwarding.
func (g *gate) shut() {
	g.mu.Lock()
	g.closed = true
	g.mu.Unlock()
}
