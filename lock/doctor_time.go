package lock

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/hoistdev/hoist/transport"
)

// timeChecks are the round-trip time and the host's clock, read with one
// trivial command.
func timeChecks(ctx context.Context, t transport.Transport) []Check {
	rtt := linkRTT(t)
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	var out, errb bytes.Buffer
	begin := time.Now()
	status, err := t.Run(ctx, transport.Request{Command: "date +%s.%N", Stdout: &out, Stderr: &errb})
	end := time.Now()
	took := end.Sub(begin)

	rc := Check{Name: "rtt", Status: CheckOK}
	switch {
	case rtt > 0:
		rc.Value = round(rtt).String()
		rc.Detail = fmt.Sprintf("%s round trip (ssh keepalive)", round(rtt))
		if rtt > time.Second {
			rc.Status = CheckWarn
			rc.Detail += ": a slow link; every host command costs at least one"
		}
	case isLocal(t):
		rc.Detail = "local: no network"
	default:
		rc.Detail = "the round trip could not be measured"
	}
	if err == nil {
		rc.Detail += fmt.Sprintf("; a trivial command takes %s", round(took))
	}

	cc := Check{Name: "clock", Status: CheckWarn}
	hostTime, resolution, ok := parseHostTime(out.String())
	switch {
	case err != nil:
		cc.Detail = "cannot read the host's clock: " + err.Error()
	case status != 0 || !ok:
		cc.Detail = fmt.Sprintf("cannot read the host's clock: date +%%s exited %d: %s", status,
			firstLine(strings.TrimSpace(out.String()+" "+errb.String())))
	default:
		// The host read its clock somewhere between begin and end: at the
		// middle, give or take half the time, and the resolution of what
		// it printed.
		mid := begin.Add(took / 2)
		skew := hostTime.Add(resolution / 2).Sub(mid)
		unc := took/2 + resolution/2
		cc.Value = fmt.Sprintf("%+.3fs", skew.Seconds())
		cc.Status = CheckOK
		switch abs := time.Duration(math.Abs(float64(skew))); {
		case abs <= unc:
			cc.Detail = fmt.Sprintf("the host's clock agrees with this machine's (%+.3fs ± %.3fs)", skew.Seconds(), unc.Seconds())
		default:
			way := "ahead of"
			if skew < 0 {
				way = "behind"
			}
			cc.Detail = fmt.Sprintf("the host's clock is %.3fs %s this machine's (± %.3fs)", abs.Seconds(), way, unc.Seconds())
			if abs-unc > 5*time.Second {
				cc.Status = CheckWarn
			}
		}
	}
	return []Check{rc, cc}
}

// linkRTT is the connection's round-trip time: measured when it was made
// (with -v), else the fastest of three keepalive requests. Zero when not
// known.
func linkRTT(t transport.Transport) time.Duration {
	s, ok := t.(*transport.SSH)
	if !ok {
		return 0
	}
	if d := s.RTT(); d > 0 {
		return d
	}
	d, _ := s.RoundTrip(3)
	return d
}

func isLocal(t transport.Transport) bool {
	_, ok := t.(*transport.Local)
	return ok
}

var hostTimeRE = regexp.MustCompile(`(?m)^([0-9]+)(?:\.([0-9]{9}))?`)

// parseHostTime reads what date +%s.%N printed: seconds and nanoseconds
// (GNU), or seconds and a literal %N (busybox, BSD), whose resolution is a
// second. The last such line counts: a login script may print before it.
func parseHostTime(out string) (t time.Time, resolution time.Duration, ok bool) {
	m := hostTimeRE.FindAllStringSubmatch(out, -1)
	if len(m) == 0 {
		return time.Time{}, 0, false
	}
	last := m[len(m)-1]
	sec, err := strconv.ParseInt(last[1], 10, 64)
	if err != nil {
		return time.Time{}, 0, false
	}
	if last[2] == "" {
		return time.Unix(sec, 0), time.Second, true
	}
	ns, _ := strconv.ParseInt(last[2], 10, 64)
	return time.Unix(sec, ns), time.Microsecond, true
}

func round(d time.Duration) time.Duration {
	switch {
	case d >= time.Second:
		return d.Round(time.Millisecond)
	case d >= time.Millisecond:
		return d.Round(10 * time.Microsecond)
	}
	return d.Round(time.Microsecond)
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	if s == "" {
		return "no output"
	}
	return s
}
