// Package store is the runtime store on a host: versioned trees (runtimes)
// under a root, guarded by the store lock of package lock, with a pointer,
// current, to the active one.
//
// Start with [Open] (a directory or an archive; [OpenReader] for a stream),
// then make the store of a lock with [New]:
//
//   - [Store.Push] installs a runtime: one host command when the host has it
//     already; otherwise an upload into a stage of its own, outside the
//     lock, and one host command that verifies, unpacks and promotes it
//     under the lock (and activates it, if asked);
//   - [Store.List] and [Store.History] read the store and change nothing;
//   - [Store.Activate], [Store.Rollback] and [Store.Pin] switch current, or
//     keep a runtime from collection, under the lock;
//   - [Store.GC] tries the lock once and skips a busy store.
//
// # Guarantees
//
// A runtime is immutable once promoted, and its id ([Artifact.ID], the name
// and the digest of its canonical form) is never another tree's. Every
// upload is verified on the host by its SHA-256 before anything is
// unpacked, and current switches in one rename, so it never points at half
// a runtime. Nothing is deleted that hoist cannot prove it made, and gc
// never deletes what is current, previous, pinned or in use by a process.
// Errors name their cause: [ErrCorrupt], [ErrStopped], [ErrNotFound],
// [ErrNoStore], [ErrNoSpace], [ErrIDTaken], ... and the lock's (a
// [*lock.BusyError], [lock.ErrLost], an unknown outcome); the host's others
// are a [HostError].
//
// docs/store.md gives the layout on the host, what hoist trusts there, and
// every step of each command.
//
// # Registries
//
// [Registry.Publish] stores an [Artifact] in an OCI registry (hoist
// publish), and [Registry.Read] reads one back, trusting the registry with
// nothing its bytes do not prove: it recomputes the runtime id from the
// pack and the file blobs' digests, and fails with [ErrPublished] where the
// manifest says otherwise. docs/store.md, "Publishing to a registry", has
// the layout and what is verified where.
//
// # Where things live
//
//   - artifact.go, canon.go, digests.go: an artifact read from its source,
//     its canonical form and digest, the digest cache; formats.go, tar.go,
//     zip.go, spool.go: the archives it can come from, and the tar a push
//     sends; links.go, limits.go: what an artifact may hold; ctime_*.go,
//     fstype_*.go: the file systems whose change times the digest cache
//     trusts.
//   - errors.go: the errors a push and the store's commands return.
//   - push.go: [Store.Push], the stage, the upload and its resume.
//   - The delta, files the host has that a push reuses instead of sending:
//     which files are worth looking for is decided in artifact.go
//     ([ReuseMin], reusable), and the host finds, copies and verifies them
//     in shellcmd/sh/reuse.sh; the archive links to the copies (tar.go).
//   - manage.go, resolve.go: list, activate, rollback, pin, history, and
//     runtimes named by prefix or name; gc.go: [Store.GC].
//   - health.go, probe.go: the health-checked switch ([Checks],
//     [Store.ActivateChecked], [Store.RollbackChecked]) and the probes
//     this client dials for it (docs/rollout.md); the host's part is
//     shellcmd/sh/health.sh and bad.sh.
//   - oci*.go: publishing to and reading from a registry; push_via.go: a
//     push whose hosts fetch from it ([Registry.Via], [PushOptions.Via]),
//     the fallback archive of a published runtime, and
//     [Store.RegistryCheck] (doctor --via).
//   - The fields of each reply the host sends the store (RT, ACTIVATED,
//     RESUME, KEEP, ...): the protocol table, shellcmd/protocol.go; the
//     shell functions of each command are in shellcmd/sh/ (push.sh,
//     stage.sh, promote.sh, manage.sh, gc.sh, store.sh).
package store

// stagePrefix starts the name of an upload in flight inside the store.
const stagePrefix = ".stage-"
