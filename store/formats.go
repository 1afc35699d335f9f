package store

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/klauspost/compress/zstd"
	"github.com/ulikunitz/xz"
)

// format is what an artifact file holds. It is told by the file's first
// bytes, never by its name: a .tgz that is really a plain tar, or a
// download saved without an extension, is read for what it is, and the
// name only names the runtime.
type format int

const (
	formatUnknown format = iota
	formatTar
	formatGzip
	formatXz
	formatZstd
	formatZip
)

var magics = []struct {
	magic string
	f     format
}{
	{"\x1f\x8b", formatGzip},
	{"\xfd7zXZ\x00", formatXz},
	{"\x28\xb5\x2f\xfd", formatZstd},
	{"PK\x03\x04", formatZip},
	{"PK\x05\x06", formatZip}, // an empty zip is only the end of its directory
}

// archiveExts are the extensions of the formats hoist reads. DefaultName
// strips one: "app.zip.tar.gz" names the runtime "app.zip".
var archiveExts = []string{".tar.gz", ".tar.xz", ".tar.zst", ".tgz", ".txz", ".tzst", ".zip", ".tar"}

const supported = "hoist takes a directory, .tar, .tar.gz, .tgz, .tar.xz, .tar.zst, .zip, or - for a tar on standard input"

// sniff tells the format from the file's first block, or all of a file
// shorter than that.
func sniff(head []byte) format {
	for _, m := range magics {
		if bytes.HasPrefix(head, []byte(m.magic)) {
			return m.f
		}
	}
	if isTarStart(head) {
		return formatTar
	}
	return formatUnknown
}

// isTarStart reports whether head begins a tar archive: a header with the
// ustar magic, an old (v7) header whose checksum adds up, or the zero block
// that ends an archive (an empty one). A file shorter than a header is a
// tar cut short if what it has could begin one, so it is refused as cut
// rather than as an unknown format.
func isTarStart(head []byte) bool {
	if len(head) >= 262 && string(head[257:262]) == "ustar" {
		return true
	}
	if len(head) < blockSize {
		return couldBeHeader(head)
	}
	block := head[:blockSize]
	if bytes.Count(block, []byte{0}) == blockSize {
		return true
	}
	field := strings.Trim(string(block[148:156]), " \x00")
	want, err := strconv.ParseUint(field, 8, 32)
	if err != nil || field == "" {
		return false
	}
	// Some old tars summed signed bytes; archive/tar accepts either sum.
	var unsigned, signed int64
	for i, c := range block {
		if i >= 148 && i < 156 {
			c = ' '
		}
		unsigned += int64(c)
		signed += int64(int8(c))
	}
	return int64(want) == unsigned || int64(want) == signed
}

// couldBeHeader reports whether a piece shorter than a block could be the
// start of a tar header: a name without control characters, padded with
// zeros, then numeric fields in octal (or GNU's base-256, high bit set).
func couldBeHeader(b []byte) bool {
	name := b[:min(len(b), 100)]
	if i := bytes.IndexByte(name, 0); i >= 0 {
		if bytes.Count(name[i:], []byte{0}) != len(name)-i {
			return false
		}
		name = name[:i]
	}
	if bytes.ContainsFunc(name, isControl) {
		return false
	}
	for start := 100; start < 156 && start < len(b); {
		size := 8
		if start >= 124 && start < 148 {
			size = 12 // size and mtime
		}
		field := b[start:min(len(b), start+size)]
		if field[0]&0x80 == 0 && !octalField.Match(field) {
			return false
		}
		start += size
	}
	return true
}

var octalField = regexp.MustCompile(`^[0-7 \x00]*$`)

// unsupported refuses a file that is no format hoist reads, naming it by
// its extension; one that claims a format hoist reads is called damaged,
// since hoist does read what it says it is.
func (a *Artifact) unsupported() error {
	ext := "unknown"
	base := filepath.Base(a.Source)
	if e := filepath.Ext(base); extRE.MatchString(e) {
		ext = e
		if inner := filepath.Ext(strings.TrimSuffix(base, e)); inner == ".tar" {
			ext = inner + e
		}
	}
	for _, known := range archiveExts {
		if ext == known {
			return fmt.Errorf("%w: %s is damaged or not a %s archive: its first bytes are no archive format hoist reads; build it again", ErrArtifact, a.Source, known)
		}
	}
	return fmt.Errorf("%w: %s: unsupported archive format (%s): %s", ErrArtifact, a.Source, ext, supported)
}

// extRE is what reads as an extension: "v20.1.0-linux" has none.
var extRE = regexp.MustCompile(`^\.[A-Za-z0-9]{1,10}$`)

// xzEnded reports whether an xz file ends as a stream does: the footer's
// "YZ", then nothing but stream padding (zeros, four at a time).
// ulikunitz/xz takes a stream cut at a block header for a finished one
// (its pull request #83), and the tar may be whole by then; a cut file
// has no footer at its end.
func xzEnded(f io.ReaderAt, size int64) bool {
	buf := make([]byte, 4096)
	for end := size; end > 0; {
		start := max(0, end-int64(len(buf)))
		chunk := buf[:end-start]
		if _, err := f.ReadAt(chunk, start); err != nil {
			return false
		}
		i := len(chunk) - 1
		for i >= 0 && chunk[i] == 0 {
			i--
		}
		if i >= 0 {
			last := start + int64(i) + 1 // just past the footer
			var yz [2]byte
			_, err := f.ReadAt(yz[:], last-2)
			return err == nil && (size-last)%4 == 0 && string(yz[:]) == "YZ"
		}
		end = start
	}
	return false
}

// decoder returns the tar stream inside a compressed archive, and a
// function that releases the decoder.
func decoder(f format, br *bufio.Reader) (io.Reader, func(), error) {
	var r io.Reader
	var err error
	done := func() {}
	switch f {
	case formatTar:
		return br, done, nil
	case formatGzip:
		r, err = gzip.NewReader(br)
	case formatXz:
		r, err = xz.NewReader(br)
	case formatZstd:
		// One decoder, no goroutines: an artifact is read once, in order,
		// and a push may be reading it for several hosts at a time.
		var d *zstd.Decoder
		if d, err = zstd.NewReader(br, zstd.WithDecoderConcurrency(1)); err == nil {
			r, done = d, d.Close
		}
	}
	if err != nil {
		return nil, nil, codecErr(err)
	}
	return &codecReader{r}, done, nil
}

// codecError is an error of a decoder: the archive, not the disk, is bad.
type codecError struct{ err error }

func (e *codecError) Error() string { return e.err.Error() }
func (e *codecError) Unwrap() error { return e.err }

// codecErr marks err as the archive's fault, unless it is the end of the
// stream or the file system failing to read the file (*fs.PathError).
func codecErr(err error) error {
	var pe *fs.PathError
	if err == nil || err == io.EOF || errors.As(err, &pe) {
		return err
	}
	return &codecError{err}
}

type codecReader struct{ r io.Reader }

func (c *codecReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	return n, codecErr(err)
}
