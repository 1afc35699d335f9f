package e2e

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hoistdev/hoist/e2e/sshd"
	"github.com/hoistdev/hoist/lock"
	"github.com/hoistdev/hoist/transport"
)

// BenchmarkHandoff measures, by the host's clock, the gap between the end
// of a holder's command and the start of the command of a client waiting
// for the lock: the host-side release, one poll of the waiter, its acquire
// and the start of its command. Reported as gap-ms (mean), p50-ms, max-ms.
func BenchmarkHandoff(b *testing.B) {
	h := sshd.Start(b, sshd.Options{})
	root := filepath.Join(h.Dir, "store")
	holder, waiter := newLock(b, h, root), newLock(b, h, root)
	var gaps []float64
	for i := 0; b.Loop(); i++ {
		gate := filepath.Join(h.Dir, fmt.Sprintf("gate-%d", i))
		end := filepath.Join(h.Dir, fmt.Sprintf("end-%d", i))
		start := filepath.Join(h.Dir, fmt.Sprintf("start-%d", i))
		held := make(chan error, 1)
		go func() {
			script := fmt.Sprintf("while [ ! -e %s ]; do sleep 0.01; done; date +%%s%%N >%s", gate, end)
			res, err := holder.Run(ctxT(b), []string{"sh", "-c", script}, lock.RunOptions{})
			if err == nil && res.Status != 0 {
				err = fmt.Errorf("holder exit %d", res.Status)
			}
			held <- err
		}()
		waitFor(b, 30*time.Second, "holder starts", func() bool { return exists(lockPath(root)) })
		res, err := waiter.Run(ctxT(b), []string{"sh", "-c", "date +%s%N >" + start}, lock.RunOptions{
			Wait: time.Minute,
			Events: lock.Events{Waiting: func(lock.State) {
				os.WriteFile(gate, nil, 0o644)
			}},
		})
		if err != nil || res.Status != 0 {
			b.Fatalf("waiter: %v %+v", err, res)
		}
		if err := <-held; err != nil {
			b.Fatal(err)
		}
		gaps = append(gaps, float64(readNanos(b, start)-readNanos(b, end))/1e6)
	}
	slices.Sort(gaps)
	var sum float64
	for _, g := range gaps {
		sum += g
	}
	b.ReportMetric(sum/float64(len(gaps)), "gap-ms")
	b.ReportMetric(gaps[len(gaps)/2], "p50-ms")
	b.ReportMetric(gaps[len(gaps)-1], "max-ms")
}

// BenchmarkRunUncontended is one hoist run of `true` on a free lock over an
// open connection: one exec (acquire, run, release) per operation, next to
// a bare exec of `true` on the same connection in the same iteration (the
// floor: a session, sshd's fork, the login shell). run-ms is hoist's,
// exec-ms the bare exec's, goal-ms 20 ms plus the connection's round trip.
func BenchmarkRunUncontended(b *testing.B) {
	h := sshd.Start(b, sshd.Options{})
	l := newLock(b, h, filepath.Join(h.Dir, "store"))
	ssh, ok := l.Transport().(*transport.SSH)
	if !ok {
		b.Fatal("not an SSH transport")
	}
	rtt, err := ssh.RoundTrip(3)
	if err != nil {
		b.Fatal(err)
	}
	warm(b, l)
	var run, bare time.Duration
	for b.Loop() {
		start := time.Now()
		if res, err := l.Run(ctxT(b), []string{"true"}, lock.RunOptions{}); err != nil || res.Status != 0 {
			b.Fatalf("%v %+v", err, res)
		}
		run += time.Since(start)
		bare += bareExec(b, l)
	}
	ms := func(d time.Duration) float64 { return float64(d) / float64(b.N) / float64(time.Millisecond) }
	b.ReportMetric(ms(run), "run-ms")
	b.ReportMetric(ms(bare), "exec-ms")
	b.ReportMetric(float64(20*time.Millisecond+rtt)/float64(time.Millisecond), "goal-ms")
	b.ReportMetric(float64(run)/float64(bare), "x-exec")
}

