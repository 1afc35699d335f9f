package main

import (
	"github.com/hoistdev/hoist/cmd/hoist/output"
	"github.com/hoistdev/hoist/shellcmd"
)

// unfinished says, for the commands that only read or run (list, lock
// status, run), each rollout record the host keeps with no done, on
// stderr, with what shows it and what finishes it: those commands settle
// nothing, so this is how an operator learns that a host is mid-rollout.
// It returns the records for --json (nil for none).
func (a *app) unfinished(host string, recs []shellcmd.UnfinishedRecord) []output.UnfinishedRollout {
	for _, u := range recs {
		a.sayUnfinished(host, u)
	}
	return unfinishedJSON(recs)
}

// sayUnfinished is unfinished's line for one record.
func (a *app) sayUnfinished(host string, u shellcmd.UnfinishedRecord) {
	from := u.From
	if from == "" {
		from = "nothing"
	}
	a.say(host, "keeps an unfinished rollout %s (%s -> %s, %s): hoist rollout status %s shows it; unless the rollout is still under way, hoist rollout resume %s finishes it",
		u.ID, from, orDash(u.To), orDash(u.State), u.ID, u.ID)
}

func unfinishedJSON(recs []shellcmd.UnfinishedRecord) []output.UnfinishedRollout {
	var out []output.UnfinishedRollout
	for _, u := range recs {
		out = append(out, output.UnfinishedRollout{ID: u.ID, Mode: u.Mode, From: u.From, To: u.To, State: u.State})
	}
	return out
}
