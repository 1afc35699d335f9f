package model

import (
	"fmt"
	"strings"
)

// Label is one move: a client's step (Actor, Choice) or the environment's
// (Actor -1, Move, Arg).
type Label struct {
	Actor  int8
	Choice uint8
	Move   EnvMove
	Arg    int8
}

// desc receives the name and the effect of the step being run, for traces.
// A nil *desc ignores everything, so the search formats nothing.
type desc struct{ step, fx string }

func (d *desc) say(step, format string, args ...any) {
	if d == nil {
		return
	}
	d.step, d.fx = step, fmt.Sprintf(format, args...)
}

// op describes a filesystem operation: $ in tmpl is the acting client's
// token, @ the other token.
func (d *desc) op(step string, ok bool, tmpl string, me, other Tok) {
	if d == nil {
		return
	}
	fx := strings.ReplaceAll(strings.ReplaceAll(tmpl, "$", tokName(me)), "@", tokName(other))
	switch {
	case strings.Contains(tmpl, " looks at "), strings.HasPrefix(tmpl, "the store"):
	case strings.HasPrefix(tmpl, "["), strings.HasPrefix(tmpl, "h_owned"):
		fx += map[bool]string{true: ": true", false: ": false"}[ok]
	case ok:
		fx += ": ok"
	default:
		fx += ": fails"
	}
	d.step, d.fx = step, fx
}

// apply makes move l from s; with d it also describes it.
func (m *Model) apply(s *State, l Label, d *desc) bool {
	if l.Actor >= 0 {
		prev := *s
		if !m.step(s, int(l.Actor), int(l.Choice), d) {
			return false
		}
		m.settle(&prev, s)
		return true
	}
	var found bool
	m.envMoves(s, func(n State, e Label) {
		if !found && e == l {
			*s, found = n, true
		}
	})
	if found && d != nil {
		switch l.Move {
		case Crash:
			d.step, d.fx = "crash", fmt.Sprintf("client %c stops for ever", 'A'+l.Arg)
		case Expire:
			d.step, d.fx = "expire", fmt.Sprintf("the record of %s is older than its lease now", tokName(Tok(l.Arg)))
		case AgeLock:
			d.step, d.fx = "age", "L's mtime is older than the stale bound now"
		case RebootAll:
			d.step, d.fx = "reboot", "every client stops; records are a previous boot's; clients start again"
		}
	}
	m.canon(s)
	return found
}

// Trace is a run of the model, one line per move.
type Trace struct {
	Start Start
	Lines []string
	Final State
}

// replay runs the moves ls from the start st and prints them.
func (m *Model) replay(st Start, ls []Label) Trace {
	s := m.initial(st)
	tr := Trace{Start: st}
	for _, l := range ls {
		var d desc
		if !m.apply(&s, l, &d) {
			tr.Lines = append(tr.Lines, fmt.Sprintf("(move %+v is not possible)", l))
			break
		}
		who := "env"
		if l.Actor >= 0 {
			who = string(rune('A' + l.Actor))
		}
		tr.Lines = append(tr.Lines, fmt.Sprintf("%-3s %-28s %s", who, d.step, d.fx))
	}
	tr.Final = s
	return tr
}

func (t Trace) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "from %s (%s):\n", t.Start, t.Start.fsString())
	for i, l := range t.Lines {
		fmt.Fprintf(&b, "%4d. %s\n", i+1, l)
	}
	fmt.Fprintf(&b, "      then: %s", t.Final.String())
	return b.String()
}

func (st Start) fsString() string {
	var m Model
	s := m.initial(st)
	return s.FS.String()
}

// String lists the filesystem as paths.
func (f FS) String() string { return f.paths(nil) }

// paths lists the filesystem as paths; moved names a moved-out record by
// its mover's token (nil: L.<moved>-<t>).
func (f FS) paths(moved func(Tok) string) string {
	var p []string
	if f.Lock {
		e := "L/"
		if f.LockOld {
			e += " (old)"
		}
		p = append(p, e)
	}
	if f.Owner {
		p = append(p, "L/owner")
	}
	if f.OwnerTmp {
		p = append(p, "L/.owner-x")
	}
	f.Dir.each(func(t Tok) {
		if f.Rec.has(t) {
			p = append(p, "L/"+tokName(t)+"/rec")
		} else {
			p = append(p, "L/"+tokName(t)+"/")
		}
	})
	f.Landed.each(func(t Tok) { p = append(p, "L/L.new-"+tokName(t)+"/"+tokName(t)+"/rec") })
	f.Stage.each(func(t Tok) {
		if f.StageRec.has(t) {
			p = append(p, "L.new-"+tokName(t)+"/"+tokName(t)+"/rec")
		} else {
			p = append(p, "L.new-"+tokName(t)+"/"+tokName(t)+"/")
		}
	})
	f.Moved.each(func(t Tok) {
		if moved == nil {
			p = append(p, "L.<moved>-"+tokName(t))
		} else {
			p = append(p, moved(t))
		}
	})
	if len(p) == 0 {
		return "nothing"
	}
	s := strings.Join(p, " ")
	if f.Expired != 0 {
		s += "; expired: " + setString(f.Expired, "")
	}
	if f.PrevBoot != 0 {
		s += "; previous boot: " + setString(f.PrevBoot, "")
	}
	return s
}

// String is the filesystem and where every client is.
func (s State) String() string {
	var c []string
	for i, cl := range s.C {
		if i == freshSlot && cl.Pos == PDone || i != freshSlot && cl.Pos == PDone && cl.Pc == 0 {
			continue
		}
		w := cl.where()
		if cl.Crashed {
			w = "crashed at " + w
		}
		c = append(c, fmt.Sprintf("%c %s", 'A'+i, w))
	}
	return s.FS.paths(s.movedName) + "; clients: " + strings.Join(c, ", ")
}

// movedName names the record moved out by token t's client, which is
// between that move and its removal.
func (s State) movedName(t Tok) string {
	kind := "released" // h_release removes it after its h_clear
	switch s.C[creator(t)].Pos {
	case PStealMoved:
		kind = "stolen"
	case PBreakRemove:
		kind = "broken"
	}
	return "L." + kind + "-" + tokName(t)
}

func setString(s Set, prefix string) string {
	if s == 0 {
		return "nothing"
	}
	var p []string
	s.each(func(t Tok) { p = append(p, prefix+tokName(t)) })
	return strings.Join(p, " ")
}
