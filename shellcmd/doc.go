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
// The shell functions live in sh/*.sh, one file per step of the lock
// protocol; docs/protocol.md describes the same steps in the same order, and
// the stale and previous-boot rules are in sh/rules.sh only.
//
// # Where things live
//
//   - protocol.go: the protocol table, one row per reply verb: its fields by
//     name and in order, and what it means (docs/protocol.md and
//     docs/store.md list the same rows, and a test holds them to it);
//     ops.go says which operation may send which verb.
//   - codes.go: the ERROR codes, each with the package whose errors it is
//     and the sentence it becomes ([Code.Explain]).
//   - replies.go: the readers of the verdicts that carry fields
//     ([Verdict.Holder], [Verdict.Run], [Verdict.Runtime], ...), which turn
//     the host's "-" into zero values: nothing past them indexes fields or
//     compares with "-".
//   - sh/rules.sh: also h_say_holder, which says every verdict that names a
//     lock's holder.
//
// [shellescape.Quote]: https://pkg.go.dev/al.essio.dev/pkg/shellescape#Quote
package shellcmd
