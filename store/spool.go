package store

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
)

// ErrNeedName: an artifact read from a stream has no file name to name the
// runtime after, and no name was given.
var ErrNeedName = errors.New("a stream has no file name: give --name")

// streamSource is what a stream is called in messages.
const streamSource = "-"

// OpenReader reads an artifact from a stream (push -): a tar, plain or
// compressed with gzip, xz or zstd. A zip is refused: its directory is at
// its end, so it cannot be read as it arrives. o.Name is required. Once
// ctx is done it returns its error at once, also while a read of r blocks
// (a producer that stalled); that read is left to end by itself.
//
// The stream is copied into a private temporary file (mode 0600, in
// os.TempDir()), since WriteTar reads the artifact again, once per host; so
// there must be room for the archive there. The caller must Close the
// artifact to remove that file: defer it as soon as OpenReader succeeds.
// On error nothing is left behind.
func OpenReader(ctx context.Context, r io.Reader, o OpenOptions) (*Artifact, error) {
	if o.Name == "" {
		return nil, ErrNeedName
	}
	if err := checkName(o.Name); err != nil {
		return nil, err
	}
	a := &Artifact{Source: streamSource, Name: o.Name, keepSetuid: o.KeepSetuid, maxSize: o.MaxSize}
	r, stop := cancelable(ctx, r)
	defer stop()
	// The format is told before anything is copied: a zip, or something
	// that is no archive, is refused without reading it all first.
	br := bufio.NewReaderSize(r, 1<<16)
	head, err := br.Peek(blockSize)
	if err != nil && err != io.EOF {
		return nil, fmt.Errorf("reading standard input: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("reading standard input: %w", err)
	}
	switch {
	case len(head) == 0:
		return nil, fmt.Errorf("%w: - (standard input) is empty, not an archive", ErrArtifact)
	case sniff(head) == formatZip:
		return nil, fmt.Errorf("%w: -: a zip cannot be read from standard input (it needs seeking: its directory is at its end); give its file name", ErrArtifact)
	case sniff(head) == formatUnknown:
		return nil, a.unsupported()
	}
	if err := a.spoolFrom(br); err != nil {
		a.Close()
		return nil, err
	}
	if err := a.readArchive(ctx, nil); err != nil {
		a.Close()
		return nil, err
	}
	if err := a.finish(); err != nil {
		a.Close()
		return nil, err
	}
	return a, nil
}

// spoolFrom copies r into a new temporary file, which becomes a's source.
func (a *Artifact) spoolFrom(r io.Reader) error {
	f, err := os.CreateTemp(os.TempDir(), "hoist-stream-*.spool")
	if err != nil {
		return fmt.Errorf("spooling standard input: %w", err)
	}
	a.root, a.spool = f.Name(), f.Name()
	_, err = io.Copy(f, r)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("spooling standard input to %s: %w", f.Name(), err)
	}
	return nil
}

// Close releases what the artifact holds: the temporary copy of a stream
// (OpenReader), after which WriteTar cannot be called. For an artifact read
// from a directory or a file it does nothing. Calling it again is harmless.
func (a *Artifact) Close() error {
	if a.spool == "" {
		return nil
	}
	err := os.Remove(a.spool)
	a.spool = ""
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	return err
}
