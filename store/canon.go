package store

import (
	"bufio"
	"encoding/hex"
	"fmt"
	"io"
)

// canonVersion opens the canonical form. A new form gets a new tag, so no
// tree's form under one version can equal another tree's under the next.
const canonVersion = "hoist-tree/2\n"

// writeCanon writes the canonical form of entries, in the order given, that
// the digest (and so the runtime id) is computed over: the version line,
// then one line per entry,
//
//	<type> <mode in octal> <len>:<path><len>:<payload>\n
//
// where the payload is a file's SHA-256 in hex, a symlink's target, or
// nothing for a directory. The type is one byte, the mode ends at a space
// it cannot contain, and the path and payload say their length first, so
// the form reads back one way only: whatever bytes a name or a link target
// holds, two different trees never have the same form. (Version 1 ended a
// link's target at a newline, and a target holding "\nd 755 x" read as a
// second entry.)
func writeCanon(w io.Writer, entries []Entry) error {
	bw := bufio.NewWriter(w)
	bw.WriteString(canonVersion)
	for _, e := range entries {
		var payload string
		switch e.Type {
		case 'f':
			payload = hex.EncodeToString(e.Sum[:])
		case 'l':
			payload = e.Target
		}
		bw.WriteByte(e.Type)
		fmt.Fprintf(bw, " %o %d:%s%d:%s\n", uint32(e.Mode.Perm()|specialBits(e.Mode)),
			len(e.Path), e.Path, len(payload), payload)
	}
	return bw.Flush()
}
