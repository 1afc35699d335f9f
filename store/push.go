package store

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"path"
	"strconv"
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
	// zero means DefaultKeepRuns.
	KeepRuns time.Duration
}

// DefaultKeepRuns is how long gc keeps the record of a run.
const DefaultKeepRuns = 7 * 24 * time.Hour

// New returns the store that l guards.
func New(l *lock.Lock) *Store { return &Store{l: l} }

// Lock is the store's lock.
func (s *Store) Lock() *lock.Lock { return s.l }

// wire is the lock's plumbing, through which the store runs its commands.
func (s *Store) wire() lock.Wire { return s.l.Wire() }

// PushOptions configure [Store.Push].
type PushOptions struct {
	// Activate switches current to the runtime once it is in place, in
	// the same host command, after settling the unfinished records of
	// earlier rollouts there by the local rule (docs/rollout.md): a record
	// in doubt stops it before the switch (the runtime stays in place),
	// unless Force: then that record is finished as overridden.
	Activate bool
	Force    bool
	// Wait bounds the wait for the lock at promotion (and activation).
	Wait time.Duration
	// Starting, when set, is called once the upload is about to start, with
	// the size of the archive it sends to this host (files the host has
	// already travel as links, without their bytes) and the offset in it
	// where the upload goes on (a resumed upload's; 0 otherwise).
	Starting func(size, offset int64)
	// Progress, when set, is called as the upload advances with the bytes
	// of the archive on the host so far (from the offset Starting gave,
	// which counts as there) and the archive's size.
	Progress func(at, size int64)
	// Uploaded, when set, is called once the upload has ended well, with
	// the bytes this push sent (from the offset on); the host verifies and
	// unpacks next.
	Uploaded func(sent int64)
	Events   lock.Events
	// Stop, when closed, stops the upload (keeping the stage for the next
	// push to resume) or makes the host stop waiting for the lock (it then
	// removes the stage itself).
	Stop <-chan struct{}
	// Streams is how many SFTP channels carry the upload; zero means
	// Streams(size).
	Streams int
	// TwoPass makes the host read the archive after the upload, in the
	// promotion's own command, instead of as it arrives (docs/protocol.md,
	// "Promotion in one pass"): what a push falls back to when the
	// one-pass promotion cannot start or gives its stage back, and what a
	// push through a registry (Via) does.
	TwoPass bool
	// Via, when set, makes the host fetch the runtime from the registry
	// it was published to (Registry.Via), and be sent over SFTP only
	// what it could not fetch. The artifact given to Push may then be nil
	// (push oci://): what the host could not fetch the workstation
	// fetches from the registry and sends.
	Via *Via
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
	// Resumed is where the upload went on from in the archive a cut
	// push left on the host; Reused counts the files the host copied from
	// runtimes it has instead of receiving them.
	Resumed int64
	Reused  int
	// Activated: current now points at ID; Previous is what it pointed at.
	Activated bool
	Previous  string
	// Execs counts the host commands the push took (SFTP aside).
	Execs int
	// Through a registry (PushOptions.Via): Fetched counts the blobs the
	// host fetched from it and verified (the pack among them), of
	// FetchedBytes in all, FetchResumes the Range requests that went on
	// with a cut one, FetchTool the tool it used; Fallback says why it
	// was sent bytes over SFTP ("" when it was sent none), FromRegistry
	// that the workstation fetched those from the registry to send them.
	Fetched      int
	FetchedBytes int64
	FetchResumes int
	FetchTool    string
	Fallback     string
	FromRegistry bool
	// Settled are the unfinished records of earlier rollouts the host
	// settled by the local rule before the switch of Activate, each with
	// how its checks went; one whose runtime failed them stops the push
	// before its switch, with ErrSettledUnhealthy.
	Settled []Settle
}

