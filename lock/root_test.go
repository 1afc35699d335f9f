package lock

import "testing"

func TestParseRoot(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Root
		bad  bool
	}{
		{in: "/srv/hoist", want: Root{Path: "/srv/hoist"}},
		{in: "/srv/hoist/", want: Root{Path: "/srv/hoist"}},
		{in: "/", want: Root{Path: "/"}},
		{in: "~", want: Root{Home: true}},
		{in: "~/", want: Root{Home: true}},
		{in: "~/.hoist", want: Root{Home: true, Path: ".hoist"}},
		{in: "~/-n $(x)", want: Root{Home: true, Path: "-n $(x)"}},
		{in: "~user/x", bad: true},
		{in: "rel", bad: true},
		{in: "-rf", bad: true},
		{in: "", bad: true},
		{in: "/a\x00b", bad: true},
	} {
		got, err := ParseRoot(tc.in)
		if tc.bad != (err != nil) || (!tc.bad && got != tc.want) {
			t.Errorf("ParseRoot(%q) = %+v, %v", tc.in, got, err)
		}
	}
}
