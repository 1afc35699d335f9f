package store

import (
	"errors"

	"github.com/hoistdev/hoist/lock"
	"github.com/hoistdev/hoist/remote"
	"github.com/hoistdev/hoist/shellcmd"
)

var (
	// ErrCorrupt: the archive on the host does not have the digest of the
	// one sent. The stage was removed; push again.
	ErrCorrupt = errors.New("the upload arrived corrupted (digest mismatch); nothing was installed")
	// ErrStopped: the push was asked to stop during its upload; nothing
	// was installed. The stage stays on the host, and the next push of the
	// runtime resumes the upload (gc removes it after the stale period).
	ErrStopped = errors.New("stopped during the upload; nothing was installed, and the next push of this runtime resumes it")
	// ErrNotFound: no verified runtime has that id on the host.
	ErrNotFound = errors.New("no such runtime on the host")
	// ErrNoStore: activate, rollback or pin found no store on the host;
	// nothing was created.
	ErrNoStore = errors.New("no store on this host yet; push a runtime first")
	// ErrNoPrevious: rollback found no previous runtime to go back to.
	ErrNoPrevious = errors.New("no previous runtime to roll back to")
	// ErrNoProcessCheck: gc could not tell which runtimes processes use
	// (neither /proc nor ps could be read), so it deleted nothing.
	ErrNoProcessCheck = errors.New("cannot tell which runtimes are in use (no readable /proc or ps); nothing was deleted")
	// ErrNoSpace: the host has too little free space for the runtime;
	// nothing was uploaded or unpacked. See [HostError] for the numbers.
	ErrNoSpace = errors.New("not enough free space on the host")
	// ErrIDTaken: runtimes/<id> on the host is not this runtime: another
	// tree whose id shares the first 12 digits of the digest, or something
	// hoist did not make. It is left alone.
	ErrIDTaken = errors.New("the runtime id is taken on the host by something else")
	// ErrStageReplaced: the file the upload opened in the stage is not the
	// archive the push's first command made there: in a store others may
	// rename things in, the stage's name was given to something else.
	// Nothing was written through it, and it is left where it is.
	ErrStageReplaced = errors.New("the stage on the host was not the one the push made when the upload opened it: someone renames entries in the store (its group may write it); nothing was written or removed: push again, and find out who if it happens again")
)

// ErrSettledUnhealthy: a command that switches current found an
// unfinished record, settled it by the local rule (docs/rollout.md), and
// the runtime it settled on failed the record's exec checks after the
// settle: the record is finished, and the command switched nothing else
// (exit status 4). Its [HostError] names the rollout, the runtime and why.
var ErrSettledUnhealthy = errors.New("a settled runtime failed its checks after the settle")

// HostError is an ERROR verdict of a store command: lock's, which says the
// store's codes with their own sentences too. Its Err is ErrNoSpace for
// space and ErrIDTaken for foreign and collision.
type HostError = lock.HostError

// sentinels are the errors the store's codes stand for.
var sentinels = map[shellcmd.Code]error{
	shellcmd.CodeSpace:     ErrNoSpace,
	shellcmd.CodeForeign:   ErrIDTaken,
	shellcmd.CodeCollision: ErrIDTaken,
	shellcmd.CodeUnhealthy: ErrSettledUnhealthy,
}

// err reads the lock's and the store's errors in a reply (lock.Err), with
// the store's codes standing for the store's errors.
func (s *Store) err(r *remote.Reply, op string) error {
	err := s.wire().ReplyError(r, op)
	var he *HostError
	if errors.As(err, &he) && he.Err == nil {
		he.Err = sentinels[he.Code]
	}
	return err
}
