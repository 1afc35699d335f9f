package shellcmd

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"al.essio.dev/pkg/shellescape"
)

// Record is a lock's owner record as the wire carries it (package lock's
// Record is the same, as users see it). The host writes its first fields (token,
// since, the boot evidence) when it creates the lock; the client supplies
// the rest. It is one line:
//
//	hoist-lock/2 token=T since=EPOCH mach=M boot=B pidns=N init=S pid=N who=W ver=V cmd=C msg=M
//
// with client values percent-encoded, so the line has no spaces of its own.
// An earlier version wrote "hoist-lock/1 token=T boot=B since=EPOCH …", where
// B is its own boot identity; such a record reads with Format 1 and Boot set.
type Record struct {
	Format int // 2, or 1 for an earlier version's record
	Token  string
	Since  time.Time
	// The boot evidence of the previous-boot rule ([Facts]); "-" where
	// the host could not read it.
	Machine, BootID, PIDNS, Init string
	// Boot is an earlier version's boot identity (Format 1 only).
	Boot string
	// Lease is the holder's lease: the lock may be taken once its record
	// was not renewed for this long. Zero when the record names none (then
	// the lease assumed for it applies, Params.Stale).
	Lease time.Duration
	// HolderPID and HolderStart name the host process that holds the lock
	// (its pid and its start time in clock ticks after boot), HolderUID its
	// login's uid: the evidence of the exited rule. "" for a manual hold,
	// which no process holds, and for a record that names none.
	HolderPID, HolderStart, HolderUID string
	PID                               int
	Who                               string // user@host of the client
	Version                           string // hoist version of the client
	Command                           string // what the holder is doing
	Message                           string // --message
}

const (
	recordTag   = "hoist-lock/2"
	recordTagV1 = "hoist-lock/1"
)

// MaxField bounds each client value in a record, so that a record, and every
// verdict that carries it, stays far below the verdict line limit.
const MaxField = 512

// Encode renders the client's part of the record. Longer values are cut to
// MaxField bytes, at a character boundary.
func (r Record) Encode() string {
	return fmt.Sprintf("pid=%d who=%s ver=%s cmd=%s msg=%s",
		r.PID, pct(cut(r.Who)), pct(cut(r.Version)), pct(cut(r.Command)), pct(cut(r.Message)))
}

func cut(s string) string {
	if len(s) <= MaxField {
		return s
	}
	n := MaxField
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// ParseRecord parses a record's first line strictly: ok is false for anything
// that is not a whole record, and such a lock is treated as held by an
// unknown owner.
func ParseRecord(line string) (r Record, ok bool) {
	fields := strings.Split(line, " ")
	if len(fields) < 4 {
		return Record{}, false
	}
	switch fields[0] {
	case recordTag:
		r.Format = 2
	case recordTagV1:
		r.Format = 1
	default:
		return Record{}, false
	}
	seen := map[string]bool{}
	for _, f := range fields[1:] {
		k, v, found := strings.Cut(f, "=")
		if !found || seen[k] {
			return Record{}, false
		}
		seen[k] = true
		if _, err := url.PathUnescape(v); err != nil {
			return Record{}, false
		}
		switch k {
		case "token":
			r.Token = v
		case "boot":
			if r.Format == 1 {
				r.Boot = v
			} else {
				r.BootID = v
			}
		case "mach":
			r.Machine = v
		case "pidns":
			r.PIDNS = v
		case "init":
			r.Init = v
		case "lease":
			if n, err := strconv.Atoi(v); err == nil && v[0] != '0' && n >= int(minLease/time.Second) && n <= int(maxLease/time.Second) {
				r.Lease = time.Duration(n) * time.Second
			}
		case "hpid":
			r.HolderPID = digits(v)
		case "hstart":
			r.HolderStart = digits(v)
		case "huid":
			r.HolderUID = digits(v)
		case "since":
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				return Record{}, false
			}
			r.Since = time.Unix(n, 0)
		default:
			r.setClient(k, v)
		}
	}
	if r.Token == "" || r.Token == "-" || !seen["boot"] || !seen["since"] {
		return Record{}, false
	}
	if r.Format == 2 && (!seen["mach"] || !seen["pidns"] || !seen["init"]) {
		return Record{}, false
	}
	return r, true
}

// digits is s when it is a decimal number, else "".
func digits(s string) string {
	if s == "" || strings.Trim(s, "0123456789") != "" {
		return ""
	}
	return s
}

// SameBoot reports whether r was written on the boot the host is on now
// (f, its facts); known is false when r is an earlier version's, or either
// side could not read its boot_id.
func (r Record) SameBoot(f *Facts) (same, known bool) {
	if r.Format != 2 || r.BootID == "-" || f == nil || f.BootID == "" {
		return false, false
	}
	return r.BootID == f.BootID, true
}

// SamePIDNS reports whether r was written in the host's PID namespace (f,
// its facts); known is false when r is an earlier version's, or either side
// could not read it.
func (r Record) SamePIDNS(f *Facts) (same, known bool) {
	if r.Format != 2 || r.PIDNS == "-" || f == nil || f.PIDNS == "" {
		return false, false
	}
	return r.PIDNS == f.PIDNS, true
}

// parseClient reads the client's part of a record ([Record.Encode]) with
// its fields separated by sep, as the store's history keeps it. A field
// that does not decode stays empty. Values are encoded without sep (","),
// but an earlier version left commas as they were: a piece that does not
// start a client field continues the one before it.
func parseClient(s, sep string) Record {
	var r Record
	var fields []string
	for _, f := range strings.Split(s, sep) {
		k, _, _ := strings.Cut(f, "=")
		if len(fields) > 0 && !clientKeys[k] {
			fields[len(fields)-1] += sep + f
			continue
		}
		fields = append(fields, f)
	}
	for _, f := range fields {
		k, v, _ := strings.Cut(f, "=")
		r.setClient(k, v)
	}
	return r
}

// clientKeys are the keys of the client's part of a record.
var clientKeys = map[string]bool{"pid": true, "who": true, "ver": true, "cmd": true, "msg": true}

// setClient sets the client's field k from its encoded value v.
func (r *Record) setClient(k, v string) {
	dec, err := url.PathUnescape(v)
	if err != nil {
		return
	}
	switch k {
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

// pct percent-encodes everything but a small safe set, so a value never
// carries a space, a newline or a shell metacharacter into the record, nor
// the comma that separates the fields of a history line (h_history).
func pct(s string) string {
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("-._~/:@+", c) >= 0 {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hex[c>>4])
		b.WriteByte(hex[c&15])
	}
	return b.String()
}

// RunInfo is the client's part of a run's record on the host (runs/<id>/info):
// who runs it and the whole command line, percent-encoded. The run's record
// is private to the login, unlike the lock's, which names the program only.
func RunInfo(who string, argv []string) string {
	return "who=" + pct(cut(who)) + " cmd=" + pct(cut(shellescape.QuoteCommand(argv)))
}

// unpct decodes a value RunInfo or Record.Encode encoded; a value that does
// not decode is returned as it is.
func unpct(s string) string {
	if d, err := url.PathUnescape(s); err == nil {
		return d
	}
	return s
}
