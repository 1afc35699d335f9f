// Package remote is a host as the rest of hoist sees it. It is hoist's wire
// layer, with package shellcmd: package lock runs every host command
// through it, and it makes no compatibility promise; programs use packages
// transport, lock and store.
//
// A [Host] runs a shellcmd fragment through the host's login shell with one
// fixed command line ([Loader]) that makes /bin/sh read the fragment from
// standard input, so the login shell (bash, dash, zsh, fish, tcsh, mksh, …)
// only ever parses one single-quoted word, the fragment itself always runs
// under /bin/sh, and no other user of the host sees it in the process list.
//
// [Host.Exec] separates the command's output from the fragment's verdict
// lines (see shellcmd.Verdict), caches the host's facts from the first
// command of the connection, and classifies what happened:
//
//   - a reply: the exit status and the verdicts, in order;
//   - transport.ErrUnknownOutcome: contact was lost before the exit status
//     arrived, and the host may still be running the fragment;
//   - transport.ErrNotStarted: nothing ran;
//   - [ErrNoShell]: the host has no usable /bin/sh;
//   - shellcmd.ErrVerdict: a line carried the marker but did not parse. It is
//     never read as success.
//
// # Where things live
//
//   - host.go: [Host.Exec], the facts cache, the classification above, and
//     the debug record of each command ([Call].Logger);
//   - feed.go: the [Loader] and what follows it on standard input: the
//     fragment, then, once the host said LOADED, the caller's control lines;
//   - demux.go: the verdict lines told apart from the output by this
//     command's marker, with a bound on a line's length.
package remote