// Push installs a on the host. A runtime already there and verified costs
// one host command. Otherwise the first command also makes the stage (or
// takes over the one an earlier push of this runtime left cut short, to
// resume it) and copies in the files the host already has in other
// runtimes; the rest is uploaded over SFTP, outside the lock. The same
// command (or, through a registry, with TwoPass, or where it cannot, one
// of its own) verifies its digest and unpacks it as it arrives, waits for
// the lock, promotes it (or finds another client already did), activates
// it if asked, and releases the lock. A failed upload removes its stage; one that was
// stopped or cut off with an unknown outcome leaves it for the next push to
// resume (and for gc, after the stale period).
func (s *Store) Push(ctx context.Context, a *Artifact, opts PushOptions) (*PushResult, error) {
	up, ok := s.l.Transport().(transport.Uploader)
	if !ok {
		return nil, errors.New("this transport cannot upload files")
	}
	src, err := sourceOf(a, opts.Via)
	if err != nil {
		return nil, err
	}
	// Every host command that may take the lock gets a token of its own (a
	// token names one lock only); the stage has one too.
	p := s.wire().Params()
	p.Stage, p.StageKey = uuid.NewString(), uuid.NewString()
	// A date in 2001–2033, to the second, that no file of the login's has
	// by chance.
	p.Stamp = time.Unix(1e9+rand.Int64N(1e9), 0)
	p.ID, p.Name, p.Digest, p.Size, p.Entries = src.id, src.name, src.digest, src.size, src.entries
	p.Activate, p.Wait = opts.Activate, opts.Wait
	p.Force = opts.Activate && opts.Force
	// The round trip, for the streams the upload takes, is measured while
	// the first command runs.
	rtt := make(chan time.Duration, 1)
	if opts.Streams == 0 && src.size >= manyStreams {
		go func() { rtt <- s.ping() }()
	} else {
		rtt <- 0
	}
	p.Window = transport.Window
	p.Reuse = src.reuse
	res := &PushResult{ID: src.id}
	// The upload's first stream opens while the first command runs, once
	// that command has its session (a host that allows one session at a
	// time then refuses the stream, not the command); it is closed unused
	// when the runtime is there already.
	ev := opts.Events
	discard := func() {}
	if pr, ok := up.(transport.Preparer); ok {
		ev.Opened = func() {
			discard = pr.Prepare()
			if opts.Events.Opened != nil {
				opts.Events.Opened()
			}
		}
	}
	defer func() { discard() }()

	// Without a registry the first command goes on as the promotion begun
	// with the upload once it staged the runtime (docs/protocol.md, "A
	// push in one command"): its verdicts until it says STREAMING are the
	// first command's answer. One that ended without (PRESENT, an error,
	// or STAGE alone) is read as the first command.
	var op *onePass
	var r *remote.Reply
	res.Execs++
	if !opts.TwoPass && opts.Via == nil {
		op = newOnePass()
		go op.run(ctx, s, shellcmd.Render(shellcmd.OpPushStream, p), ev, opts)
		select {
		case <-op.started:
			r = &remote.Reply{Verdicts: op.first}
		case <-op.ended:
			r, err, op = op.r, op.err, nil
		}
	} else {
		r, err = s.wire().Exec(ctx, shellcmd.Render(shellcmd.OpPushCheck, p), ev, opts.Stop)
	}
	if err != nil {
		return res, err
	}
	res.read(r)
	switch r.Last().Verb {
	case shellcmd.VerbPresent:
		res.Present = true
		if err := s.err(r, "push"); err != nil {
			return res, err
		}
		return res, res.activation(opts)
	case shellcmd.VerbStage:
	default:
		return res, s.err(r, "push")
	}
	_, shared := r.Last().Stage()
	st := staged{pool: map[string]string{}, streams: opts.Streams, shared: shared, stamp: p.Stamp}
	for _, v := range r.Verdicts {
		switch v.Verb {
		case shellcmd.VerbReused:
			name, path := v.Reused()
			st.pool[name] = path
		case shellcmd.VerbResume:
			_, st.offset, st.prefix = v.Resume()
		}
	}
	if st.streams == 0 {
		// The ping has no deadline of its own: a connection that stopped
		// answering is the keepalive's to close, or ctx's to end.
		select {
		case d := <-rtt:
			// Sized for what is left to send after a resume.
			st.streams = Streams(src.size-max(st.offset, 0), d)
		case <-ctx.Done():
			if op != nil {
				<-op.ended
			}
			return res, transport.UnknownOutcome(ctx.Err())
		}
	}
	res.Reused = len(st.pool)
	if opts.Via != nil {
		sum, done, err := s.fetch(ctx, p, opts, st, res)
		if err != nil {
			return res, err
		}
		if done {
			return s.promote(ctx, p, sum, opts, res)
		}
		res.FromRegistry = a == nil
	}

	if !opts.TwoPass && opts.Via == nil {
		return s.pushOnePass(ctx, up, src, p, st, res, opts, op)
	}
	return s.pushTwoPass(ctx, up, src, p, st, res, opts)
}

// pushTwoPass is the upload, then the promotion in a command of its own.
func (s *Store) pushTwoPass(ctx context.Context, up transport.Uploader, src pushSource, p shellcmd.Params, st staged, res *PushResult, opts PushOptions) (*PushResult, error) {
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
	sum, err := s.upload(upCtx, up, src.arch, p.Stage, st, res, opts, transport.UploadOptions{})
	if err != nil {
		return s.uploadFailed(ctx, p, res, err, stopped)
	}
	if opts.Uploaded != nil {
		opts.Uploaded(res.Uploaded)
	}
	return s.promote(ctx, p, sum, opts, res)
}

