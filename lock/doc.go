// Package lock is hoist's store lock: a directory, <root>/runtimes/.store-lock,
// that holds <token>/rec, its holder's record. The lock is the token's exactly
// while that record is there; it appears with its record in one rename, and
// every release, steal and break starts by moving the record of the one token
// it judged, so no step that stalls can act on another holder's lock.
//
// Start with [New], on a transport (transport.Local for this machine,
// transport.DialSSH for a host) and a [Root] ([DefaultRoot], ~/.hoist, or
// [ParseRoot]), then:
//
//   - [Lock.Run] acquires, runs a command and releases in one host command; the
//     host releases the lock itself when the command exits, so a client that
//     is killed or disconnected never strands it;
//   - [Lock.Acquire] takes the lock for a manual hold and returns its token;
//     [Lock.TryAcquire] makes one attempt and never creates the store;
//   - [Lock.Release] releases a token, owner-checked;
//   - [Lock.Status] reads the lock and changes nothing;
//   - [Lock.Break] removes a stealable lock, or with force a named one;
//   - [Lock.Runs] and [Lock.Logs] read the runs the host keeps;
//   - [Lock.Doctor] checks the host for what hoist needs there.
//
// Package store's operations (push, activate, gc, ...) are host commands on
// the same lock; package locktest is the conformance suite a transport or a
// kind of host runs.
//
// # Guarantees
//
// All decisions are made on the host, in one command, by the host's clock: a
// lock whose holder did not renew it for more than its lease ([Lock.Lease],
// [DefaultLease] unless set; commands working under the lock renew it), whose
// holder process and everything it started are gone (same boot, PID
// namespace and login), or recorded on a previous boot (proven: another
// boot_id of the same machine, or a replaced PID namespace) may be stolen
// ([State.Why] names the rule: [RuleStale], [RuleExited], [RuleBoot]), and
// any number of concurrent stealers yields one winner.
// Before it reads or changes anything, every command checks that the store's
// directories are real directories of the login or root, not writable by
// others.
// Waiting happens on the host, polling every 100 ms, so a waiter sees a release
// within a poll. Nothing that was not read cleanly counts as evidence that a
// lock is free or stealable: an unreadable record, a failed stat or a reply
// that does not parse all mean "held". docs/protocol.md gives every step.
//
// # Errors
//
// A lock that stayed held for the whole wait returns a [*BusyError] (matching
// [ErrBusy]). A release or a run that finds its token replaced returns or
// reports [ErrLost]. Contact lost before the host answered returns an error
// matching transport.ErrUnknownOutcome: the host may have acted, and the lock
// is left to the host-side release and the rules, never cleaned up on a
// guess. [ErrNoStore], [ErrNotHeld], [ErrNotStealable], [ErrNotOwner],
// [ErrAbandoned], [ErrLockPath] and [ErrUnsafePath] name the other outcomes;
// any other error the host reports is a [*HostError], whose message is the
// sentence the protocol table gives its code (shellcmd/codes.go), for the
// store's codes too.
//
// # Where things live
//
// The rules run on the host, in the shell functions of package shellcmd
// (shellcmd/sh/):
//
//   - the rules that let anyone take a held lock: sh/rules.sh, h_stealable,
//     with the previous-boot rule (h_prevboot), the exited-holder rule
//     (h_exited; the processes it looks at, sh/proc.sh) and the stale lease;
//   - the lease beside them, sh/lease.sh: the fence every store mutation
//     passes (h_fence), the renewal while a command works (h_renew), a
//     manual hold's own lease;
//   - taking the lock in one rename (sh/create.sh), stealing it by
//     compare-and-swap (sh/steal.sh), releasing it (sh/release.sh), waiting
//     on the host (sh/wait.sh), a command under the lock and its guardian
//     (sh/wrap.sh); docs/protocol.md gives every step in order, and package
//     lock/internal/model checks them with crashes and stalls at each.
//
// Here:
//
//   - lock.go: [New], [Lock] and its commands; run.go and runs.go:
//     [Lock.Run], following a run after contact was lost, the runs' records;
//   - state.go: [State], the rules' names ([Rule]) and what the host found
//     of the holder ([HolderProc]); lease.go: [DefaultLease] and its bounds;
//     record.go: [Record] and the host's [Facts]; root.go: [Root];
//     place.go: [Place], where a store is ([Lock.Place]: two targets that
//     reach one store);
//   - errors.go: the errors; doctor.go, doctor_time.go: [Lock.Doctor];
//   - wire.go: [Wire], the plumbing package store runs its commands
//     through, and the reading of the lock's verdicts in any reply.
package lock
