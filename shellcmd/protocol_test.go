package shellcmd

import (
	"strings"
	"testing"
)

// TestEveryErrorCodeIsRead: each ERROR code an operation can end with is a
// row of the table of codes, with the package whose errors it is and its
// sentence, so no host error reaches a user as a bare code; and each row is
// a code some operation ends with (TestOpsTableMatchesTheShellCode holds the
// operations' codes to the shell).
func TestEveryErrorCodeIsRead(t *testing.T) {
	ended := map[Code]bool{}
	for _, op := range Ops {
		for _, c := range op.Codes {
			ended[c] = true
			if _, ok := codeSpecs[c]; !ok {
				t.Errorf("%s can end with ERROR %s, which the table of codes does not list", op.Name, c)
			}
		}
	}
	for _, c := range codes {
		if !ended[c.code] {
			t.Errorf("the table lists ERROR %s, which no operation ends with", c.code)
		}
		if s := c.code.Explain("some text"); s == "" || strings.HasPrefix(s, "host error:") {
			t.Errorf("ERROR %s reads as %q, not as a sentence", c.code, s)
		}
	}
	if got := Code("bogus").Explain("x"); got != "host error: bogus x" {
		t.Errorf("an unknown code reads as %q", got)
	}
}
