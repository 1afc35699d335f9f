// Package store is the runtime store on a host: where runtimes, uploads in
// flight, the lock and the active pointer live under a root. For now it
// holds the layout; the operations that fill it (push, promote, activate,
// rollback, list, gc) build on package lock.
//
// # Layout
//
//	<root>/                      --root, default ~/.hoist (a leading ~/ resolves on the host)
//	  runtimes/                  the store (Dir)
//	    .store-lock/             the lock (LockName), see package lock and docs/protocol.md
//	    .stage-<token>/          uploads in flight, one per attempt, outside the lock (StagePrefix)
//	    <name>-<digest>/         promoted runtimes, immutable once promoted
//	  current -> runtimes/<id>   the active runtime, switched atomically (Current)
//	  runs/<token>/              scratch of a command waiting for or running under the lock (RunsDir)
//
// # Registries
//
// [Registry.Publish] stores an [Artifact] in an OCI registry (hoist
// publish), and [Registry.Read] reads one back, trusting the registry with
// nothing its bytes do not prove: it recomputes the runtime id from the
// pack and the file blobs' digests, and fails with [ErrPublished] where the
// manifest says otherwise. docs/store.md, "Publishing to a registry", has
// the layout and what is verified where.
package store

import "github.com/hoistdev/hoist/shellcmd"

const (
	// Dir is the store directory under a root.
	Dir = shellcmd.StoreDir
	// LockName is the lock directory inside the store.
	LockName = shellcmd.LockName
	// RunsDir holds, under a root, one scratch directory per waiting or
	// running command; a run whose client went away keeps its output there.
	RunsDir = shellcmd.RunsDir
	// StagePrefix starts the name of an upload in flight inside the store.
	StagePrefix = ".stage-"
	// Current is the symlink, under a root, to the active runtime.
	Current = "current"
)
