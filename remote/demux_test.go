package remote

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

const mark = "@hoist:abc"

func demuxAll(chunks ...string) (out string, verdicts []string, err error) {
	var buf bytes.Buffer
	d := newDemux(mark, &buf, func(v string) { verdicts = append(verdicts, v) })
	for _, c := range chunks {
		d.Write([]byte(c))
	}
	err = d.Close()
	return buf.String(), verdicts, err
}

func TestDemux(t *testing.T) {
	for _, tc := range []struct {
		name     string
		chunks   []string
		out      string
		verdicts []string
		bad      bool
	}{
		{"verdicts only", []string{"\n" + mark + " FREE\n"}, "", []string{"FREE"}, false},
		{"output then verdict", []string{"hello\n", "\n" + mark + " EXIT 0\n"}, "hello\n", []string{"EXIT 0"}, false},
		{"output without newline", []string{"partial", "\n" + mark + " EXIT 1\n"}, "partial", []string{"EXIT 1"}, false},
		{"split everywhere", strings.Split("a\n\n"+mark+" STARTED\nb "+mark+" x\n\n"+mark+" EXIT 0\n", ""), "a\nb " + mark + " x\n", []string{"STARTED", "EXIT 0"}, false},
		{"marker look-alike", []string{"\n@hoist:abd EXIT 0\n", "\n" + mark + "X\n"}, "\n@hoist:abd EXIT 0\n\n" + mark + "X\n", nil, false},
		{"noise before", []string{"motd\n\n" + mark + " FACTS a b c d\n"}, "motd\n", []string{"FACTS a b c d"}, false},
		{"cut short", []string{"\n" + mark + " EXI"}, "", nil, true},
	} {
		out, vs, err := demuxAll(tc.chunks...)
		if (err != nil) != tc.bad || out != tc.out || strings.Join(vs, "|") != strings.Join(tc.verdicts, "|") {
			t.Errorf("%s: out %q verdicts %q err %v", tc.name, out, vs, err)
		}
	}
}

// TestDemuxPassesAnyOutput: whatever a command prints, cut at random
// places, comes out unchanged, and the verdicts around it are all found.
func TestDemuxPassesAnyOutput(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	alphabet := []byte("ab\n\n@hoist:abc \x00\xff")
	for range 2000 {
		payload := make([]byte, r.IntN(200))
		for i := range payload {
			payload[i] = alphabet[r.IntN(len(alphabet))]
		}
		stream := "\n" + mark + " STARTED\n" + string(payload) + "\n" + mark + " EXIT 0\n"
		var chunks []string
		for rest := stream; rest != ""; {
			n := min(len(rest), 1+r.IntN(8))
			chunks = append(chunks, rest[:n])
			rest = rest[n:]
		}
		out, vs, err := demuxAll(chunks...)
		if strings.Contains(string(payload), "\n"+mark+" ") {
			continue // a payload that forges this run's marker is not output
		}
		if err != nil || out != string(payload) || strings.Join(vs, "|") != "STARTED|EXIT 0" {
			t.Fatalf("payload %q: out %q verdicts %q err %v", payload, out, vs, err)
		}
	}
}

// TestDemuxDeliversHeldNewline: a line of output is not kept waiting for
// the next byte, and a verdict after it is still recognized.
func TestDemuxDeliversHeldNewline(t *testing.T) {
	var buf bytes.Buffer
	var vs []string
	d := newDemux(mark, lockedBuffer{&buf}, func(v string) { vs = append(vs, v) })
	d.Write([]byte("line\n"))
	time.Sleep(3 * holdBack)
	d.mu.Lock()
	got := buf.String()
	d.mu.Unlock()
	if got != "line\n" {
		t.Fatalf("held back: %q", got)
	}
	d.Write([]byte(mark + " EXIT 0\n"))
	if err := d.Close(); err != nil || len(vs) != 1 || vs[0] != "EXIT 0" || buf.String() != "line\n" {
		t.Fatalf("out %q verdicts %q err %v", buf.String(), vs, err)
	}
}

type lockedBuffer struct{ b *bytes.Buffer }

func (l lockedBuffer) Write(p []byte) (int, error) { return l.b.Write(p) }
