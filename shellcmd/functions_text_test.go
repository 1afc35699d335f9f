package shellcmd

import (
	"strings"
	"testing"
)

// TestShPct: h_pct makes any name one field for the end of a verdict line:
// spaces stay, "%" and the line breaks are percent-encoded, and unpct gives
// the name back, byte for byte. A name of the usual characters is printed
// as it is.
func TestShPct(t *testing.T) {
	cases := []struct{ name, want string }{
		{"app-0123456789ab", "app-0123456789ab"},
		{"two words", "two words"},
		{"50%", "50%25"},
		{"%0A", "%250A"},
		{"evil\nRT fake-000000000000 0 0 c fake", "evil%0ART fake-000000000000 0 0 c fake"},
		{"ends with a line feed\n", "ends with a line feed%0A"},
		{"\n\nstarts with two", "%0A%0Astarts with two"},
		{"cr\rlf\r\n", "cr%0Dlf%0D%0A"},
		{"tab\tand \x1b[31mred", "tab\tand \x1b[31mred"},
		{"ünïcode", "ünïcode"},
	}
	fnShells(t, func(t *testing.T, sh []string, root string) {
		for _, c := range cases {
			r := fnRun{fns: []string{"h_pct", "h_say"}, vars: map[string]string{"h_t_in": c.name},
				call: `h_t_out=$(h_pct "$h_t_in"); h_say OUT "[$h_t_out]"`}.do(t, sh, root)
			if len(r.said) != 1 || r.said[0] != "OUT ["+c.want+"]" {
				t.Errorf("%s: h_pct %q said %q, want %q", sh[0], c.name, r.said, "OUT ["+c.want+"]")
				continue
			}
			if got := unpct(strings.TrimSuffix(strings.TrimPrefix(r.said[0], "OUT ["), "]")); got != c.name {
				t.Errorf("%s: unpct(h_pct %q) = %q", sh[0], c.name, got)
			}
		}
	})
}
