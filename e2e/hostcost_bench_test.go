package e2e

import (
	"crypto/rand"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/hoistdev/hoist/e2e/sshd"
	"github.com/hoistdev/hoist/lock"
)

// What a host spends on hoist's commands: the CPU time of its sshd and of
// every process it started for the command (the host runs in a cgroup of
// its own: sshd.Options.Cgroup), and the processes and programs it started
// (the host's sshd runs under strace: sshd.Options.TraceProcs). Each figure
// comes with its reference from the same iteration: OpenSSH's scp of the
// same bytes, its `ssh host true`.

// hostCPU is the CPU time h spent on fn: from before it to when the
// processes it made the host start have ended (a connection's sshd ends
// after its client has gone).
func hostCPU(b *testing.B, h *sshd.Host, fn func()) time.Duration {
	b.Helper()
	idle := h.Running(b)
	before := h.CPU(b)
	fn()
	h.WaitRunning(b, idle)
	return h.CPU(b) - before
}

// hostProcs lists the processes h started for fn. A host that also runs in
// a cgroup is waited for until they have ended.
func hostProcs(b *testing.B, h *sshd.Host, cgroup bool, fn func()) sshd.Procs {
	b.Helper()
	idle := 0
	if cgroup {
		idle = h.Running(b)
	}
	mark := h.TraceMark(b)
	fn()
	if cgroup {
		h.WaitRunning(b, idle)
	}
	return h.Started(b, mark)
}

// scpTo copies src (a file or, recursively, a directory) to dest on h
// with OpenSSH's scp (the SFTP protocol, OpenSSH 9's default), with the
// options in flags besides.
func scpTo(b *testing.B, h *sshd.Host, src, dest string, flags ...string) {
	b.Helper()
	args := append([]string{"-q", "-r", "-F", "none", "-i", h.KeyFile, "-o", "BatchMode=yes", "-o", "IdentitiesOnly=yes",
		"-o", "UserKnownHostsFile=" + h.KnownHosts, "-P", strconv.Itoa(h.Port)}, flags...)
	if out, err := exec.Command("scp", append(args, src, h.User+"@127.0.0.1:"+dest)...).CombinedOutput(); err != nil {
		b.Fatalf("scp: %v %s", err, out)
	}
}

// sshRun runs script on h with OpenSSH's ssh: a connection and one exec.
func sshRun(b *testing.B, h *sshd.Host, script string) {
	b.Helper()
	args := append(sshArgs(h, h.KnownHosts, strconv.Itoa(h.Port)), h.User+"@127.0.0.1", script)
	if out, err := exec.Command("ssh", args...).CombinedOutput(); err != nil {
		b.Fatalf("ssh %s: %v %s", script, err, out)
	}
}

// sshTrue is OpenSSH's `ssh host true`.
func sshTrue(b *testing.B, h *sshd.Host) { sshRun(b, h, "true") }

