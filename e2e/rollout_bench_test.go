package e2e

import (
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hoistdev/hoist/cmd/hoist/output"
	"github.com/hoistdev/hoist/e2e/sshd"
)

// BenchmarkRolloutBatches: a rollout of a runtime 16 hosts have already
// (a REF) in four batches of 4, `hoist rollout REF --batch 4 --canary 0`
// with an exec check, against `hoist -H (16 hosts) activate REF` with the
// same check, all at once, in the same run (each host a real sshd with a
// store of its own; back to the old runtime with a plain activate between
// them, untimed). x-activate is the rollout's time over activate's (goal:
// at most 1.2 plus the check time of the three batches more);
// batch-check-ms the check time of a batch (its slowest host's restart and
// tries); x-activate-less-batch-checks the rollout's time, less three
// batches' check time, over activate's (goal: at most 1.2).
func BenchmarkRolloutBatches(b *testing.B) {
	const n, batch = 16, 4
	if !isRoot() {
		b.Skip("needs root: each host has a store of its own at one path (a tmpfs in its own mount namespace)")
	}
	// One login, each host with its own tmpfs at dir: 16 stores at one
	// --root. Each host is an alias of an ssh config naming its key alone
	// (16 keys offered to each would pass sshd's MaxAuthTries).
	const dir = "/tmp/hoist-rollout-bench"
	var cfg, known, aliases []string
	var first *sshd.Host
	for i := range n {
		h := sshd.Start(b, sshd.Options{Tmpfs: []string{dir}})
		if first == nil {
			first = h
		}
		host, port, _ := net.SplitHostPort(h.Addr)
		alias := fmt.Sprintf("rb%d", i)
		cfg = append(cfg, fmt.Sprintf("Host %s\n  HostName %s\n  Port %s\n  User %s\n  IdentityFile %s\n  IdentitiesOnly yes\n", alias, host, port, h.User, h.KeyFile))
		kh, _ := os.ReadFile(h.KnownHosts)
		known = append(known, string(kh))
		aliases = append(aliases, alias)
	}
	tmp := b.TempDir()
	os.WriteFile(filepath.Join(tmp, "config"), []byte(strings.Join(cfg, "")), 0o600)
	os.WriteFile(filepath.Join(tmp, "known_hosts"), []byte(strings.Join(known, "")), 0o600)
	c := newCLI(b, first, "")
	c.flags = []string{"-F", filepath.Join(tmp, "config"), "--known-hosts", filepath.Join(tmp, "known_hosts"), "--root", dir + "/store", "-H", strings.Join(aliases, ",")}
	push := func(v string, activate bool) string {
		args := []string{"--json", "push", sourceTree(b, v), "--name", "app"}
		if activate {
			args = append(args, "--activate")
		}
		r := c.run(args...)
		var p output.Push
		if err := json.Unmarshal([]byte(strings.SplitN(r.stdout, "\n", 2)[0]), &p); r.code != 0 || err != nil {
			b.Fatalf("push %s: %v %s", v, err, r)
		}
		return p.ID
	}
	id1, id2 := push("1", true), push("2", false)
	check := []string{"--check", "true", "--check-interval", "100ms", "--stable", "0"}
	back := func() {
		if r := c.run("activate", id1); r.code != 0 {
			b.Fatalf("activate %s: %s", id1, r)
		}
	}
	var rollout, activate, checks time.Duration
	batches := 0
	for b.Loop() {
		start := time.Now()
		r := c.run(append([]string{"--json", "rollout", id2, "--batch", strconv.Itoa(batch), "--canary", "0"}, check...)...)
		rollout += time.Since(start)
		if r.code != 0 {
			b.Fatalf("rollout: %s", r)
		}
		slowest := map[int]time.Duration{}
		for _, l := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
			var o output.Rollout
			if err := json.Unmarshal([]byte(l), &o); err != nil || o.Health == nil {
				b.Fatalf("rollout --json: %v %s", err, r)
			}
			took := time.Duration(o.Health.Check.RestartMS) * time.Millisecond
			for _, t := range o.Health.Check.Tries {
				took += time.Duration(t.MS) * time.Millisecond
			}
			slowest[o.Batch] = max(slowest[o.Batch], took)
		}
		if len(slowest) != n/batch {
			b.Fatalf("want %d batches: %s", n/batch, r)
		}
		for _, d := range slowest {
			checks += d
			batches++
		}
		back()
		start = time.Now()
		r = c.run(append([]string{"activate", id2}, check...)...)
		activate += time.Since(start)
		if r.code != 0 {
			b.Fatalf("activate: %s", r)
		}
		back()
	}
	perBatch := checks / time.Duration(batches)
	extra := time.Duration(b.N) * perBatch * (n/batch - 1)
	b.ReportMetric(rollout.Seconds()/float64(b.N), "rollout-s")
	b.ReportMetric(activate.Seconds()/float64(b.N), "activate-s")
	b.ReportMetric(float64(rollout)/float64(activate), "x-activate")
	b.ReportMetric(float64(perBatch)/float64(time.Millisecond), "batch-check-ms")
	b.ReportMetric(float64(rollout-extra)/float64(activate), "x-activate-less-batch-checks")
}
