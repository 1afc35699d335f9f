package transport

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"time"

	"golang.org/x/crypto/ssh"
)

// ErrNoMaster: no master of hoist's listens for the target (or none that
// this user may trust); the error says which.
var ErrNoMaster = errors.New("no connection kept")

// MasterOp is what to ask of a master, as ssh -O asks it of OpenSSH's.
type MasterOp int

const (
	// MasterCheck asks how it is (ssh -O check).
	MasterCheck MasterOp = iota
	// MasterStop makes it stop listening at once and exit once its last
	// client is gone: running commands finish (ssh -O stop).
	MasterStop
	// MasterExit makes it exit now: commands running through it lose
	// contact, an unknown outcome for them (ssh -O exit).
	MasterExit
)

// ControlMaster does op to the master for cfg (its Control, as resolved)
// and returns what the master said about itself before. The error wraps
// ErrNoMaster when there is none, with why.
func ControlMaster(ctx context.Context, cfg SSHConfig, op MasterOp) (*MasterInfo, error) {
	path := cfg.Control.Socket()
	if path == "" {
		return nil, fmt.Errorf("%w: the OpenSSH configuration names no ControlPath for it; "+
			"set ControlPath, ControlMaster auto and ControlPersist to keep one (docs/connections.md)", ErrNoMaster)
	}
	mc, look := connectMaster(ctx, path, masterTimeout)
	if mc == nil {
		return nil, fmt.Errorf("%w: %s", ErrNoMaster, look.why)
	}
	defer mc.sc.Close()
	go ssh.DiscardRequests(mc.reqs)
	go func() {
		for nc := range mc.chans {
			_ = nc.Reject(ssh.Prohibited, "")
		}
	}()
	info, err := mc.info()
	if err != nil {
		return nil, fmt.Errorf("the master at %s did not answer: %s", path, causeText(err))
	}
	info.Clients-- // not this one
	var req string
	switch op {
	case MasterStop:
		req = muxStop
	case MasterExit:
		req = muxExit
	default:
		return &info, nil
	}
	if ok, _, err := mc.sc.SendRequest(req, true, nil); err != nil || !ok {
		return &info, fmt.Errorf("the master at %s did not take the request (ok %v, %v)", path, ok, err)
	}
	return &info, nil
}

// OpenSSH's mux protocol (PROTOCOL.mux), as much as it takes to tell
// whether an OpenSSH master listens at a ControlPath.
const (
	muxMsgHello      = 0x00000001
	muxCAliveCheck   = 0x10000004
	muxSAlive        = 0x80000005
	muxClientVersion = 4
)

// OpenSSHMaster asks what listens at path (a ControlPath) whether it is
// an OpenSSH master, and its pid: PROTOCOL.mux's hello and alive check. A
// socket that does not pass hoist's own checks (checkSocket, the peer's
// uid) is not asked.
func OpenSSHMaster(ctx context.Context, path string) (int, error) {
	if fi, err := checkSocket(path); err != nil {
		return 0, err
	} else if fi == nil {
		return 0, fmt.Errorf("no socket at %s", path)
	}
	d := net.Dialer{Timeout: masterTimeout}
	raw, err := d.DialContext(ctx, "unix", path)
	if err != nil {
		return 0, err
	}
	c := raw.(*net.UnixConn)
	defer c.Close()
	if uid, _, err := peerUID(c); err != nil || uid != uint32(os.Getuid()) {
		return 0, fmt.Errorf("the process listening at %s is not yours", path)
	}
	_ = c.SetDeadline(time.Now().Add(masterTimeout))
	u32 := binary.BigEndian.AppendUint32
	if err := writePacket(c, u32(u32(nil, muxMsgHello), muxClientVersion)); err != nil {
		return 0, err
	}
	if err := writePacket(c, u32(u32(nil, muxCAliveCheck), 1)); err != nil {
		return 0, err
	}
	hello, err := readPacket(c)
	if err != nil || len(hello) < 8 || binary.BigEndian.Uint32(hello) != muxMsgHello {
		return 0, fmt.Errorf("%s does not speak OpenSSH's mux protocol", path)
	}
	alive, err := readPacket(c)
	if err != nil || len(alive) < 12 || binary.BigEndian.Uint32(alive) != muxSAlive {
		return 0, fmt.Errorf("the OpenSSH master at %s did not answer the alive check", path)
	}
	return int(binary.BigEndian.Uint32(alive[8:])), nil
}

func writePacket(w io.Writer, body []byte) error {
	_, err := w.Write(append(binary.BigEndian.AppendUint32(nil, uint32(len(body))), body...))
	return err
}

func readPacket(r io.Reader) ([]byte, error) {
	var n [4]byte
	if _, err := io.ReadFull(r, n[:]); err != nil {
		return nil, err
	}
	size := binary.BigEndian.Uint32(n[:])
	if size > 1<<16 {
		return nil, errors.New("packet too long")
	}
	b := make([]byte, size)
	_, err := io.ReadFull(r, b)
	return b, err
}
