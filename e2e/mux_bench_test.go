package e2e

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/hoistdev/hoist/e2e/sshd"
	"github.com/hoistdev/hoist/lock"
	"github.com/hoistdev/hoist/transport"
)

// BenchmarkScriptRoundTrips is a CI script's four commands in a row (push
// a small new tree, run, activate, list), each a new hoist process, through
// a proxy adding 25 ms each way (a 50 ms round trip), in round trips (wall
// time over the round-trip time, local work included):
//
//   - direct-rtts: no connection kept (each command connects);
//   - kept-rtts: ControlMaster auto with ControlPersist, the master
//     already running (a script's second run within ControlPersist);
//   - kept-first-rtts: the same when the first command starts the master;
//   - ssh-rtts, ssh-kept-rtts: OpenSSH's own `ssh host true`, four times,
//     without and with its ControlMaster (running), from the same
//     iteration, as the reference.
func BenchmarkScriptRoundTrips(b *testing.B) {
	const oneWay = 25 * time.Millisecond
	rtt := float64(2 * oneWay)
	h := sshd.Start(b, sshd.Options{})
	p := newLatencyProxy(b, h.Addr, oneWay)
	_, port, _ := net.SplitHostPort(p.Addr)
	known := h.KnownHostsFor(b, p.Addr)
	direct := newCLI(b, h, filepath.Join(h.Dir, "direct"))
	direct.flags = cliFlags(b, h, p.Addr, filepath.Join(h.Dir, "direct"))
	rig := newMuxRig(b, h, p.Addr, "600")
	rig.root = filepath.Join(h.Dir, "kept")
	sshDir := rig.dir
	ssh := func(kept bool) time.Duration {
		args := sshArgs(h, known, port)
		if kept {
			args = append(args, "-o", "ControlMaster=auto", "-o", "ControlPersist=600", "-o", "ControlPath="+sshDir+"/ssh-%C")
		}
		start := time.Now()
		if out, err := exec.Command("ssh", append(args, h.User+"@127.0.0.1", "true")...).CombinedOutput(); err != nil {
			b.Fatalf("ssh: %v %s", err, out)
		}
		return time.Since(start)
	}
	b.Cleanup(func() {
		exec.Command("ssh", "-o", "ControlPath="+sshDir+"/ssh-%C", "-p", port, "-O", "exit", h.User+"@127.0.0.1").Run()
	})
	script := func(c *cli, i int) time.Duration {
		src := sourceTree(b, fmt.Sprintf("v%d-%d", i, time.Now().UnixNano()))
		start := time.Now()
		for _, args := range [][]string{
			{"push", src, "--name", "app"},
			{"run", "--", "true"},
			{"activate", "app"},
			{"list"},
		} {
			if r := c.run(args...); r.code != 0 {
				b.Fatalf("hoist %v: %s", args, r)
			}
		}
		return time.Since(start)
	}
	ssh(true) // OpenSSH's master, running from here on
	var d, kept, first, sshPlain, sshKept time.Duration
	for i := 0; b.Loop(); i++ {
		d += script(direct, i)
		if r := rig.cli().run("mux", "exit"); r.code != 0 && i > 0 {
			b.Fatalf("mux exit: %s", r)
		}
		waitFor(b, 10*time.Second, "the master ends", func() bool { return len(rig.masters()) == 0 })
		first += script(rig.cli(), i)
		kept += script(rig.cli(), i)
		for range 4 {
			sshPlain += ssh(false)
			sshKept += ssh(true)
		}
	}
	n := float64(b.N)
	b.ReportMetric(float64(d)/n/rtt, "direct-rtts")
	b.ReportMetric(float64(kept)/n/rtt, "kept-rtts")
	b.ReportMetric(float64(first)/n/rtt, "kept-first-rtts")
	b.ReportMetric(float64(sshPlain)/n/rtt, "ssh-rtts")
	b.ReportMetric(float64(sshKept)/n/rtt, "ssh-kept-rtts")
}

