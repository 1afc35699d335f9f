package transport

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"sync"
	"syscall"

	"github.com/pkg/sftp"
)

// Uploader is implemented by transports that can also write files on the
// host: [SSH] through SFTP, [Local] directly.
type Uploader interface {
	// Upload writes everything r yields into a new file at path on the
	// host, mode 0600, and returns the bytes written. A path that exists
	// already, as a file or as a symlink, is an error and nothing is written
	// through it: the file is created exclusively (O_EXCL). With
	// o.Existing, it writes instead into the file the host made there (or
	// an earlier upload, to resume), from o.Offset on, and cuts the file to
	// its new end. When ctx
	// ends first, the upload stops and what was written stays where it is.
	// On an error, the count is the bytes from o.Offset on that the host
	// acknowledged without a gap.
	Upload(ctx context.Context, path string, r io.Reader, o UploadOptions) (int64, error)
}

// Preparer is an [Uploader] that can open the first stream of an upload
// ahead of it, while the command that decides on the upload runs: the
// stream's round trips then overlap that command's.
type Preparer interface {
	// Prepare starts opening a stream, in the background, for the next
	// Upload to take. The function it returns closes the stream if no
	// Upload took it; it does not wait.
	Prepare() (discard func())
}

// UploadOptions say how [Uploader.Upload] writes.
type UploadOptions struct {
	// Existing writes into the file at the path, which exists: r's bytes
	// go into it from Offset on (an upload cut short goes on), and it is
	// cut to their end. The caller vouches for the file: the host made it
	// where nobody else can.
	Existing bool
	Offset   int64
	// Streams is how many channels carry the bytes at once, each with a
	// window of its own; 0 and 1 mean one. The streams write chunks of
	// ChunkSize at their offsets, never more than Window bytes beyond the
	// first chunk that is not written yet: a cut upload is whole up to its
	// length less Window.
	Streams int
	// Check, when set, is called with what each opened file is before a
	// byte is written through any of them: an error stops the upload with
	// nothing written. The host may have opened something else than the
	// caller meant: a name a path goes through can change between the
	// caller's last look and the open.
	Check func(fs.FileInfo) error
	// Opened, when set, is called once every file is open (and checked),
	// just before the first byte is written.
	Opened func()
	// Whole, when set, is called as bytes reach the host with the offset
	// below which the file is whole (from Offset on, which it is called
	// with first): after each chunk the host acknowledged, whether or not
	// that moved the offset, so a call says the upload is moving. It must
	// not block.
	Whole func(offset int64)
	// Busy says a session of the connection stays open through the
	// upload (the command that promotes it as it arrives): a host whose
	// sessions are full then refuses the first stream at once, an error
	// SessionsFull reports, instead of being asked again while one of
	// the connection's sessions that just closed frees its place.
	Busy bool
}

const (
	// ChunkSize is what a stream writes at a time, many requests in flight.
	ChunkSize = 2 << 20
	// chunks are in flight at once, spread over the streams: on one, a
	// chunk's last acknowledgements overlap the next chunk's first writes.
	chunks = 8
	// Window is the most an upload has in flight: a cut upload is whole up
	// to its length less Window.
	Window = chunks * ChunkSize
	// MaxStreams bounds UploadOptions.Streams.
	MaxStreams = chunks
)

