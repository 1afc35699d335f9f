package shellcmd

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Printable makes text from a host or another user safe to print on a
// terminal: control characters (C0, DEL, C1), and bytes that are not UTF-8,
// are written as Go escapes (\x1b, \u009b), so that a record, a command
// line or a message can neither move the cursor, clear the screen nor set a
// terminal's title. Everything else is kept as it is.
func Printable(s string) string {
	clean := true
	for _, r := range s {
		if r < 0x20 || r == 0x7f || r >= 0x80 && r < 0xa0 || r == utf8.RuneError {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n <= 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		case r >= 0x80 && r < 0xa0:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}
