package rolloutmodel

import (
	"slices"
	"testing"
)

// findsBug explores variant v on cfg, a configuration the design is
// checked on (so the design's own runs there have no violation), and
// checks that the checker finds a violation of each of invs, with a trace.
func findsBug(t *testing.T, v Variant, cfg Config, invs ...string) {
	t.Helper()
	t.Parallel()
	cfg.Variant, cfg.StopAfter = v, invs
	found := explore(t, cfg).Violations
	for _, inv := range invs {
		i := slices.IndexFunc(found, func(w *Violation) bool { return w.Invariant == inv })
		if i < 0 {
			t.Errorf("the checker finds no violation of %q in the %s variant", inv, v)
			continue
		}
		t.Logf("found, as it should be:\n%v", found[i])
	}
}

// TestModelFindsOutcomeBeforeDecision: telling a host "commit" before the
// decider recorded it; the coordinator dies in between and the decider,
// which never heard, aborts.
func TestModelFindsOutcomeBeforeDecision(t *testing.T) {
	findsBug(t, OutcomeBeforeDecision, two, LearnsDecided, NeverMixed)
}

// TestModelFindsCommitWithoutVotes: a commit recorded as soon as every host
// is healthy, with no vote: a host that loses the coordinator before it
// learns the outcome has nothing that tells it not to abort.
func TestModelFindsCommitWithoutVotes(t *testing.T) {
	findsBug(t, CommitWithoutVotes, two, CommitValid, NeverMixed)
}

// TestModelFindsInDoubtPresumesAbort: a host that voted and lost the
// coordinator reverts by itself, after the decider committed.
func TestModelFindsInDoubtPresumesAbort(t *testing.T) {
	findsBug(t, InDoubtPresumesAbort, two, NeverMixed)
}

// TestModelFindsInDoubtPresumesCommit: it stays on the new runtime as
// done, after the decider aborted.
func TestModelFindsInDoubtPresumesCommit(t *testing.T) {
	findsBug(t, InDoubtPresumesCommit, two, NeverMixed)
}

// TestModelFindsInDoubtWaits: textbook two-phase commit, whose participant
// waits for the outcome, holding its lock, for as long as the coordinator
// stays away.
func TestModelFindsInDoubtWaits(t *testing.T) {
	findsBug(t, InDoubtWaits, two, LeaseBound)
}

// TestModelFindsVoteOverwrites: a vote written by a plain write: a stalled
// participant's "ready" replaces the "aborted" a settler wrote after the
// participant's lease ran out, and the rollout commits on a host that was
// reverted.
func TestModelFindsVoteOverwrites(t *testing.T) {
	findsBug(t, VoteOverwrites, twoOtherElsewhere, WriteOnce, NeverMixed)
}

// TestModelFindsDecisionOverwrites: the same with the decision on the
// decider.
func TestModelFindsDecisionOverwrites(t *testing.T) {
	findsBug(t, DecisionOverwrites, twoOtherOnDecider, WriteOnce, NeverMixed)
}

// TestModelFindsSwitchByFreshLink: current switched as activate switches it
// today (a fresh link renamed over current after a fence): a participant
// that stalled after its fence switches a host that a settler had finished
// on the old runtime.
func TestModelFindsSwitchByFreshLink(t *testing.T) {
	t.Run("atomic", func(t *testing.T) {
		findsBug(t, SwitchByFreshLink, twoOtherElsewhere, StaysDone, NeverUnproven)
	})
	t.Run("single", func(t *testing.T) {
		findsBug(t, SwitchByFreshLink, single, StaysDone, NeverUnproven)
	})
}

// TestModelFindsJournalAfterSwitch: the record written after the switch; a
// host shell killed in between leaves the host on a runtime nobody
// checked, and nothing on the host says so.
func TestModelFindsJournalAfterSwitch(t *testing.T) {
	findsBug(t, JournalAfterSwitch, single, NeverUnproven)
}

// TestModelFindsSettleSkipsRestart: a settler that restarts the service
// only after a revert it made itself: the revert of a host shell killed
// before its restart leaves the service on the runtime current no longer
// names.
func TestModelFindsSettleSkipsRestart(t *testing.T) {
	findsBug(t, SettleSkipsRestart, single, ServiceFollow)
}

// TestModelFindsGCIgnoresJournal: a gc that keeps only what current names
// removes the runtime an unfinished record reverts to.
func TestModelFindsGCIgnoresJournal(t *testing.T) {
	findsBug(t, GCIgnoresJournal, singleGC, NeverUnproven, ResumeEnds)
}

// TestModelFindsRestartByPath: a --restart that starts the runtime it was
// given instead of what current names; a participant that stalled before
// its restart runs it after a settler reverted the host.
func TestModelFindsRestartByPath(t *testing.T) {
	findsBug(t, RestartByPath, single, ServiceFollow)
}