// Upload implements [Uploader]. Streams is ignored: the file is written
// directly.
func (l *Local) Upload(ctx context.Context, path string, r io.Reader, o UploadOptions) (int64, error) {
	flags := os.O_WRONLY | os.O_CREATE | os.O_EXCL
	if o.Existing {
		flags = os.O_WRONLY | syscall.O_NOFOLLOW
	}
	f, err := os.OpenFile(path, flags, 0o600)
	if err != nil {
		return 0, err
	}
	if o.Check != nil {
		if err := checkFile(f.Stat, o.Check); err != nil {
			f.Close()
			return 0, err
		}
	}
	// Whatever the umask.
	if err := f.Chmod(0o600); err != nil {
		f.Close()
		return 0, err
	}
	if o.Existing {
		if _, err := f.Seek(o.Offset, io.SeekStart); err != nil {
			f.Close()
			return 0, err
		}
	}
	if o.Opened != nil {
		o.Opened()
	}
	var w io.Writer = f
	if o.Whole != nil {
		o.Whole(o.Offset)
		w = &wholeWriter{w: f, at: o.Offset, fn: o.Whole}
	}
	n, err := io.Copy(w, ctxReader{ctx, r})
	if err == nil && o.Existing {
		err = f.Truncate(o.Offset + n)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return n, err
}

// Upload implements [Uploader] with SFTP, at line rate: the stream goes in
// chunks (writeChunks), each written with File.WriteAt, which sends a large
// buffer as many requests in flight at once. Writing through io.Copy, or
// from a wrapped reader through File.ReadFrom, would send one request at a
// time. One SFTP channel is bound by its window (sshd gives 2 MiB), a round
// trip's worth of bytes: with o.Streams, that many channels on the one
// connection write the chunks.
func (s *SSH) Upload(ctx context.Context, path string, r io.Reader, o UploadOptions) (int64, error) {
	streams := min(max(o.Streams, 1), MaxStreams)
	var clients []*sftp.Client
	defer func() {
		for _, c := range clients {
			c.Close()
		}
	}()
	var mu sync.Mutex
	stop := context.AfterFunc(ctx, func() {
		mu.Lock()
		defer mu.Unlock()
		for _, c := range clients {
			c.Close()
		}
	})
	defer stop()
	// The channels open at once, each a few round trips; the first may be
	// open already (Prepare).
	opened := make([]*sftp.Client, streams)
	errs := make([]error, streams)
	var wg sync.WaitGroup
	for i := range streams {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if i == 0 {
				if opened[0] = s.takeSpare(ctx); opened[0] != nil {
					return
				}
			}
			// Only the first waits for a host whose sessions are
			// full: the upload goes on with the streams there are.
			opened[i], errs[i] = s.openSFTP(ctx, i == 0 && !o.Busy)
		}()
	}
	wg.Wait()
	mu.Lock()
	for _, c := range opened {
		if c != nil {
			clients = append(clients, c)
		}
	}
	mu.Unlock()
	// Fewer channels than asked: the upload goes on with those there are.
	if len(clients) == 0 {
		return 0, errs[0]
	}
	// The first opens (and makes) the file; with Existing, all open it at
	// once.
	files := make([]*sftp.File, len(clients))
	first := 1
	if o.Existing {
		first = 0
	} else {
		var err error
		if files[0], err = openUpload(ctx, clients[0], path, false); err != nil {
			return 0, err
		}
	}
	for i := first; i < len(clients); i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			files[i], errs[i] = openUpload(ctx, clients[i], path, true)
		}()
	}
	wg.Wait()
	// The first file must be open, and with o.Check every file is checked
	// (all at once) before any is written.
	var bad error
	if files[0] == nil {
		bad = errs[0]
	} else if o.Check != nil {
		checked := make([]error, len(files))
		for i, f := range files {
			if f != nil {
				wg.Add(1)
				go func() {
					defer wg.Done()
					checked[i] = checkFile(f.Stat, o.Check)
				}()
			}
		}
		wg.Wait()
		bad = cmp.Or(checked...)
	}
	if bad != nil {
		for _, f := range files {
			if f != nil {
				f.Close()
			}
		}
		return 0, bad
	}
	f := files[0]
	files = slices.DeleteFunc(files, func(f *sftp.File) bool { return f == nil })
	defer func() {
		for _, f := range files[1:] {
			f.Close()
		}
	}()
	if o.Opened != nil {
		o.Opened()
	}
	n, err := writeChunks(files, ctxReader{ctx, r}, o.Offset, o.Whole)
	if err == nil && o.Existing {
		err = f.Truncate(o.Offset + n)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	var status *sftp.StatusError
	var rerr readError
	switch {
	case err == nil:
	case ctx.Err() != nil:
		err = ctx.Err()
	case errors.As(err, &rerr):
		// This side's reader failed: nothing about the host.
		err = rerr.err
	case !errors.As(err, &status):
		// Not the server's answer (a full disk, a permission): the
		// connection broke, and what the host holds is not known.
		err = UnknownOutcome(s.explain(err))
	}
	return n, err
}

// checkFile gives check what stat says of an opened file.
func checkFile(stat func() (os.FileInfo, error), check func(fs.FileInfo) error) error {
	fi, err := stat()
	if err != nil {
		return fmt.Errorf("cannot look at the file opened for the upload: %w", err)
	}
	return check(fi)
}

// Prepare implements [Preparer]: it opens an SFTP channel in the
// background, which the next Upload takes as its first stream. A push opens
// it while its first host command runs, which saves the channel's three
// round trips (the channel, the subsystem, SFTP's version exchange).
func (s *SSH) Prepare() (discard func()) {
	ch := make(chan *sftp.Client, 1) // nil when it could not be opened
	go func() {
		c, _ := s.openSFTP(context.Background(), false)
		ch <- c
	}()
	s.mu.Lock()
	old := s.spare
	s.spare = ch
	s.mu.Unlock()
	if old != nil {
		go closeSpare(old)
	}
	return func() {
		s.mu.Lock()
		mine := s.spare == ch
		if mine {
			s.spare = nil
		}
		s.mu.Unlock()
		if mine {
			go closeSpare(ch)
		}
	}
}

// takeSpare is the stream Prepare opened, once it is open, or nil when
// there is none, it failed, or ctx ended first (it is closed then).
func (s *SSH) takeSpare(ctx context.Context) *sftp.Client {
	s.mu.Lock()
	ch := s.spare
	s.spare = nil
	s.mu.Unlock()
	if ch == nil {
		return nil
	}
	select {
	case c := <-ch:
		return c
	case <-ctx.Done():
		go closeSpare(ch)
		return nil
	}
}

