package shellcmd

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Record is a lock's owner record. The host writes its first fields (token,
// boot, since) when it creates the lock; the client supplies the rest. It is
// one line:
//
//	hoist-lock/1 token=T boot=B since=EPOCH pid=N who=W ver=V cmd=C msg=M
//
// with client values percent-encoded, so the line has no spaces of its own.
type Record struct {
	Token   string
	Boot    string
	Since   time.Time
	PID     int
	Who     string // user@host of the client
	Version string // hoist version of the client
	Command string // what the holder is doing
	Message string // --message
}

const recordTag = "hoist-lock/1"

// MaxField bounds each client value in a record, so that a record, and every
// verdict that carries it, stays far below the verdict line limit.
const MaxField = 512

// Encode renders the client's part of the record. Longer values are cut to
// MaxField bytes.
func (r Record) Encode() string {
	return fmt.Sprintf("pid=%d who=%s ver=%s cmd=%s msg=%s",
		r.PID, pct(cut(r.Who)), pct(cut(r.Version)), pct(cut(r.Command)), pct(cut(r.Message)))
}

func cut(s string) string {
	if len(s) > MaxField {
		return s[:MaxField]
	}
	return s
}

// ParseRecord parses a record's first line strictly: ok is false for anything
// that is not a whole record, and such a lock is treated as held by an
// unknown owner.
func ParseRecord(line string) (r Record, ok bool) {
	fields := strings.Split(line, " ")
	if len(fields) < 4 || fields[0] != recordTag {
		return Record{}, false
	}
	seen := map[string]bool{}
	for _, f := range fields[1:] {
		k, v, found := strings.Cut(f, "=")
		if !found || seen[k] {
			return Record{}, false
		}
		seen[k] = true
		dec, err := url.PathUnescape(v)
		if err != nil {
			return Record{}, false
		}
		switch k {
		case "token":
			r.Token = v
		case "boot":
			r.Boot = v
		case "since":
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				return Record{}, false
			}
			r.Since = time.Unix(n, 0)
		case "pid":
			r.PID, _ = strconv.Atoi(v)
		case "who":
			r.Who = dec
		case "ver":
			r.Version = dec
		case "cmd":
			r.Command = dec
		case "msg":
			r.Message = dec
		}
	}
	if r.Token == "" || r.Token == "-" || !seen["boot"] || !seen["since"] {
		return Record{}, false
	}
	return r, true
}

// pct percent-encodes everything but a small safe set, so a value never
// carries a space, a newline or a shell metacharacter into the record.
func pct(s string) string {
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("-._~/:@+,", c) >= 0 {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hex[c>>4])
		b.WriteByte(hex[c&15])
	}
	return b.String()
}
