package e2e

// Containers on one kernel that share a store volume: each keeps its own
// locks, by the PID namespace and PID 1 its records carry.

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/hoistdev/hoist/cmd/hoist/output"
	"github.com/hoistdev/hoist/e2e/sshd"
	"github.com/hoistdev/hoist/shellcmd"
)

// TestContainersSharingAStoreKeepEachOthersLocks: two containers on one
// kernel (the same boot_id and /etc/machine-id, each its own PID namespace
// and PID 1) share a store volume and log in as the same user. A lock taken
// in one is held for the other, never "stale" or "previous boot": the other
// container's status says locked, its acquire and run answer busy (75), its
// gc skips, and the lock keeps the holder's token; then the other way round.
//
// A broken previous-boot rule (one that takes a different PID namespace or a
// different PID 1 start time for a reboot) would make the second container
// steal the lock at once: acquire exiting 0 with "took over ... previous
// boot", status saying stale/boot, the record carrying the thief's token.
func TestContainersSharingAStoreKeepEachOthersLocks(t *testing.T) {
	sshd.RequireRoot(t)
	t.Parallel()
	a := sshd.Start(t, sshd.Options{PIDNamespace: true})
	b := sshd.Start(t, sshd.Options{PIDNamespace: true})
	if a.User != b.User {
		t.Fatalf("the two hosts log in as %s and %s; the test needs one user for both", a.User, b.User)
	}
	// The shared volume: made by root, owned by the login both use.
	root := filepath.Join(a.Dir, "shared-store")
	if err := os.Mkdir(root, 0o755); err != nil {
		t.Fatal(err)
	}
	uid, gid := lookupIDs(t, a.User)
	if err := os.Chown(root, uid, gid); err != nil {
		t.Fatal(err)
	}

	boot := strings.TrimSpace(readFile(t, "/proc/sys/kernel/random/boot_id"))
	nsA, nsB := hostPIDNS(t, a), hostPIDNS(t, b)
	if nsA == nsB {
		t.Fatalf("both hosts are in PID namespace %s: they are not two containers", nsA)
	}

	ca, cb := newCLI(t, a, root), newCLI(t, b, root)
	for _, d := range []struct {
		name          string
		holder, other *cli
		holderNS      string
	}{
		{"A holds, B asks", ca, cb, nsA},
		{"B holds, A asks", cb, ca, nsB},
	} {
		t.Run(d.name, func(t *testing.T) {
			hold := d.holder.run("lock", "acquire")
			if hold.code != 0 {
				t.Fatalf("acquire in the holding container: %s", hold)
			}
			token := strings.TrimSpace(hold.stdout)
			defer d.holder.run("lock", "release", "--token", token)

			recPath := lockRecord(root)
			before := readFile(t, recPath)
			rec, ok := shellcmd.ParseRecord(strings.SplitN(before, "\n", 2)[0])
			if !ok || rec.Token != token || rec.BootID != boot || rec.PIDNS != d.holderNS {
				t.Fatalf("the record is not the holder's, written in its container (token %s, boot %s, pidns %s):\n%s", token, boot, d.holderNS, before)
			}

			st := d.other.run("--json", "lock", "status")
			if st.code != 0 {
				t.Fatalf("status in the other container: %s", st)
			}
			obj := decodeOne[output.LockStatus](t, "status in the other container", st.stdout)
			if held := heldOf(obj.Lock); !obj.Locked || obj.Stale || held.Why != "" || held.Token != token || held.BootMatch == nil || !*held.BootMatch {
				t.Fatalf("status in the other container: want locked by %s, not stale, same boot:\n%s", token, st.stdout)
			}
			txt := d.other.run("lock", "status")
			if txt.code != 0 || !strings.Contains(txt.stdout, "locked by") ||
				strings.Contains(txt.stdout+txt.stderr, "previous boot") || strings.Contains(txt.stdout+txt.stderr, "another boot") {
				t.Fatalf("status in the other container must say held, and nothing of a previous boot:\n%s", txt)
			}

			if r := d.other.run("lock", "acquire", "--wait", "0"); r.code != 75 || strings.Contains(r.stderr, "took over") {
				t.Fatalf("acquire --wait 0 in the other container: want 75 (busy), nothing taken over:\n%s", r)
			}
			if r := d.other.run("run", "--wait", "0", "--", "true"); r.code != 75 {
				t.Fatalf("run --wait 0 in the other container: want 75 (busy):\n%s", r)
			}
			if r := d.other.run("gc"); r.code != 0 || !strings.Contains(r.stdout, "skipped: store busy") {
				t.Fatalf("gc in the other container: want skipped, store busy:\n%s", r)
			}
			if after := readFile(t, lockRecord(root)); lockRecord(root) != recPath || after != before {
				t.Fatalf("the lock changed hands: %s held\n%s\nnow %s holds\n%s", recPath, before, lockRecord(root), after)
			}
			if r := d.holder.run("lock", "release", "--token", token); r.code != 0 {
				t.Fatalf("release by the holder: %s", r)
			}
		})
	}
}

// hostPIDNS is the number of the host's PID namespace, as a lock record
// carries it.
func hostPIDNS(t testing.TB, h *sshd.Host) string {
	t.Helper()
	out := hostSh(t, h, "readlink /proc/self/ns/pid")
	ns := strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(out), "pid:["), "]")
	if _, err := strconv.ParseUint(ns, 10, 64); err != nil {
		t.Fatalf("PID namespace of %s: %q", h.Addr, out)
	}
	return ns
}
