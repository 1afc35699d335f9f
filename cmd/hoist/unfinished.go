package main

import (
	"github.com/hoistdev/hoist/cmd/hoist/output"
	"github.com/hoistdev/hoist/lock"
	"github.com/hoistdev/hoist/shellcmd"
)

// unfinished says, for the commands that only read or run (list, lock
// status, run), each rollout record the host keeps with no done, on
// stderr, with what shows it and, for one that is not under way, what
// finishes it: those commands settle nothing, so this is how an operator
// learns that a host is mid-rollout. lk is the lock as lock status found
// it, nil for the others. It returns the records for --json (nil for
// none).
func (a *app) unfinished(host string, recs []shellcmd.UnfinishedRecord, lk *lock.State) []output.UnfinishedRollout {
	for _, u := range recs {
		a.sayUnfinished(host, u, lk)
	}
	return unfinishedJSON(recs, lk)
}

// lapsed: the record's hold owns a lock that a rule lets anyone take (lock
// status saw it so): its host command died or stalled past its lease, and
// can finish nothing.
func lapsed(u shellcmd.UnfinishedRecord, lk *lock.State) bool {
	return u.Held && lk != nil && lk.Locked && lk.Stealable()
}

// underWay: the record's hold owns the store lock, and nothing shows that
// it lapsed (docs/rollout.md, "Other commands and unfinished records").
func underWay(u shellcmd.UnfinishedRecord, lk *lock.State) bool { return u.Held && !lapsed(u, lk) }

// sayUnfinished is unfinished's line for one record.
func (a *app) sayUnfinished(host string, u shellcmd.UnfinishedRecord, lk *lock.State) {
	from := u.From
	if from == "" {
		from = "nothing"
	}
	switch {
	case lapsed(u, lk):
		a.say(host, "keeps an unfinished rollout %s (%s -> %s, %s), whose hold owns the store lock, which a rule lets anyone take (%s): its host command died or stalled; hoist rollout status %s shows it; hoist rollout resume %s finishes it",
			u.ID, from, orDash(u.To), orDash(u.State), lk.Why, u.ID, u.ID)
	case u.Held:
		stale := ""
		if lk == nil {
			stale = " (hoist lock status says whether that lock is stale)"
		}
		a.say(host, "keeps an unfinished rollout %s (%s -> %s, %s), whose hold owns the store lock: under way, or its host command died and the lock was not released or taken since%s; hoist rollout status %s shows it",
			u.ID, from, orDash(u.To), orDash(u.State), stale, u.ID)
	default:
		a.say(host, "keeps an unfinished rollout %s (%s -> %s, %s), interrupted: hoist rollout status %s shows it; hoist rollout resume %s finishes it",
			u.ID, from, orDash(u.To), orDash(u.State), u.ID, u.ID)
	}
}

func unfinishedJSON(recs []shellcmd.UnfinishedRecord, lk *lock.State) []output.UnfinishedRollout {
	var out []output.UnfinishedRollout
	for _, u := range recs {
		out = append(out, output.UnfinishedRollout{ID: u.ID, Mode: u.Mode, From: u.From, To: u.To, State: u.State, UnderWay: underWay(u, lk)})
	}
	return out
}
