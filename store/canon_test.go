package store

import (
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"reflect"
	"strconv"
	"testing"
)

// canonV1 is the canonical form before hoist-tree/2, kept here to show the
// trees it could not tell apart.
func canonV1(entries []Entry) []byte {
	var b bytes.Buffer
	for _, e := range entries {
		switch e.Type {
		case 'l':
			fmt.Fprintf(&b, "l %o %s\x00%s\n", e.Mode&fs.ModePerm, e.Path, e.Target)
		case 'f':
			fmt.Fprintf(&b, "f %o %s\x00%x\n", e.Mode.Perm()|specialBits(e.Mode), e.Path, e.Sum)
		case 'd':
			fmt.Fprintf(&b, "d %o %s\n", e.Mode.Perm()|specialBits(e.Mode), e.Path)
		}
	}
	return b.Bytes()
}

func canon(t *testing.T, entries []Entry) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := writeCanon(&b, entries); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// parseCanon reads a canonical form back. That it can, for any entries,
// is what makes the form injective.
func parseCanon(b []byte) ([]Entry, error) {
	if !bytes.HasPrefix(b, []byte(canonVersion)) {
		return nil, errors.New("no version line")
	}
	b = b[len(canonVersion):]
	var out []Entry
	for len(b) > 0 {
		if len(b) < 2 || b[1] != ' ' {
			return nil, errors.New("bad type")
		}
		e := Entry{Type: b[0]}
		b = b[2:]
		i := bytes.IndexByte(b, ' ')
		if i < 0 {
			return nil, errors.New("no mode")
		}
		m, err := strconv.ParseUint(string(b[:i]), 8, 32)
		if err != nil {
			return nil, err
		}
		e.Mode = fs.FileMode(m&0o777) | modeBits(int64(m))
		var payload string
		if e.Path, b, err = field(b[i+1:]); err != nil {
			return nil, err
		}
		if payload, b, err = field(b); err != nil {
			return nil, err
		}
		if len(b) == 0 || b[0] != '\n' {
			return nil, errors.New("no newline")
		}
		b = b[1:]
		switch e.Type {
		case 'f':
			sum, err := hex.DecodeString(payload)
			if err != nil || len(sum) != 32 {
				return nil, errors.New("bad sum")
			}
			e.Sum = [32]byte(sum)
		case 'l':
			e.Target = payload
		}
		out = append(out, e)
	}
	return out, nil
}

// field reads "<len>:<bytes>".
func field(b []byte) (string, []byte, error) {
	i := bytes.IndexByte(b, ':')
	if i < 0 {
		return "", nil, errors.New("no length")
	}
	n, err := strconv.Atoi(string(b[:i]))
	if err != nil || n < 0 || len(b) < i+1+n {
		return "", nil, errors.New("bad length")
	}
	return string(b[i+1 : i+1+n]), b[i+1+n:], nil
}

// TestCanonicalFormIsInjective: under the old form a link whose target held
// "\nd 755 y" read as the link plus a directory y, so the two trees had one
// id. The new form tells them apart, and reads back to the entries it was
// made from, whatever bytes their names and targets hold.
func TestCanonicalFormIsInjective(t *testing.T) {
	injected := []Entry{{Path: "a", Type: 'l', Mode: 0o777, Target: "x\nd 755 y"}}
	honest := []Entry{{Path: "a", Type: 'l', Mode: 0o777, Target: "x"}, {Path: "y", Type: 'd', Mode: 0o755}}
	if !bytes.Equal(canonV1(injected), canonV1(honest)) {
		t.Fatal("the test's trees do not collide under the old form")
	}
	if bytes.Equal(canon(t, injected), canon(t, honest)) {
		t.Fatal("two trees, one canonical form")
	}
	cases := [][]Entry{injected, honest, nil,
		{{Path: "a\x00b", Type: 'f', Mode: fs.ModeSetuid | 0o755}},
		{{Path: "a", Type: 'l', Mode: 0o777, Target: "b\x00f 644 c"}},
		{{Path: "3:abc", Type: 'd', Mode: fs.ModeSticky | 0o777}, {Path: "", Type: 'l', Target: "1:x"}},
	}
	r := rand.New(rand.NewPCG(1, 2))
	const alphabet = "ab/.: \n\x00\x7f9"
	junk := func() string {
		b := make([]byte, r.IntN(12))
		for i := range b {
			b[i] = alphabet[r.IntN(len(alphabet))]
		}
		return string(b)
	}
	for range 500 {
		var es []Entry
		for range r.IntN(4) {
			e := Entry{Path: junk(), Type: "dfl"[r.IntN(3)], Mode: fs.FileMode(r.IntN(0o1000))}
			switch e.Type {
			case 'f':
				e.Sum[r.IntN(32)] = byte(r.IntN(256))
			case 'l':
				e.Target = junk()
			}
			es = append(es, e)
		}
		cases = append(cases, es)
	}
	for _, es := range cases {
		got, err := parseCanon(canon(t, es))
		if err != nil || !reflect.DeepEqual(got, es) {
			t.Fatalf("%+v reads back as %+v: %v", es, got, err)
		}
	}
}
