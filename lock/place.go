package lock

import (
	"context"

	"github.com/hoistdev/hoist/remote"
	"github.com/hoistdev/hoist/shellcmd"
)

// Place is where a lock's store is: the host as its facts name it and the
// store's root there, resolved. Two locks of one Place guard one store,
// whatever their targets were called (two aliases of one host, a name and
// its address): a command given both works on it once.
type Place struct {
	// Machine ("<machine-id>:<host name>"), BootID, PIDNS and UID are the
	// host's facts (shellcmd.Facts).
	Machine, BootID, PIDNS, UID string
	// Root is the store's root: its physical path where it exists, else
	// as given, with the login's HOME for a ~/ root.
	Root string
}

// Place asks the host where the store is (one host command, which also
// brings the host's facts when the connection has none yet). ok is false
// when the host cannot be told from another: its machine, boot or login is
// unknown. An error is the host's answer to a store it refuses (a path it
// distrusts), or a failed command.
func (l *Lock) Place(ctx context.Context) (p Place, ok bool, err error) {
	r, err := l.host.Exec(ctx, remote.Call{Fragment: shellcmd.Render(shellcmd.OpRoot, l.Params())})
	if err != nil {
		return p, false, err
	}
	if v := r.Last(); v.Verb != shellcmd.VerbRoot {
		return p, false, l.failure("root", r)
	}
	f := l.host.Facts()
	if f == nil {
		return p, false, nil
	}
	p = Place{Machine: f.Machine, BootID: f.BootID, PIDNS: f.PIDNS, UID: f.UID, Root: r.Last().Path()}
	for _, s := range []string{p.Machine, p.BootID, p.UID, p.Root} {
		if s == "" {
			return p, false, nil
		}
	}
	return p, true, nil
}
