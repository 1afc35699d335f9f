package store

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"path"
	"time"

	"github.com/google/uuid"

	"github.com/hoistdev/hoist/lock"
	"github.com/hoistdev/hoist/remote"
	"github.com/hoistdev/hoist/shellcmd"
	"github.com/hoistdev/hoist/transport"
)

// Store is the runtime store of one host, guarded by its lock.
type Store struct {
	l *lock.Lock
	// KeepRuns is how long gc keeps the records of runs (hoist runs);
	// zero means shellcmd.DefaultKeepRuns, a week.
	KeepRuns time.Duration
}

// New returns the store that l guards.
func New(l *lock.Lock) *Store { return &Store{l: l} }

// Lock is the store's lock.
func (s *Store) Lock() *lock.Lock { return s.l }

// PushOptions configure [Store.Push].
type PushOptions struct {
	// Activate switches current to the runtime once it is in place.
	Activate bool
	// Wait bounds the wait for the lock at promotion (and activation).
	Wait time.Duration
	// Progress, when set, is called as the upload advances with the bytes
	// sent so far and the total.
	Progress func(sent, total int64)
	// Uploaded, when set, is called once the upload has ended well, with
	// the bytes sent; the host verifies and unpacks next.
	Uploaded func(sent int64)
	Events   lock.Events
	// Stop, when closed, stops the upload (removing the stage) or makes the
	// host stop waiting for the lock (it then removes the stage itself).
	Stop <-chan struct{}
}

// PushResult says what a push did on one host.
type PushResult struct {
	ID string
	// Present: the runtime was already there, verified; nothing was uploaded.
	Present bool
	// Promoted: this push put it in place.
	Promoted bool
	// Uploaded is the number of bytes sent.
	Uploaded int64
	// Activated: current now points at ID; Previous is what it pointed at.
	Activated bool
	Previous  string
	// Execs counts the host commands the push took (SFTP aside).
	Execs int
}

// Push installs a on the host. A runtime already there and verified costs
// one host command. Otherwise the artifact is uploaded over SFTP into a new
// stage, outside the lock, then one host command verifies its digest,
// unpacks it, waits for the lock, promotes it (or finds another client
// already did), activates it if asked, and releases the lock. A failed
// upload removes its stage; an upload cut off with an unknown outcome leaves
// it for gc.
func (s *Store) Push(ctx context.Context, a *Artifact, opts PushOptions) (*PushResult, error) {
	up, ok := s.l.Host().Transport().(transport.Uploader)
	if !ok {
		return nil, errors.New("this transport cannot upload files")
	}
	// Every host command that may take the lock gets a token of its own (a
	// token names one lock only); the stage has one too.
	p := s.l.Params()
	p.Stage = uuid.NewString()
	p.ID, p.Name, p.Digest, p.Size, p.Entries = a.ID(), a.Name, a.Digest, a.Size, len(a.Entries)
	p.Activate, p.Wait = opts.Activate, opts.Wait
	res := &PushResult{ID: a.ID()}

	r, err := s.l.Under(ctx, shellcmd.Render(shellcmd.OpPushCheck, p), opts.Events, opts.Stop)
	res.Execs++
	if err != nil {
		return res, err
	}
	res.read(r)
	switch r.Last().Verb {
	case shellcmd.Present:
		res.Present = true
		if err := s.err(r, "push"); err != nil {
			return res, err
		}
		return res, res.activation(opts)
	case shellcmd.Stage:
	default:
		return res, s.err(r, "push")
	}

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
	sum, err := s.upload(upCtx, up, a, p.Stage, res, opts.Progress)
	if err != nil {
		select {
		case <-stopped:
			s.dropStage(ctx, p, res)
			return res, ErrStopped
		default:
		}
		if !errors.Is(err, transport.ErrUnknownOutcome) && ctx.Err() == nil {
			s.dropStage(ctx, p, res)
		}
		return res, err
	}
	if opts.Uploaded != nil {
		opts.Uploaded(res.Uploaded)
	}
	p.Sum, p.Token = sum, s.l.Params().Token
	r, err = s.l.Under(ctx, shellcmd.Render(shellcmd.OpPromote, p), opts.Events, opts.Stop)
	res.Execs++
	if err != nil {
		return res, err
	}
	res.read(r)
	if v := r.Last(); v.Verb == shellcmd.Corrupt {
		return res, fmt.Errorf("%w: the host has sha256 %s, hoist sent %s", ErrCorrupt, v.Field(0), sum)
	}
	if err := s.err(r, "push"); err != nil {
		return res, err
	}
	if !res.Promoted && !res.Present {
		return res, fmt.Errorf("push: the host did not confirm the promotion of %s", res.ID)
	}
	return res, res.activation(opts)
}

// activation fails a push asked to activate whose host did not say it did.
func (res *PushResult) activation(opts PushOptions) error {
	if opts.Activate && !res.Activated {
		return fmt.Errorf("push: %s is in place, but the host did not confirm that it is current; see hoist list", res.ID)
	}
	return nil
}

func (res *PushResult) read(r *remote.Reply) {
	for _, v := range r.Verdicts {
		switch v.Verb {
		case shellcmd.Promoted:
			res.Promoted = true
		case shellcmd.Present:
			res.Present = true
		case shellcmd.Activated:
			res.Activated = true
			if prev := v.Field(1); prev != "-" && prev != v.Field(0) {
				res.Previous = prev
			}
		}
	}
}

// upload streams the artifact's tar into the stage and returns its digest.
func (s *Store) upload(ctx context.Context, up transport.Uploader, a *Artifact, token string, res *PushResult, progress func(int64, int64)) (string, error) {
	dest, err := s.stagePath(token)
	if err != nil {
		return "", err
	}
	pr, pw := io.Pipe()
	tarDone := make(chan error, 1)
	go func() {
		err := a.WriteTar(pw)
		tarDone <- err
		pw.CloseWithError(err)
	}()
	defer pr.Close()
	h := sha256.New()
	src := io.TeeReader(pr, h)
	if progress != nil {
		src = &counting{r: src, total: a.Size, fn: progress}
	}
	n, err := up.Upload(ctx, dest, src)
	res.Uploaded = n
	if err != nil {
		pr.CloseWithError(err)
		if terr := <-tarDone; terr != nil && !errors.Is(terr, err) {
			return "", fmt.Errorf("reading %s: %w", a.Source, terr)
		}
		if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			return "", transport.UnknownOutcome(err)
		}
		return "", fmt.Errorf("upload to %s: %w; check free space and permissions on the host", dest, err)
	}
	if terr := <-tarDone; terr != nil {
		return "", fmt.Errorf("reading %s: %w", a.Source, terr)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// stagePath is where this push's archive goes on the host.
func (s *Store) stagePath(token string) (string, error) {
	root := s.l.Root()
	dir := root.Path
	if root.Home {
		f := s.l.Host().Facts()
		if f == nil || f.Home == "" {
			return "", errors.New("the host did not say its home directory")
		}
		dir = path.Join(f.Home, root.Path)
	}
	return path.Join(dir, shellcmd.StoreDir, StagePrefix+token, "artifact.tar"), nil
}

func (s *Store) dropStage(ctx context.Context, p shellcmd.Params, res *PushResult) {
	_, _ = s.l.Host().Exec(ctx, remote.Call{Fragment: shellcmd.Render(shellcmd.OpDropStage, p)})
	res.Execs++
}

// counting reports progress as bytes go through.
type counting struct {
	r     io.Reader
	n     int64
	total int64
	fn    func(int64, int64)
}

func (c *counting) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	c.fn(c.n, c.total)
	return n, err
}