// uploadFailed ends a push whose upload failed: stopped (the user asked),
// the stage is kept with what was written, and the next push resumes it;
// otherwise it is dropped, unless its outcome is unknown or it was
// replaced (then it is not this push's to remove).
func (s *Store) uploadFailed(ctx context.Context, p shellcmd.Params, res *PushResult, err error, stopped <-chan struct{}) (*PushResult, error) {
	select {
	case <-stopped:
		p.Cut = res.Resumed + res.Uploaded
		s.keepStage(ctx, p, res)
		return res, ErrStopped
	default:
	}
	if !errors.Is(err, transport.ErrUnknownOutcome) && !errors.Is(err, ErrStageReplaced) && ctx.Err() == nil {
		s.dropStage(ctx, p, res)
	}
	return res, err
}

// promote is a push's last command: the archive in the stage, of SHA-256
// sum, is verified, unpacked and promoted.
func (s *Store) promote(ctx context.Context, p shellcmd.Params, sum string, opts PushOptions, res *PushResult) (*PushResult, error) {
	// The promotion may take the lock: tokens of its own, spares too.
	q := s.wire().Params()
	p.Sum, p.Token, p.Spares = sum, q.Token, q.Spares
	r, err := s.wire().Exec(ctx, shellcmd.Render(shellcmd.OpPromote, p), opts.Events, opts.Stop)
	res.Execs++
	if err != nil {
		return res, err
	}
	return s.promoted(r, sum, opts, res)
}

// promoted reads the reply of a promotion of the archive of SHA-256 sum.
func (s *Store) promoted(r *remote.Reply, sum string, opts PushOptions, res *PushResult) (*PushResult, error) {
	res.read(r)
	if v := r.Last(); v.Verb == shellcmd.VerbCorrupt {
		return res, fmt.Errorf("%w: the host has sha256 %s, hoist sent %s", ErrCorrupt, v.Digest(), sum)
	}
	if err := s.err(r, "push"); err != nil {
		return res, err
	}
	if !res.Promoted && !res.Present {
		return res, fmt.Errorf("push: the host did not confirm the promotion of %s", res.ID)
	}
	return res, res.activation(opts)
}

// Streams is how many SFTP channels an upload of size bytes takes over a
// link with this round-trip time. One channel carries at most its window
// per round trip (sshd grants 2 MiB, and tops it up when half is used: 1.5
// MiB on average), which bounds a single stream on a long link whatever its
// speed: at 40 ms, about 37 MiB/s. There are enough for a link of linkRate;
// small artifacts take one, since each costs a channel open, and so do
// short links, where more only cost CPU.
func Streams(size int64, rtt time.Duration) int {
	if size < manyStreams || rtt <= 0 {
		return 1
	}
	const perWindow = 3 << 19
	n := int((linkRate*rtt.Seconds() + perWindow - 1) / perWindow)
	return min(max(n, 1), transport.MaxStreams)
}

const (
	// manyStreams is the smallest artifact that may take several streams.
	manyStreams = 32 << 20
	// linkRate, bytes/s, is the fastest link Streams provides for: 1 Gbit/s.
	linkRate = 125e6
)

// ping is the connection's round-trip time, or zero when the transport
// cannot tell.
func (s *Store) ping() time.Duration {
	p, ok := s.l.Transport().(interface {
		RoundTrip(n int) (time.Duration, error)
	})
	if !ok {
		return 0
	}
	d, err := p.RoundTrip(2)
	if err != nil {
		return 0
	}
	return d
}

// staged is what the first command of a push found: the files the host
// copied into the stage's pool, and a cut upload to resume.
type staged struct {
	pool    map[string]string // ReuseName to the host's copy, under pool/
	offset  int64             // the upload goes on from here (RESUME)
	prefix  string            // the SHA-256 of the stage's archive before offset
	streams int
	// shared: others may rename the stage (a store a team shares); the
	// upload checks that the archive it opened bears stamp.
	shared bool
	stamp  time.Time
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
		case shellcmd.VerbPromoted:
			res.Promoted = true
		case shellcmd.VerbPresent:
			res.Present = true
		case shellcmd.VerbActivated:
			res.Activated = true
			if id, prev := v.Activated(); prev != id {
				res.Previous = prev
			}
		case shellcmd.VerbSettled:
			res.Settled = append(res.Settled, settleOf(v))
		}
	}
}

