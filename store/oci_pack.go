package store

import (
	"archive/tar"
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"github.com/hoistdev/hoist/transport"
	"io"
	"io/fs"
	"strings"
	"time"
)

// packItem is one entry of a pack, in the pack's order, with its time.
type packItem struct {
	e     Entry
	mtime time.Time
}

// packError: a pack is not an archive hoist writes. Whether the registry
// served the blob it names is asked before this is said.
type packError struct{ err error }

func (e *packError) Error() string { return e.err.Error() }
func (e *packError) Unwrap() error { return e.err }

// maxPackText bounds the pack's own files (modes, files) as read back.
const maxPackText = 64 << 20

// readPack reads a pack's entries: what a host's tar makes of it under
// tree/, with the digests of the files it holds and, for each file that
// is a link to pool/<ReuseName>, that name's digest and the size of the
// blob the manifest lists for it (files). The directories get their modes
// from the pack's modes file. Anything a pack of hoist's never holds is
// refused: another entry type, a path outside tree/, a link elsewhere than
// to the pool or to a file before it, a pool name the manifest lists no
// blob for. What is left (the order, the times, the headers' form) is
// checked by writing the pack again (rewritePack).
func (a *Artifact) readPack(ctx context.Context, r io.Reader, ref OCIRef, files map[string]int64) ([]packItem, error) {
	bad := func(format string, args ...any) error {
		return &packError{refused(ref, "its pack "+format, args...)}
	}
	tr := tar.NewReader(transport.ContextReader(ctx, r))
	var items []packItem
	at := map[string]int{} // path to its item
	var modes string
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, bad("is not a tar archive (%v)", err)
		}
		switch h.Name {
		case TreeDir + "/":
			if h.Typeflag != tar.TypeDir {
				return nil, bad("has a %s that is not a directory", h.Name)
			}
			continue
		case ModesFile, FilesFile:
			if h.Typeflag != tar.TypeReg || h.Size > maxPackText {
				return nil, bad("has a %s entry that is not hoist's", h.Name)
			}
			if h.Name == ModesFile {
				b, err := io.ReadAll(tr)
				if err != nil {
					return nil, bad("is cut short (%v)", err)
				}
				modes = string(b)
			}
			continue
		}
		name, ok := strings.CutPrefix(h.Name, TreeDir+"/")
		if !ok {
			return nil, bad("holds %q, outside %s/", h.Name, TreeDir)
		}
		p, err := cleanPath(strings.TrimSuffix(name, "/"))
		if err != nil {
			return nil, err
		}
		if _, dup := at[p]; dup || p == "." {
			return nil, bad("holds %s twice", p)
		}
		e := Entry{Path: p, Mode: fs.FileMode(h.Mode)&fs.ModePerm | modeBits(h.Mode), mtime: h.ModTime}
		switch h.Typeflag {
		case tar.TypeDir:
			e.Type = 'd'
		case tar.TypeSymlink:
			e.Type, e.Target = 'l', h.Linkname
		case tar.TypeReg:
			e.Type, e.Size = 'f', h.Size
			if err := a.claim(p, e.Size); err != nil {
				return nil, err
			}
			hw := sha256.New()
			if _, err := io.Copy(hw, tr); err != nil {
				return nil, bad("is cut short in %s (%v)", p, err)
			}
			copy(e.Sum[:], hw.Sum(nil))
		case tar.TypeLink:
			e.Type = 'f'
			if pn, ok := strings.CutPrefix(h.Linkname, PoolDir+"/"); ok {
				size, listed := files[pn]
				if !listed {
					return nil, bad("links %s to %s, which the manifest lists no blob for", p, h.Linkname)
				}
				sum, _ := hex.DecodeString(pn[:64])
				e.Sum, e.Size = [32]byte(sum), size
				if ReuseName(e.Sum, e.Mode) != pn {
					return nil, bad("links %s, of mode %s, to %s", p, octalMode(e.Mode), h.Linkname)
				}
			} else if lp, ok := strings.CutPrefix(h.Linkname, TreeDir+"/"); ok {
				i, seen := at[lp]
				if !seen || items[i].e.Type != 'f' || items[i].e.link != "" {
					return nil, bad("links %s to %s, which is not a file before it", p, h.Linkname)
				}
				first := items[i].e
				e.Sum, e.Size, e.link = first.Sum, first.Size, lp
			} else {
				return nil, bad("links %s to %s, outside the runtime and its pool", p, h.Linkname)
			}
			if err := a.claim(p, e.Size); err != nil {
				return nil, err
			}
		default:
			return nil, bad("holds %s of tar type %q", p, h.Typeflag)
		}
		at[p] = len(items)
		items = append(items, packItem{e: e, mtime: h.ModTime})
	}
	// "<octal mode>\t<path>": a directory's mode, which its header had
	// with owner write and search added.
	for line := range strings.Lines(modes) {
		m, p, ok := strings.Cut(strings.TrimSuffix(line, "\n"), "\t")
		mode, valid := parseMode(m)
		i, seen := at[p]
		if !ok || !valid || !seen || items[i].e.Type != 'd' {
			return nil, bad("has a modes line %q that is not hoist's", line)
		}
		items[i].e.Mode = mode
	}
	return items, nil
}

// rewritePack writes the pack again from items (in the pack's order, with
// their times; entries is the tree, sorted, they make), linking to the
// pool every file files names, and returns its SHA-256. The inline files'
// bytes are read from pack, the pack itself. The same bytes as the pack
// mean the host's tar makes of it exactly the tree readPack read: hoist's
// own archive, nothing more.
func rewritePack(ctx context.Context, items []packItem, entries []Entry, files map[string]int64, pack io.Reader) ([32]byte, error) {
	h := sha256.New()
	pk := newPacker(h, entries)
	pk.pool = map[string]string{}
	for n := range files {
		pk.pool[n] = n
	}
	tr := tar.NewReader(transport.ContextReader(ctx, bufio.NewReaderSize(pack, 1<<16)))
	if err := pk.put(pk.treeHeader()); err != nil {
		return [32]byte{}, err
	}
	for _, it := range items {
		if err := pk.header(it.e, it.mtime); err != nil {
			return [32]byte{}, err
		}
		if it.e.Type != 'f' || it.e.link != "" || pk.linked {
			continue
		}
		// Its bytes: the pack's next plain file of that name.
		for {
			hd, err := tr.Next()
			if err != nil {
				return [32]byte{}, fmt.Errorf("reading the pack again: %w", errors.Join(err, io.ErrUnexpectedEOF))
			}
			if hd.Typeflag == tar.TypeReg && hd.Name == TreeDir+"/"+it.e.Path {
				break
			}
		}
		if _, err := io.CopyN(pk, tr, it.e.Size); err != nil {
			return [32]byte{}, fmt.Errorf("reading the pack again: %w", err)
		}
	}
	if err := pk.close(); err != nil {
		return [32]byte{}, err
	}
	return [32]byte(h.Sum(nil)), nil
}