// BenchmarkMuxSession is one session on a kept connection, through a proxy
// adding 25 ms each way, in round trips: an exec of `true` with its input
// closed, and a hoist host command (lock status), each on hoist's master
// (hoist-rtts, status-rtts) and, for the exec, on a direct connection
// (direct-rtts), as a Go passenger of OpenSSH's master (PROTOCOL.mux:
// passenger-rtts) and with OpenSSH's own `ssh -S` (ssh-rtts), in the same
// iteration. It is the figure that says which master hoist should use.
func BenchmarkMuxSession(b *testing.B) {
	const oneWay = 25 * time.Millisecond
	rtt := float64(2 * oneWay)
	h := sshd.Start(b, sshd.Options{})
	p := newLatencyProxy(b, h.Addr, oneWay)
	_, port, _ := net.SplitHostPort(p.Addr)
	known := h.KnownHostsFor(b, p.Addr)
	rig := newMuxRig(b, h, p.Addr, "600")
	rig.name = "cm"
	if r := rig.cli().run("lock", "status"); r.code != 0 {
		b.Fatalf("starting hoist's master: %s", r)
	}
	cfg := sshConfigVia(b, h, p.Addr)
	cfg.Control = transport.Control{Path: filepath.Join(rig.dir, "cm")}
	ctx := context.Background()
	kept, err := transport.DialShared(ctx, cfg, nil)
	if err != nil || kept.Reached().Master == "" {
		b.Fatalf("not through hoist's master: %v", err)
	}
	defer kept.Close()
	plain := dial(b, sshConfigVia(b, h, p.Addr))
	status := lock.New(kept, lock.Root{Path: filepath.Join(h.Dir, "store")})

	sshPath := filepath.Join(rig.dir, "ssh")
	viaSSHMaster := slices.Clip(append(sshArgs(h, known, port), "-S", sshPath))
	if out, err := exec.Command("ssh", append(viaSSHMaster, "-M", "-f", "-N", "-o", "ControlPersist=600", h.User+"@127.0.0.1")...).CombinedOutput(); err != nil {
		b.Fatalf("starting OpenSSH's master: %v %s", err, out)
	}
	b.Cleanup(func() { exec.Command("ssh", "-S", sshPath, "-O", "exit", "x").Run() })

	exec1 := func(tr transport.Transport) time.Duration {
		start := time.Now()
		if st, err := tr.Run(ctx, transport.Request{Command: "true", Stdin: eofReader{}}); err != nil || st != 0 {
			b.Fatalf("exec: %d %v", st, err)
		}
		return time.Since(start)
	}
	var hoist, direct, stat, passenger, ssh time.Duration
	for b.Loop() {
		hoist += exec1(kept)
		direct += exec1(plain)
		start := time.Now()
		if _, err := status.Status(ctx); err != nil {
			b.Fatal(err)
		}
		stat += time.Since(start)
		start = time.Now()
		if st, err := passengerExec(sshPath, "true"); err != nil || st != 0 {
			b.Fatalf("passenger: %d %v", st, err)
		}
		passenger += time.Since(start)
		start = time.Now()
		if out, err := exec.Command("ssh", append(viaSSHMaster, h.User+"@127.0.0.1", "true")...).CombinedOutput(); err != nil {
			b.Fatalf("ssh -S: %v %s", err, out)
		}
		ssh += time.Since(start)
	}
	n := float64(b.N)
	b.ReportMetric(float64(hoist)/n/rtt, "hoist-rtts")
	b.ReportMetric(float64(stat)/n/rtt, "status-rtts")
	b.ReportMetric(float64(direct)/n/rtt, "direct-rtts")
	b.ReportMetric(float64(passenger)/n/rtt, "passenger-rtts")
	b.ReportMetric(float64(ssh)/n/rtt, "ssh-rtts")
}

// sshArgs are OpenSSH ssh's options for h through port, with known as
// its known_hosts, and nothing of this machine's configuration.
func sshArgs(h *sshd.Host, known, port string) []string {
	return []string{"-F", "none", "-i", h.KeyFile, "-o", "BatchMode=yes", "-o", "UserKnownHostsFile=" + known,
		"-o", "IdentitiesOnly=yes", "-p", port}
}

type eofReader struct{}

func (eofReader) Read([]byte) (int, error) { return 0, io.EOF }

// passengerExec runs command as a passenger of the OpenSSH master at path
// (PROTOCOL.mux: hello, MUX_C_NEW_SESSION with stdin at EOF and stdout and
// stderr passed as descriptors, one per message) and returns its exit
// status from MUX_S_EXIT_MESSAGE. A prototype for measuring: no tty, no
// environment, no signal; a session that ends without an exit message is
// an error.
func passengerExec(path, command string) (int, error) {
	c, err := net.Dial("unix", path)
	if err != nil {
		return 0, err
	}
	defer c.Close()
	uc := c.(*net.UnixConn)
	u32 := binary.BigEndian.AppendUint32
	str := func(b []byte, s string) []byte { return append(u32(b, uint32(len(s))), s...) }
	send := func(body []byte) error {
		_, err := c.Write(append(u32(nil, uint32(len(body))), body...))
		return err
	}
	recv := func() ([]byte, error) {
		var n [4]byte
		if _, err := io.ReadFull(c, n[:]); err != nil {
			return nil, err
		}
		body := make([]byte, binary.BigEndian.Uint32(n[:]))
		_, err := io.ReadFull(c, body)
		return body, err
	}
	if err := send(u32(u32(nil, 1), 4)); err != nil { // MUX_MSG_HELLO, version 4
		return 0, err
	}
	if _, err := recv(); err != nil {
		return 0, err
	}
	msg := u32(u32(nil, 0x10000002), 1) // MUX_C_NEW_SESSION, request id
	msg = str(msg, "")                  // reserved
	for range 4 {                       // tty, x11, agent, subsystem
		msg = u32(msg, 0)
	}
	msg = u32(msg, 0xffffffff) // no escape character
	msg = str(str(msg, ""), command)
	if err := send(msg); err != nil {
		return 0, err
	}
	null, err := os.Open(os.DevNull)
	if err != nil {
		return 0, err
	}
	defer null.Close()
	outR, outW, err := os.Pipe()
	if err != nil {
		return 0, err
	}
	defer outR.Close()
	for _, f := range []*os.File{null, outW, outW} {
		if _, _, err := uc.WriteMsgUnix([]byte{0}, syscall.UnixRights(int(f.Fd())), nil); err != nil {
			outW.Close()
			return 0, err
		}
	}
	outW.Close()
	go io.Copy(io.Discard, outR)
	for {
		body, err := recv()
		if err != nil {
			return 0, fmt.Errorf("no exit message: %w", err)
		}
		switch binary.BigEndian.Uint32(body) {
		case 0x80000006: // MUX_S_SESSION_OPENED
		case 0x80000004: // MUX_S_EXIT_MESSAGE: session id, exit value
			return int(binary.BigEndian.Uint32(body[8:])), nil
		default:
			return 0, errors.New("the master refused the session: type " + strconv.FormatUint(uint64(binary.BigEndian.Uint32(body)), 16))
		}
	}
}