// BenchmarkStatus is one read-only status over an open connection, next to
// a bare exec of `true` on it in the same iteration: status-ms, exec-ms.
func BenchmarkStatus(b *testing.B) {
	h := sshd.Start(b, sshd.Options{})
	l := newLock(b, h, filepath.Join(h.Dir, "store"))
	warm(b, l)
	var status, bare time.Duration
	for b.Loop() {
		start := time.Now()
		if _, err := l.Status(ctxT(b)); err != nil {
			b.Fatal(err)
		}
		status += time.Since(start)
		bare += bareExec(b, l)
	}
	b.ReportMetric(float64(status)/float64(b.N)/float64(time.Millisecond), "status-ms")
	b.ReportMetric(float64(bare)/float64(b.N)/float64(time.Millisecond), "exec-ms")
}

// bareExec times one exec of `true` on l's connection: the floor of a host
// command (a session, sshd's fork, the login shell).
func bareExec(b *testing.B, l *lock.Lock) time.Duration {
	start := time.Now()
	if st, err := l.Transport().Run(ctxT(b), transport.Request{Command: "true"}); err != nil || st != 0 {
		b.Fatalf("exec true: %d %v", st, err)
	}
	return time.Since(start)
}

// warm makes the connection's first host command, which also waits for
// sshd to finish setting up the login and asks the host for its facts: the
// benchmarks that follow measure an open connection.
func warm(b *testing.B, l *lock.Lock) {
	b.Helper()
	if _, err := l.Status(ctxT(b)); err != nil {
		b.Fatal(err)
	}
}

func readNanos(b *testing.B, p string) int64 {
	b.Helper()
	data, err := os.ReadFile(p)
	if err != nil {
		b.Fatal(err)
	}
	n, err := strconv.ParseInt(strings.TrimSpace(string(data)), 10, 64)
	if err != nil {
		b.Fatal(err)
	}
	return n
}

// BenchmarkColdRoundTrips counts the round trips of a cold `hoist lock
// status` (a new process: connect, authenticate, one host command) next to
// OpenSSH's `ssh host true`, both through a proxy adding 25 ms each way,
// measured in the same iteration: wall time over the round-trip time, the
// TCP connect included (1). x-ssh is hoist's count over ssh's. The same
// two, straight to sshd on loopback, give direct-ms: there the round trips
// cost nothing and what is left is each client's own time, delayed
// acknowledgements included.
func BenchmarkColdRoundTrips(b *testing.B) {
	const oneWay = 25 * time.Millisecond
	h := sshd.Start(b, sshd.Options{})
	p := newLatencyProxy(b, h.Addr, oneWay)
	kh := h.KnownHostsFor(b, p.Addr)
	_, port, _ := net.SplitHostPort(p.Addr)
	c := newCLI(b, h, filepath.Join(h.Dir, "store"))
	c.flags = cliFlags(b, h, p.Addr, filepath.Join(h.Dir, "store"))
	direct := newCLI(b, h, filepath.Join(h.Dir, "store"))
	rtt := float64(2 * oneWay)
	var ssh, hoist, sshDirect, hoistDirect time.Duration
	timeSSH := func(port, kh string) time.Duration {
		cmd := exec.Command("ssh", "-F", "none", "-i", h.KeyFile, "-o", "BatchMode=yes", "-o", "UserKnownHostsFile="+kh,
			"-o", "IdentitiesOnly=yes", "-p", port, h.User+"@127.0.0.1", "true")
		start := time.Now()
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("ssh: %v %s", err, out)
		}
		return time.Since(start)
	}
	timeHoist := func(c *cli) time.Duration {
		start := time.Now()
		if r := c.run("lock", "status"); r.code != 0 {
			b.Fatalf("hoist lock status: %s", r)
		}
		return time.Since(start)
	}
	for b.Loop() {
		ssh += timeSSH(port, kh)
		hoist += timeHoist(c)
		sshDirect += timeSSH(strconv.Itoa(h.Port), h.KnownHosts)
		hoistDirect += timeHoist(direct)
	}
	b.ReportMetric(float64(hoist)/float64(b.N)/rtt, "hoist-rtts")
	b.ReportMetric(float64(ssh)/float64(b.N)/rtt, "ssh-rtts")
	b.ReportMetric(float64(hoist)/float64(ssh), "x-ssh")
	ms := func(d time.Duration) float64 { return float64(d) / float64(b.N) / float64(time.Millisecond) }
	b.ReportMetric(ms(hoistDirect), "hoist-direct-ms")
	b.ReportMetric(ms(sshDirect), "ssh-direct-ms")
}
