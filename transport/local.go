package transport

import (
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"sync"
	"syscall"
)

// Local runs commands on this machine. The command line goes to /bin/sh -c,
// which stands in for the login shell that sshd would use, so the local
// target follows the same protocol as a remote one.
//
// The shell runs in its own process group: a Ctrl-C on the terminal reaches
// hoist, not the host side, exactly as with a remote host.
type Local struct {
	// Shell is the stand-in login shell; empty means /bin/sh.
	Shell string

	open   sync.Once
	shut   sync.Once
	closed chan struct{} // closed by Close
}

// Target implements [Transport].
func (l *Local) Target() string { return LocalTarget }

// Close implements [Transport]: Runs in progress return, their commands
// carry on, and later Runs start nothing.
func (l *Local) Close() error {
	done := l.done()
	l.shut.Do(func() { close(done) })
	return nil
}

// done is closed once Close was called.
func (l *Local) done() chan struct{} {
	l.open.Do(func() { l.closed = make(chan struct{}) })
	return l.closed
}

// Run implements [Transport].
func (l *Local) Run(ctx context.Context, req Request) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, NotStarted(err)
	}
	closed := l.done()
	select {
	case <-closed:
		return 0, NotStarted(errTransportClosed)
	default:
	}
	shell := l.Shell
	if shell == "" {
		shell = "/bin/sh"
	}
	cmd := exec.Command(shell, "-c", req.Command)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if req.Opened != nil {
		req.Opened()
	}

	// Pipes we own, so that cancelling can close our ends without waiting
	// for the process, just as a dropped SSH channel would.
	inR, inW, err := os.Pipe()
	if err != nil {
		return 0, NotStarted(err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		closeAll(inR, inW)
		return 0, NotStarted(err)
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		closeAll(inR, inW, outR, outW)
		return 0, NotStarted(err)
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, errW
	if err := cmd.Start(); err != nil {
		closeAll(inR, inW, outR, outW, errR, errW)
		return 0, NotStarted(err)
	}
	closeAll(inR, outW, errW)

	var closeIn sync.Once
	closeStdin := func() { closeIn.Do(func() { inW.Close() }) }
	if req.Stdin != nil {
		go func() {
			_, _ = io.Copy(inW, req.Stdin)
			closeStdin()
		}()
	}

	var copies sync.WaitGroup
	copies.Add(2)
	go drain(&copies, outR, req.Stdout)
	go drain(&copies, errR, req.Stderr)

	exited := make(chan error, 1)
	go func() {
		copies.Wait() // all output read before the status is reported
		exited <- cmd.Wait()
	}()

	detach := func(cause error) (int, error) {
		select {
		case werr := <-exited: // the status won the race; it is the truth
			closeStdin()
			return exitStatus(cmd.ProcessState, werr)
		default:
		}
		// The host side sees its input close and its output break, and
		// carries on by itself. The process is reaped in the background.
		// Nothing reaches the writers once Run has returned.
		closeStdin()
		closeAll(outR, errR)
		copies.Wait()
		return 0, UnknownOutcome(cause)
	}
	select {
	case werr := <-exited:
		closeStdin()
		return exitStatus(cmd.ProcessState, werr)
	case <-ctx.Done():
		return detach(ctx.Err())
	case <-closed:
		return detach(errTransportClosed)
	}
}

func drain(wg *sync.WaitGroup, r *os.File, w io.Writer) {
	defer wg.Done()
	if w == nil {
		w = io.Discard
	}
	_, _ = io.Copy(w, r)
}

func closeAll(fs ...*os.File) {
	for _, f := range fs {
		f.Close()
	}
}

func exitStatus(ps *os.ProcessState, werr error) (int, error) {
	if ps == nil {
		return 0, UnknownOutcome(werr)
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal()), nil
	}
	var ee *exec.ExitError
	if werr != nil && !errors.As(werr, &ee) {
		return 0, UnknownOutcome(werr)
	}
	return ps.ExitCode(), nil
}
