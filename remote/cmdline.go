package remote

import (
	"fmt"
	"strings"
)

// CommandLine renders script as the command line for a host's login shell.
// Every byte outside printable ASCII, and every character that some login
// shell or the double quotes around it would interpret (\ ' " $ ` and, for
// tcsh, !), is written as a printf %b octal escape (\0NNN), which only
// /bin/sh's printf decodes.
func CommandLine(script string) string {
	var b strings.Builder
	b.Grow(len(script)*5/4 + 64)
	b.WriteString(`exec /bin/sh -c 'eval "$(printf %b "`)
	for i := 0; i < len(script); i++ {
		c := script[i]
		if c >= 0x20 && c < 0x7f && strings.IndexByte("\\'\"$`!", c) < 0 {
			b.WriteByte(c)
			continue
		}
		fmt.Fprintf(&b, `\0%03o`, c)
	}
	b.WriteString(`")"'`)
	return b.String()
}
