// Package remote is a host as the rest of hoist sees it: a [Host] runs a
// shellcmd fragment through the host's login shell with one fixed command
// line ([Loader]) that makes /bin/sh read the fragment from standard input, so
// the login shell (bash, dash, zsh, fish, tcsh, mksh, …) only ever parses one
// single-quoted word, the fragment itself always runs under /bin/sh, and no
// other user of the host sees it in the process list.
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
package remote