// upload streams the artifact's tar into the stage and returns its digest.
// Resuming, the archive is made again and its first bytes compared with
// what the stage holds; the upload goes on from there when they match, and
// starts over in the same file when they do not. hooks gives the upload's
// Opened and Whole.
func (s *Store) upload(ctx context.Context, up transport.Uploader, a archiver, token string, st staged, res *PushResult, opts PushOptions, hooks transport.UploadOptions) (string, error) {
	dest, err := s.stagePath(token)
	if err != nil {
		return "", err
	}
	pr, pw := io.Pipe()
	tarDone := make(chan error, 1)
	go func() {
		err := a.writeTar(ctx, pw, st.pool)
		tarDone <- err
		pw.CloseWithError(err)
	}()
	defer pr.Close()
	h := sha256.New()
	var src io.Reader = io.TeeReader(pr, h)
	// The host made the archive's file in the stage (h_op_pushcheck).
	o := transport.UploadOptions{Streams: st.streams, Existing: true, Opened: hooks.Opened, Whole: hooks.Whole, Busy: hooks.Busy}
	if st.shared {
		// The login's own plain file, of the date only the host gave it:
		// the date is no secret (touch's argv), but only the login can
		// give a file of the login's a date.
		uid, uidErr := s.loginUID()
		o.Check = func(fi fs.FileInfo) error {
			if uidErr != nil {
				return uidErr
			}
			if owner, ok := transport.FileOwner(fi); ok && owner == uid && fi.Mode().IsRegular() && fi.ModTime().Equal(st.stamp) {
				return nil
			}
			return fmt.Errorf("%w (%s is not the archive the host made there)", ErrStageReplaced, dest)
		}
	}
	if st.offset > 0 {
		// h has hashed exactly the prefix once it is read (Sum leaves it
		// going on).
		if _, err := io.CopyN(io.Discard, src, st.offset); err == nil && hex.EncodeToString(h.Sum(nil)) == st.prefix {
			o.Offset = st.offset
		} else {
			// Another archive of the same tree (other times): start over.
			pr.CloseWithError(errRestart)
			<-tarDone
			st.offset, st.prefix = 0, ""
			return s.upload(ctx, up, a, token, st, res, opts, hooks)
		}
	}
	res.Resumed = o.Offset
	if opts.Starting != nil || opts.Progress != nil {
		size, err := a.archiveSize(st.pool)
		if err != nil {
			return "", err
		}
		if opts.Starting != nil {
			opts.Starting(size, o.Offset)
		}
		if opts.Progress != nil {
			src = &counting{r: src, n: o.Offset, total: size, fn: opts.Progress}
		}
	}
	n, err := up.Upload(ctx, dest, src, o)
	res.Uploaded = n
	if err != nil {
		pr.CloseWithError(err)
		if terr := <-tarDone; terr != nil && !errors.Is(terr, err) {
			return "", fmt.Errorf("reading %s: %w", a.source(), terr)
		}
		if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			return "", transport.UnknownOutcome(err)
		}
		if errors.Is(err, transport.ErrUnknownOutcome) {
			return "", fmt.Errorf("the upload was cut off (%w); the host keeps what arrived, and the next push of %s resumes it", err, a.runtimeID())
		}
		return "", fmt.Errorf("upload to %s: %w; check free space and permissions on the host", dest, err)
	}
	if terr := <-tarDone; terr != nil {
		return "", fmt.Errorf("reading %s: %w", a.source(), terr)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

var errRestart = errors.New("restarting the upload")

// loginUID is the login's uid on the host, from its facts.
func (s *Store) loginUID() (uint32, error) {
	f := s.l.Facts()
	if f == nil {
		return 0, errors.New("the host did not say its login's uid")
	}
	uid, err := strconv.ParseUint(f.UID, 10, 32)
	if err != nil {
		return 0, fmt.Errorf("the host said an odd uid for its login: %q", f.UID)
	}
	return uint32(uid), nil
}

// stagePath is where this push's archive goes on the host.
func (s *Store) stagePath(token string) (string, error) {
	root := s.l.Root()
	dir := root.Path
	if root.Home {
		f := s.l.Facts()
		if f == nil || f.Home == "" {
			return "", errors.New("the host did not say its home directory")
		}
		dir = path.Join(f.Home, root.Path)
	}
	return path.Join(dir, shellcmd.StoreDir, stagePrefix+token, "artifact.tar"), nil
}

func (s *Store) dropStage(ctx context.Context, p shellcmd.Params, res *PushResult) {
	_, _ = s.wire().Exec(ctx, shellcmd.Render(shellcmd.OpDropStage, p), lock.Events{}, nil)
	res.Execs++
}

// keepStage marks a stopped upload's stage cut short, for the next push of
// the runtime to resume at once.
func (s *Store) keepStage(ctx context.Context, p shellcmd.Params, res *PushResult) {
	_, _ = s.wire().Exec(ctx, shellcmd.Render(shellcmd.OpKeepStage, p), lock.Events{}, nil)
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
