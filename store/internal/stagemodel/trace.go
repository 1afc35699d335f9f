package stagemodel

import (
	"fmt"
	"strings"
)

// desc receives what the step being run did, for traces; a nil *desc
// ignores it, so the search formats nothing.
type desc struct{ step, fx string }

// op describes an operation at position at, and whether it succeeded.
func (d *desc) op(at fmt.Stringer, ok bool, format string, args ...any) {
	if d == nil {
		return
	}
	d.step, d.fx = at.String(), fmt.Sprintf(format, args...)+map[bool]string{true: ": ok", false: ": fails"}[ok]
}

// say describes a step that is no filesystem operation.
func (d *desc) say(at fmt.Stringer, format string, args ...any) {
	if d == nil {
		return
	}
	d.step, d.fx = at.String(), fmt.Sprintf(format, args...)
}

// tok names a push's token for traces: A made the stage, B and C may take
// it over.
func tok(p int) string {
	if p < 0 || p >= maxPushes {
		return "-"
	}
	return string(rune('A' + p))
}

func (s Set) String() string {
	var b strings.Builder
	for p := range maxPushes {
		if s.has(p) {
			b.WriteString(tok(p))
		}
	}
	if b.Len() == 0 {
		return "nobody"
	}
	return b.String()
}

// replay runs ls from the start and describes each move, one line each.
func (m *Model) replay(ls []Label) []string {
	s := m.start()
	var lines []string
	for _, l := range ls {
		var line string
		switch {
		case l.Actor >= 0:
			var d desc
			who := "gc"
			if int(l.Actor) < maxPushes {
				who = tok(int(l.Actor)) + " " + s.P[l.Actor].Cmd.String()
			}
			if !m.act(&s, int(l.Actor), int(l.Choice), &d) {
				panic("stagemodel: a trace's move does not replay")
			}
			line = fmt.Sprintf("%-24s %-18s %s", who, d.step, d.fx)
		default:
			m.moves(&s, func(x State, y Label) {
				if y == l {
					s = x
				}
			})
			who, step, what := "environment", "stall", "time passes beyond the stale period (a lease held runs out)"
			if l.Arg >= 0 {
				who, step, what = tok(int(l.Arg)), "crash", "its host command is killed"
				if int(l.Arg) == gcActor {
					who = "gc"
				}
			}
			line = fmt.Sprintf("%-24s %-18s %s", who, step, what)
		}
		lines = append(lines, line)
	}
	return lines
}
