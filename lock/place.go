package lock

import (
	"context"

	"github.com/hoistdev/hoist/remote"
	"github.com/hoistdev/hoist/shellcmd"
)

// Place is where a lock's store is, as far as the host can prove it: two
// locks of one Place guard one store, whatever their targets were called
// (two aliases of one host, a name and its address), so a command given
// both works on it once. It is the host (its machine, boot and PID
// namespace, as its facts name them: shellcmd.Facts), the login, the
// mount namespace the login's shell resolves paths in, and the root's
// place in it: the device and inode of the root's parent directory (or of
// the nearest directory above it that exists), and the way from there to
// the root. A path alone is no proof: two mount namespaces (two
// containers, two sshds each with a tmpfs of its own) can have the same
// path lead to different stores, or to none yet.
type Place struct {
	// Machine ("<machine-id>:<host name>"), BootID, PIDNS and UID are the
	// host's facts.
	Machine, BootID, PIDNS, UID string
	// MountNS is the mount namespace ("dev:ino" of /proc/self/ns/mnt),
	// Dir the "dev:ino" of the root's parent or nearest existing
	// directory above it, and Rest the way from Dir to the root
	// ("./NAME"), as the host gave them.
	MountNS, Dir, Rest string
}

// Unknown names the first fact of p the host could not tell ("" when it
// told them all): its machine, boot, PID namespace, login, mount namespace
// or root directory. Two targets are one store only when nothing is
// unknown.
func (p Place) Unknown() string {
	for _, f := range []struct{ v, name string }{
		{p.Machine, "the machine"}, {p.BootID, "the boot"}, {p.PIDNS, "the PID namespace"},
		{p.UID, "the login"}, {p.MountNS, "the mount namespace"}, {p.Dir, "the root's directory"},
	} {
		if f.v == "" {
			return f.name
		}
	}
	return ""
}

// Place asks the host where the store is (one host command, which also
// brings the host's facts when the connection has none yet). ok is false
// when the host cannot be told from another, or the store from another
// of the host's (Place.Unknown says what was unknown). An error is the
// host's answer to a store it refuses (a path it distrusts), or a failed
// command.
func (l *Lock) Place(ctx context.Context) (p Place, ok bool, err error) {
	r, err := l.exec(ctx, remote.Call{Fragment: shellcmd.Render(shellcmd.OpRoot, l.working())})
	if err != nil {
		return p, false, err
	}
	v := r.Last()
	if v.Verb != shellcmd.VerbRoot {
		return p, false, l.failure("root", r)
	}
	at := v.Root()
	p = Place{MountNS: at.MountNS, Dir: at.Dir, Rest: at.Rest}
	if f := l.Facts(); f != nil {
		p.Machine, p.BootID, p.PIDNS, p.UID = f.Machine, f.BootID, f.PIDNS, f.UID
	}
	return p, p.Unknown() == "", nil
}
