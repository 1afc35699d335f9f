// Package shellcmd renders the POSIX sh fragments that hoist runs on a host.
// It does no I/O: every function returns text, and every value it places in
// that text is quoted with [shellescape.Quote].
//
// A host command is a [Prelude] followed by one operation's fragment
// ([Status], [Acquire], [Run], [Release], [Break]). The prelude names this
// exec's marker and either the cached [Facts] of the host or the probe that
// finds them. Every protocol line a fragment prints is a [Verdict]: the
// marker, a verb and its fields on a line of their own, so that the output of
// a command run under the lock, or a login script's noise, is never mistaken
// for one. [ParseVerdict] accepts only the verbs it knows.
//
// The shell functions live in sh/*.sh, one file per step of the lock
// protocol; docs/protocol.md describes the same steps in the same order.
//
// [shellescape.Quote]: https://pkg.go.dev/al.essio.dev/pkg/shellescape#Quote
package shellcmd
