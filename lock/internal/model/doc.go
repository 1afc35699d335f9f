// Package model is an explicit-state model checker of the store lock
// protocol of docs/protocol.md, as the shell fragments in shellcmd/sh
// implement it.
//
// # What is modelled
//
// The filesystem (FS) is the lock path L (<store>/.store-lock): absent, or a
// directory holding token directories L/<t> with or without their record
// L/<t>/rec, an earlier version's L/owner and L/.owner-<tok>, and prepared
// directories L/L.new-<t> that plain mv moved into it. Beside L are the
// prepared directories L.new-<t> (holding <t>/rec) and the records moved out
// (L.stolen-<t>, L.released-<t>, L.broken-<t>). rename(2) is modelled
// exactly: onto an absent path it succeeds, onto an empty directory it
// replaces it, onto a non-empty one it fails; plain mv looks at its target
// first, and moves into it if it is a directory then. rmdir fails on a
// non-empty directory; mv of a file that does not exist fails.
//
// Each client runs a program of ops (Acquire, Break), one filesystem
// operation per step, exactly as the fragments do them, with the names of
// their h_step hooks where they have one:
//
//   - h_acquire and h_judge (wait.sh): sample (h_sample, sample.sh), then
//     free: h_create; dead: h_clear, h_create; held, legacy, or ownerless
//     twice running: judged by h_stealable (rules.sh: previous boot, exited,
//     stale), then h_steal;
//   - h_steal and h_cas (steal.sh): steal.judged (mv L/T/rec L.stolen-me, or
//     mv L/owner, or for an ownerless lock h_clear then [ ! -e L ]),
//     steal.moved (rm -f the moved record), h_clear, h_create;
//   - h_create (create.sh): create.mkdir, create.write, create.prepared
//     ([ ! -e L ]), create.publish (mv looks at L), create.rename,
//     create.check ([ -f L/me/rec ]), create.inside ([ ! -d L.new-me ] &&
//     [ ! -d L/L.new-me ]: the attempt is spent, and h_nexttoken goes on
//     with a spare token, or the acquire ends), create.cleanup (and, in
//     variant RetryAndUndo, create.undo and create.undo-rm);
//   - h_clear (sample.sh): clear.judged (rm -f L/.owner-*), clear.glob (the
//     expansion of L/*), clear.rmdir-token (one per word), clear.rmdir-lock;
//   - holding: fence.aged and fence (h_owned, lease.sh: by the holder's
//     clock the record's lease has not run out, or the record is gone and
//     its age unknown; then the record is there) and fence.checked (the
//     mutation h_fence allowed); beat (h_renew, a heartbeat: touch -c
//     L/me/rec, disowned when the lease had run out before it, or the
//     record is gone: the holder takes its lock as lost, as after a fence
//     that said LOST); then h_release (release.sh): release.cas (mv
//     L/me/rec L.released-me), release.moved (h_clear), release.rm;
//   - h_op_break (ops.sh): break.sample, break.judged (the CAS), break.rm,
//     h_clear.
//
// Some operations are merged into one step where nothing else can tell:
// h_sample (each of its looks at a path is one stat, and a path that
// vanished between two looks is ignored) and the stat of h_stealable (a
// record's age only grows, and an earlier version's lock is judged by L's
// age, its record never coming back), the two mkdirs of a prepared
// directory (no one else names it), rm -rf of a directory that is not a
// lock, rm -f L/.owner-* (no one makes them any more), and the look at
// L.new-me in a spent test (no one else names it).
//
// # Tokens
//
// A token is one attempt's (Tok): of a client, an op of its program, and
// its first token or a spare (Config.Spares, 0 or 1), in one boot. An
// acquire keeps its token while its attempts provably never published it
// (its prepared directory still at its name, or landed inside L), and
// takes its spare after one it finds spent: gone from both places, which
// is both a lock published and taken (Client.Publ says so) and a landed
// directory cleared before the look, told apart only in Result's counts.
//
// # Time, crashes, reboots
//
// Ages are flags (FS.Expired per token, FS.LockOld for L's mtime) that the
// environment may set between any two steps, once the record exists: time
// passing, or an owner (its heartbeat with it) or a stealer stalled past
// the lease. A heartbeat renews a lease that has not run out, which the
// flags cannot tell, and never clears Expired: a waiter's judgement made
// before it stays true, and the holder disowns it. A change to L's entries
// makes L young again. A judgement uses the flags at its sample; its CAS
// may come any number of steps later.
//
// The environment may also crash a client: it stops for ever, its files
// stay, and its host process (the one its records name) is gone, so the
// exited rule lets anyone take its lock at once (a record of this boot
// only; the process is named by pid and start time, so a reused pid is not
// it). The host's rule is narrower: it fires only where /proc is proven
// the namespace's, on both sides (h_procown). Elsewhere a crashed client
// is, to the others, one that stalls for ever, never scheduled again, its
// lock waiting for its lease: a run the model explores. Without Config.CrashMoves, a crash is a client never scheduled
// again, and the creator of the lock a sample looks at may crash just
// before it. The environment may reboot the host (Config.Reboots): every
// client stops, every record becomes a previous boot's (stealable at once
// by the boot rule, except an earlier version's), and the clients run
// their programs again with new tokens.
//
// # Invariants
//
// Explore checks, in every reachable state and step: TwoHolders (of the
// clients that believe they hold the lock, at most one holds a token whose
// lease has not run out; a forced break ends the lease of the token it
// names; a fence's mutation needs the lock or an expired lease), StaleFence
// (a fence passes only after a look that saw its record with its lease
// unexpired), NonOwner
// (a record leaves L only by its owner's release or by a steal or break of
// that very token, judged stealable or forced when sampled, an exited
// judgement only if its creator had crashed then; rmdir never takes a
// record with it), OneLockPerToken (a token is published at L at most
// once), and DebrisBlocks (with every client stopped, a fresh
// client alone acquires within a bounded number of its steps, time
// passing; the states where it needs the ownerless rule are reported by
// where the clients stopped, Result.AgeRule). Its stronger form: with
// every client crashed, the fresh client acquires without any time
// passing; the states where it needs time are reported the same way
// (Result.NeedsTime), and the tests allow only a crash inside h_clear and
// an earlier version's lock.
//
// A judgement is of one lock, not of a name: when the lock a client judged
// leaves L, its judgement is marked Gone, and a later CAS of a lock of the
// same token (which only the variants that publish a token twice make) is
// a removal by a non-owner unless the break was forced.
//
// # Search
//
// Explore is breadth first over packed states (pack.go), so every
// counterexample is a shortest run, printed one line per move (Trace).
// Config.MaxStates bounds it. Two reductions keep the same runs in fewer
// states: CrashMoves off takes a crash to be a client that is never
// scheduled again (which every interleaving includes), made known only to
// the sample that judges by it, and LazyTime lets time pass only just
// before the sample that sees it. A heartbeat that renews a lease is no
// move: it changes nothing the model tells apart.
//
// # Variants
//
// Variant turns the model into one of the bugs the checker has found or
// must find (WholeDirSteal, CheckThenRelease, OwnerlessBirth; RetryAndUndo,
// h_create as first written: it published a second lock of the same token
// after losing the first, and moved a directory that landed inside L back
// out; HeartbeatRevives, a heartbeat that renews a lease that had run out;
// ExitedWhileRunning, an exited rule that finds a stalled holder gone;
// FenceLooksFirst, a fence that looks for its record before its age;
// SpentReuse, an acquire that goes on after a spent attempt with the same
// token), so the tests can show that the checker finds each.
package model