// closeSpare closes a prepared stream once its opening is over.
func closeSpare(ch chan *sftp.Client) {
	if c := <-ch; c != nil {
		c.Close()
	}
}

// openUpload opens the upload's file: a new one, exclusively, or the one
// there.
func openUpload(ctx context.Context, c *sftp.Client, path string, existing bool) (*sftp.File, error) {
	if existing {
		f, err := c.OpenFile(path, os.O_WRONLY)
		if err != nil {
			return nil, fmt.Errorf("sftp open %s: %w", path, err)
		}
		return f, nil
	}
	f, err := c.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL)
	if err != nil {
		return nil, fmt.Errorf("sftp open %s: %w", path, err)
	}
	// pkg/sftp (v1.13.12) has no way to put a mode in the open request,
	// so the server creates the file with its default, 0666 less sshd's
	// umask (0644, typically). The handle is narrowed to 0600 (fsetstat,
	// so it is this very file) before a byte is written. Until then the file is empty; but another
	// user who opens it in that window, one round trip long, keeps
	// reading what follows through that descriptor. Mode bits on the file
	// cannot close that window: a directory other users cannot enter can.
	if err := f.Chmod(0o600); err != nil {
		f.Close()
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("sftp chmod 0600 %s: %w", path, err)
	}
	return f, nil
}

// writeChunks reads r in chunks of ChunkSize and writes each at its offset
// (from off on) through one of files, chunks at a time spread over them
// (each chunk many requests in flight: File.WriteAt with concurrent
// writes). A chunk goes out only once everything Window before its end is
// written, so a file cut short is whole up to its length less Window. It
// returns the bytes read from r once all are written; or the first error,
// with the bytes from off on written without a gap. whole, when not nil, is
// told the offset below which everything is written after each chunk
// (UploadOptions.Whole).
func writeChunks(files []*sftp.File, r io.Reader, off int64, whole func(int64)) (int64, error) {
	if whole == nil {
		whole = func(int64) {}
	}
	whole(off)
	type chunk struct {
		buf []byte
		off int64
	}
	// Buffers are made as the stream needs them, chunks+1 at most: a small
	// upload (and a fleet of them) holds one.
	free := make(chan []byte, chunks+1)
	made := 0
	buffer := func() []byte {
		select {
		case b := <-free:
			return b
		default:
		}
		if made < chunks+1 {
			made++
			return make([]byte, ChunkSize)
		}
		return <-free
	}
	jobs := make(chan chunk)
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		moved = sync.NewCond(&mu)
		first error
		done  = off               // everything below is written
		ahead = map[int64]int64{} // chunks written beyond whole: offset to end
	)
	written := func(c chunk, err error) {
		mu.Lock()
		defer mu.Unlock()
		defer moved.Broadcast()
		if err != nil {
			first = cmp.Or(first, err)
			return
		}
		ahead[c.off] = c.off + int64(len(c.buf))
		for end, ok := ahead[done]; ok; end, ok = ahead[done] {
			delete(ahead, done)
			done = end
		}
		whole(done)
	}
	// ready waits until a chunk ending at end may go; false once a write
	// failed.
	ready := func(end int64) bool {
		mu.Lock()
		defer mu.Unlock()
		for first == nil && done < end-Window {
			moved.Wait()
		}
		return first == nil
	}
	for i := range chunks {
		wg.Add(1)
		go func(f *sftp.File) {
			defer wg.Done()
			for c := range jobs {
				_, err := f.WriteAt(c.buf, c.off)
				written(c, err)
				free <- c.buf[:cap(c.buf)]
			}
		}(files[i%len(files)])
	}
	var read int64
	for {
		buf := buffer()
		n, err := io.ReadFull(r, buf)
		if n > 0 {
			if !ready(off + read + int64(n)) {
				break
			}
			jobs <- chunk{buf[:n], off + read}
			read += int64(n)
		}
		if err != nil {
			if !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
				written(chunk{}, readError{err})
			}
			break
		}
	}
	close(jobs)
	wg.Wait()
	if first != nil {
		return done - off, first
	}
	return read, nil
}

// wholeWriter tells fn, after each write, the offset its bytes reach.
type wholeWriter struct {
	w  io.Writer
	at int64
	fn func(int64)
}

func (w *wholeWriter) Write(p []byte) (int, error) {
	n, err := w.w.Write(p)
	w.at += int64(n)
	w.fn(w.at)
	return n, err
}

// readError is writeChunks' reader failing, as opposed to a write.
type readError struct{ err error }

func (e readError) Error() string { return e.err.Error() }
func (e readError) Unwrap() error { return e.err }

// ContextReader returns a reader of r that stops once ctx is done: every
// Read checks ctx first and then returns its error, so a long copy (an
// upload, hashing a file, reading an archive whose sparse entries read as
// zeros without touching the file) ends within one buffer of a
// cancellation. A Read already blocked in r is not interrupted. The reader
// has no WriteTo: io.Copy from it takes the plain path.
func ContextReader(ctx context.Context, r io.Reader) io.Reader { return ctxReader{ctx, r} }

type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}
