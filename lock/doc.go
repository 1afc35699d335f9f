// Package lock is hoist's store lock: a directory, <root>/runtimes/.store-lock,
// that holds <token>/rec, its holder's record. The lock is the token's exactly
// while that record is there; it appears with its record in one rename, and
// every release, steal and break starts by moving the record of the one token
// it judged, so no step that stalls can act on another holder's lock.
//
// Start with [New], then:
//
//   - [Lock.Run] acquires, runs a command and releases in one host command; the
//     host releases the lock itself when the command exits, so a client that
//     is killed or disconnected never strands it;
//   - [Lock.Acquire] takes the lock for a manual hold and returns its token;
//     [Lock.TryAcquire] makes one attempt and never creates the store;
//   - [Lock.Release] releases a token, owner-checked;
//   - [Lock.Status] reads the lock and changes nothing;
//   - [Lock.Break] removes a stealable lock, or with force a named one.
//
// # Guarantees
//
// All decisions are made on the host, in one command, by the host's clock: a
// lock whose holder did not renew it for more than its lease ([Lock.Lease],
// 20 minutes unless set; commands working under the lock renew it), whose
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
// is left to the host-side release and the stale rules, never cleaned up on a
// guess. [ErrNoStore], [ErrNotHeld], [ErrNotStealable], [ErrNotOwner],
// [ErrAbandoned], [ErrLockPath] and [ErrUnsafePath] name the other outcomes;
// any other error the host reports is a [*HostError], whose message is the
// sentence the protocol table gives its code (shellcmd/codes.go), for the
// store's codes too.
package lock
