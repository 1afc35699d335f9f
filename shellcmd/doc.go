// Package shellcmd renders the POSIX sh fragments that hoist runs on a host.
// It does no I/O: every function returns text, and every value it places in
// that text is quoted with [shellescape.Quote].
//
// It is hoist's wire layer, with package remote: what it exports is what
// packages lock and store need to speak the protocol, and it makes no
// compatibility promise. Programs use packages transport, lock and store,
// whose types (lock.Root, lock.Record, ...) are the ones users see.
//
// A host command is one operation ([Op], listed in [Ops]) rendered with its
// [Params] by [Render]: the shell functions the operation calls, found by
// following calls from h_op_<name> through sh/*.sh, so that a command carries
// nothing else. [Fragment.Script] puts the prelude before them (this exec's
// marker and the cached [Facts] of the host), the facts probe when there is
// no cache, and the LOADED line that tells the client the host has read the
// whole fragment. Every protocol line a fragment prints is a [Verdict]: the
// marker, a verb and its fields on a line of their own, so that the output of
// a command run under the lock, or a login script's noise, is never mistaken
// for one. [ParseVerdict] accepts only the verbs it knows, and [Op.Allows]
// only those of its operation; a test reads the shell files to keep the
// table of [Ops] exactly what the code can say.
//
// The shell functions live in sh/*.sh, a file a concept; docs/protocol.md
// (the lock) and docs/store.md (the store) describe the same steps in the
// same order and name the functions. The values the client gives
// ([Params]) are the shell's hp_* variables, and a fragment assigns only
// those its functions read; everything else a function reads is the
// host's (h_*: its facts, and what h_setup and other functions set). No
// variable has a function's name.
//
// # Where things live
//
//   - script.go: [Params], with the lease defaults, and [Render], which
//     assigns the hp_* parameters an operation reads; funcs.go: how sh/*.sh
//     becomes each operation's functions.
//   - ops.go: the operations ([Ops]), which verbs and codes each may send.
//   - protocol.go: the protocol table, one row per reply verb: its fields by
//     name and in order, and what it means (docs/protocol.md and
//     docs/store.md list the same rows, and a test holds them to it).
//   - codes.go: the ERROR codes, each with the package whose errors it is
//     and the sentence it becomes ([Code.Explain]).
//   - replies.go: the readers of the verdicts that carry fields
//     ([Verdict.Holder], [Verdict.Run], [Verdict.Runtime], ...), which turn
//     the host's "-" into zero values: nothing past them indexes fields or
//     compares with "-".
//
// The lock, in sh/:
//
//   - lib.sh: h_say (every protocol line), h_age (a file's age by the
//     host's clock), h_step (the points where step tests stop a command).
//   - facts.sh: the facts probe (FACTS: boot evidence, stat, sleep, uid).
//   - setup.sh: h_setup and the path checks every operation starts with.
//   - proc.sh: processes: /proc proven this namespace's, a holder that has
//     exited, a run's process group.
//   - sample.sh: reading the lock (h_sample) and its record (h_parse),
//     clearing a dead one (h_clear).
//   - rules.sh: the rules that let anyone take a held lock (h_stealable:
//     previous boot, exited holder, stale lease), and h_say_holder, which
//     says every verdict that names a lock's holder.
//   - lease.sh: the lease beside them: the fence every store mutation
//     passes (h_fence), the heartbeat's renewal (h_renew), a manual hold's
//     own lease (h_ownlease, h_held).
//   - create.sh, steal.sh, release.sh, wait.sh: taking the lock in one
//     rename, stealing it by compare-and-swap, releasing it (h_release,
//     h_release_end), waiting on the host (h_acquire).
//   - wrap.sh: running a command under the lock, its guardian (h_guard:
//     relay, heartbeats, stop).
//   - ops.sh: the lock's operations (status, root, acquire, run, refresh,
//     release, break) and h_take, the acquire store commands share.
//   - runs.sh: run records (hoist runs, hoist logs).
//
// The store, in sh/:
//
//   - store.sh: the store's marks (.meta) and their order, the pointers
//     (current, previous) and the switch (h_activate), the history, the
//     removal of what hoist made, and the names hoist makes.
//   - sha.sh: the host's SHA-256 tools.
//   - push.sh: the first command of a push (h_op_pushcheck).
//   - stage.sh: a push's stage: made or resumed, entered, claimed, removed;
//     kept or dropped after a failed upload.
//   - reuse.sh: the delta: files the host already has, reused instead of
//     sent (h_reuse: map, copy, verify; REUSED).
//   - fetch.sh, fetchget.sh: a push through a registry: the host fetches
//     what it lacks into the stage (h_op_fetch; FETCHED, NOFETCH,
//     FETCHEND), with curl or wget, resuming with Range, verifying each
//     blob; reach.sh: the doctor's registry item (h_op_reach).
//   - promote.sh: verify, unpack and promote (h_op_promote), and the checks
//     a push makes before it uploads (h_collides, h_room); stream.sh: the
//     same promotion begun with the upload (h_op_stream: W and E lines on
//     its input, STREAMING, YIELDED; docs/protocol.md, "Promotion in one
//     pass").
//   - manage.sh: list, activate, rollback, pin, history.
//   - health.sh: a health-checked switch (h_health: record, switch,
//     restart, probe loop, revert), the record's settling (h_settle) and
//     what gc keeps for it (h_journaled); recheck.sh: the local rule's
//     checks after a settle (h_recheck, SETTLED); bad.sh: bad marks and
//     where a rollback goes (docs/rollout.md).
//   - gc.sh: garbage collection.
//   - doctor.sh, doctor-tools.sh: hoist doctor's checklist.
//
// [shellescape.Quote]: https://pkg.go.dev/al.essio.dev/pkg/shellescape#Quote
package shellcmd