// smallTree is 2 MB of random data in 8 files, as the fleet pushes.
func smallTree(b *testing.B) string {
	b.Helper()
	src := b.TempDir()
	for i := range 8 {
		blob := make([]byte, 256<<10)
		rand.Read(blob)
		if err := os.WriteFile(filepath.Join(src, fmt.Sprintf("part%d", i)), blob, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	return src
}

// BenchmarkHostCPUPush is the host's CPU time for a whole `hoist push`
// (a new hoist process: connection, host commands, upload, the host's
// verification and unpacking, promotion) to a fresh store, next to scp of
// the same bytes to the same sshd in the same iteration: 2mb-activate, 2 MB
// in 8 files with --activate; 256mib, 256 MiB in one file, loopback.
// hoist-ms and scp-ms are the host's CPU milliseconds per operation,
// hoist/scp their ratio (1: the same cost as scp).
func BenchmarkHostCPUPush(b *testing.B) {
	h := sshd.Start(b, sshd.Options{Cgroup: true})
	for _, tc := range []struct {
		name  string
		src   string
		flags []string
	}{
		{"2mb-activate", smallTree(b), []string{"--activate"}},
		{"256mib", randomTree(b, 256<<20), nil},
	} {
		b.Run(tc.name, func(b *testing.B) {
			c := newCLI(b, h, "")
			var hoist, scp time.Duration
			for i := 0; b.Loop(); i++ {
				dest := filepath.Join(h.Dir, "scp-copy")
				scp += hostCPU(b, h, func() { scpTo(b, h, tc.src, dest) })
				os.RemoveAll(dest)
				root := filepath.Join(h.Dir, fmt.Sprintf("cpu-%s-%d", tc.name, i))
				c.flags = cliFlags(b, h, h.Addr, root)
				hoist += hostCPU(b, h, func() {
					if r := c.run(append([]string{"push", tc.src, "--name", "app"}, tc.flags...)...); r.code != 0 {
						b.Fatalf("hoist push: %s", r)
					}
				})
				os.RemoveAll(root)
			}
			reportCPU(b, hoist, "hoist-ms", scp, "scp-ms", "hoist/scp")
		})
	}
}

// BenchmarkHostCPURun is the host's CPU time for `run -- true`: cold, a
// new hoist process (a connection, one host command), next to OpenSSH's
// `ssh host true`; warm, on an open connection (lock.Run: the one host
// command), next to a bare exec of `true` on the same connection (a
// session, sshd's fork, the login shell).
func BenchmarkHostCPURun(b *testing.B) {
	h := sshd.Start(b, sshd.Options{Cgroup: true})
	root := filepath.Join(h.Dir, "store")
	b.Run("cold", func(b *testing.B) {
		c := newCLI(b, h, root)
		var hoist, ssh time.Duration
		for b.Loop() {
			ssh += hostCPU(b, h, func() { sshTrue(b, h) })
			hoist += hostCPU(b, h, func() {
				if r := c.run("run", "--", "true"); r.code != 0 {
					b.Fatalf("hoist run: %s", r)
				}
			})
		}
		reportCPU(b, hoist, "hoist-ms", ssh, "ssh-ms", "hoist/ssh")
	})
	b.Run("warm", func(b *testing.B) {
		l := newLock(b, h, root)
		warm(b, l)
		var run, bare time.Duration
		for b.Loop() {
			bare += hostCPU(b, h, func() { bareExec(b, l) })
			run += hostCPU(b, h, func() {
				if res, err := l.Run(ctxT(b), []string{"true"}, lock.RunOptions{}); err != nil || res.Status != 0 {
					b.Fatalf("%v %+v", err, res)
				}
			})
		}
		reportCPU(b, run, "run-ms", bare, "exec-ms", "run/exec")
	})
}

// reportCPU reports two CPU times per operation, in milliseconds, and
// their ratio.
func reportCPU(b *testing.B, got time.Duration, gotUnit string, ref time.Duration, refUnit, ratioUnit string) {
	ms := func(d time.Duration) float64 { return float64(d) / float64(b.N) / float64(time.Millisecond) }
	b.ReportMetric(ms(got), gotUnit)
	b.ReportMetric(ms(ref), refUnit)
	b.ReportMetric(float64(got)/float64(ref), ratioUnit)
}

// BenchmarkHostProcs counts the processes a host starts for each hoist
// command (a new hoist process each, as a script runs them), next to
// OpenSSH's `ssh host true` (ssh-true: a connection and one exec): procs/op
// (forks, sshd's own included) and execs/op (programs run: sshd's re-exec,
// the login shell, /bin/sh, the tools). The log lists the programs of each
// command's last iteration, the most frequent first; "sh (fork)" is a
// subshell of /bin/sh that ran no program. With HOIST_PROCS_DIR set to a
// directory, each command's process tree is written there (OP.txt).
func BenchmarkHostProcs(b *testing.B) {
	cgroup := isRoot()
	h := sshd.Start(b, sshd.Options{TraceProcs: true, Cgroup: cgroup})
	c := newCLI(b, h, filepath.Join(h.Dir, "store"))
	hoist := func(args ...string) func() {
		return func() {
			if r := c.run(args...); r.code != 0 {
				b.Fatalf("hoist %v: %s", args, r)
			}
		}
	}
	n := 0
	tree := func() string {
		n++
		return sourceTree(b, fmt.Sprintf("v%d-%d", n, time.Now().UnixNano()))
	}
	hoist("push", tree(), "--name", "a")()
	hoist("push", tree(), "--name", "b", "--activate")()
	for _, op := range []struct {
		name string
		prep func(i int) // before the command, not counted
		cmd  func(i int) func()
	}{
		{"ssh-true", nil, func(int) func() { return func() { sshTrue(b, h) } }},
		{"status", nil, func(int) func() { return hoist("lock", "status") }},
		{"run-true", nil, func(int) func() { return hoist("run", "--", "true") }},
		{"push", nil, func(int) func() { return hoist("push", tree(), "--name", "c") }},
		{"push-activate", nil, func(int) func() { return hoist("push", tree(), "--name", "c", "--activate") }},
		{"list", nil, func(int) func() { return hoist("list") }},
		{"activate", nil, func(i int) func() { return hoist("activate", []string{"a", "b"}[i%2]) }},
		// Each counted gc finds the same store: one runtime to delete.
		{"gc", func(int) { hoist("gc", "--keep", "1")(); hoist("push", tree(), "--name", "d")() }, func(int) func() { return hoist("gc", "--keep", "1") }},
	} {
		b.Run(op.name, func(b *testing.B) {
			var procs, execs int
			var last sshd.Procs
			for i := 0; b.Loop(); i++ {
				if op.prep != nil { // on a quiet host, its processes ended
					hostProcs(b, h, cgroup, func() { op.prep(i) })
				}
				cmd := op.cmd(i) // a new tree is made here, outside the count
				last = hostProcs(b, h, cgroup, cmd)
				procs += len(last)
				execs += last.Execs()
			}
			b.ReportMetric(float64(procs)/float64(b.N), "procs/op")
			b.ReportMetric(float64(execs)/float64(b.N), "execs/op")
			b.Logf("%s: %d processes, %d programs: %s", op.name, len(last), last.Execs(), last.Top())
			if dir := os.Getenv("HOIST_PROCS_DIR"); dir != "" {
				// Each command's processes, for reading what it does.
				if err := os.WriteFile(filepath.Join(dir, op.name+".txt"), []byte(last.Tree()), 0o644); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkHostCPUParts splits a 256 MiB push's host CPU into the steps a
// host makes, each measured alone on the same host in the same iteration
// and less the connection it needs (connect-ms: `ssh host true`): receive,
// 256 MiB through scp with OpenSSH's default cipher (scp-ms,
// chacha20-poly1305) and with the one hoist's client chooses
// (scp-aesgcm-ms, AES-128-GCM); write, the same bytes written to a file by
// cat (write-ms); hash, `openssl dgst -sha256` of the archive (sha-ms);
// unpack, `tar -xof` of it (untar-ms); and one short-lived process,
// /bin/sh running /bin/true (proc-ms, from 20 of them).
func BenchmarkHostCPUParts(b *testing.B) {
	h := sshd.Start(b, sshd.Options{Cgroup: true})
	src := randomTree(b, 256<<20)
	archive := filepath.Join(h.Dir, "artifact.tar")
	if out, err := exec.Command("tar", "-cf", archive, "-C", src, "blob").CombinedOutput(); err != nil {
		b.Fatalf("tar: %v %s", err, out)
	}
	ssh := func(script string) func() { return func() { sshRun(b, h, script) } }
	blob, dest := filepath.Join(src, "blob"), filepath.Join(h.Dir, "copy")
	scp := func(flags ...string) func() { return func() { scpTo(b, h, blob, dest, flags...) } }
	dir := filepath.Join(h.Dir, "unpacked")
	parts := []struct {
		unit string
		fn   func()
		per  int // what the figure is divided by, beyond the iterations
	}{
		{"scp-ms", scp(), 1},
		{"scp-aesgcm-ms", scp("-c", "aes128-gcm@openssh.com"), 1},
		{"write-ms", ssh("cat " + archive + " >" + dir + ".tar && rm " + dir + ".tar"), 1},
		{"sha-ms", ssh("openssl dgst -sha256 " + archive + " >/dev/null"), 1},
		{"untar-ms", ssh("mkdir " + dir + " && tar -xof " + archive + " -C " + dir + " && rm -rf " + dir), 1},
		{"proc-ms", ssh("exec /bin/sh -c 'for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do /bin/true; done'"), 20},
	}
	spent := make([]time.Duration, len(parts))
	var connect time.Duration
	for b.Loop() {
		c := hostCPU(b, h, ssh("true"))
		connect += c
		for i, p := range parts {
			spent[i] += hostCPU(b, h, p.fn) - c
		}
	}
	ms := func(d time.Duration) float64 { return float64(d) / float64(b.N) / float64(time.Millisecond) }
	b.ReportMetric(ms(connect), "connect-ms")
	for i, p := range parts {
		b.ReportMetric(ms(spent[i])/float64(p.per), p.unit)
	}
}
