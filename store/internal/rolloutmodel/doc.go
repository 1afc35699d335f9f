// Package rolloutmodel is an explicit-state model checker of the rollout
// protocol of docs/rollout.md: a host's health-checked activation that
// reverts by itself, and hoist rollout --atomic, a two-phase commit whose
// coordinator (the workstation) may die at any step. It has no code of
// hoist; the steps are the ones the page names, which the fragments and
// the client will stop at in the step tests (TestEveryStepIsNamedInTheDocs
// ties the names to the page).
//
// # What is modelled
//
// Each host (Host) has current (the old or the new runtime), the runtime
// its service was last started on, and its record of the rollout: the two
// links beside current (next, to the new runtime; back, to the old one),
// each ready, used (renamed over current) or fenced (renamed aside by a
// settler), and the write-once records made with ln -s: vote (ready or
// aborted), decision on the decider (host 0) or the outcome learnt from it
// elsewhere, done. Its lock is modelled as the lock model shows it behaves:
// one holder, taken when free, when the holder's host process is gone (the
// exited and boot rules) or once the holder's lease ran out. Whether the
// new runtime passes its checks on a host is fixed per start (every set of
// hosts is explored unless Config.Unhealthy says otherwise).
//
// The actors: the coordinator (Coord, coord.go) and one participant per
// host (Cmd, host.go: h_op_rollout, or h_op_activate in Single mode); a
// resume (Config.Resumer) with a host command per host (h_op_resume); and
// another command on one host (Config.OtherOn), one that switches current
// (it settles an unfinished record first) or gc. A participant and its
// client talk by control lines on the command's standard input (Cmd.In) and
// verdicts (Cmd.Out, Cmd.Told); a client that is gone is EOF (Cmd.Lost).
// One step is one filesystem operation or one verdict. A mutation runs only
// if the step before it found the lock the command's own with its lease
// unexpired (Cmd.Fence, h_fence): a command that stalls between its fence
// and its act makes that act after its lock was taken.
//
// # Crashes, faults, time
//
// Between any two steps the coordinator may crash, and so may the resume
// (once each): their host commands see EOF. Within Config.Faults, the
// coordinator's connection to a host may be cut, a host command's host
// shell killed (its lock is free at once), or a host rebooted (every host
// command on it dies; its service starts again on what current names).
// Within Config.Stalls, an acquire may first let a live holder's lease run
// out (it stalled, or its renewals stopped because its client went): the
// only moment an expiry can matter, so time is no move of its own.
//
// # Invariants
//
// In every state (stateViolations, checkStep): NeverMixed (no two hosts
// finished on different runtimes), StaysDone (current stays where a host
// finished), NeverUnproven (nothing finished on a runtime that did not
// pass its checks there), CommitValid (commit only when every host voted
// ready after its checks passed), LearnsDecided (an outcome is the
// decider's decision), WriteOnce (no vote, decision or done changes), and
// LeaseBound (a host command whose client is gone never waits for ever).
// In every state where everyone has stopped (quiescent): no lock is left
// held but by a stalled or gone holder, and a resume run alone (for a
// single host, the next command that switches current) ends with every
// host finished on one runtime that passed its checks everywhere, its
// service on it, no lock held (ResumeEnds, NeverMixed, NeverUnproven,
// ServiceFollow, LeaseBound). Where the fleet is mixed before that resume
// (Result.Mixed), the tests check that some host is unfinished, and that
// without faults or stalls some host is in doubt with the coordinator
// stopped inside the decide window.
//
// # Search
//
// Explore is breadth first over packed states (pack.go), so every
// counterexample is a shortest run, printed one line per move (Trace).
// Config.MaxStates bounds it; Config.StopAfter ends it once the violations
// sought were found. canon forgets what no later step reads.
//
// # Variants
//
// Variant turns the model into a design docs/rollout.md rejects, so that
// the tests show the checker finds each: OutcomeBeforeDecision,
// CommitWithoutVotes, InDoubtPresumesAbort, InDoubtPresumesCommit,
// InDoubtWaits, VoteOverwrites, DecisionOverwrites, SwitchByFreshLink,
// JournalAfterSwitch, SettleSkipsRestart, GCIgnoresJournal and RestartByPath.
package rolloutmodel
