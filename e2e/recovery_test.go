package e2e

// Recovery figures: for each fault a holder of the store lock can suffer,
// how long until another client holds the lock, and proof that two holders
// never overlapped. Each figure is logged on one line,
//
//	RECOVERY <fault>: <ms> ms (reference: <what bounds it>)
//
// for the docs table (go test -run Recovery -v ./e2e/ | grep RECOVERY).
// Only correctness and generous safety bounds are asserted, never tight
// timing.
//
// Every holder runs its command as `env HOISTREC=<nonce>-<name> sh -c ...`:
// each of its processes carries that mark in its environment, however it
// was started. The command appends "start NAME OTHERS TS" to a journal on
// the host when it starts, where OTHERS counts the live processes marked
// by any other holder of the test (found on the host, by the holder itself,
// while it holds the lock), and "end NAME TS" when it ends normally. The
// journal check (recRig.check) fails when a start falls inside another
// holder's start..end, or when a holder that never wrote its end (it was
// killed) still had a process alive when the next one started.

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hoistdev/hoist/e2e/sshd"
)

// recRig is one store on a host with its journal, and the mark of the
// test's holders.
type recRig struct {
	t             *testing.T
	h             *sshd.Host
	root, journal string
	nonce         string
	flags         []string // replaces the cli's flags when set (a proxy)
}

func newRecRig(t *testing.T, h *sshd.Host, name string) *recRig {
	return &recRig{t: t, h: h, root: filepath.Join(h.Dir, name), journal: filepath.Join(h.Dir, name+"-journal"),
		nonce: randomHex(t, 4)}
}

func (r *recRig) cli() *cli {
	c := newCLI(r.t, r.h, r.root)
	if r.flags != nil {
		c.flags = r.flags
	}
	return c
}

// mark is the environment entry every process of holder name carries.
func (r *recRig) mark(name string) string { return "HOISTREC=" + r.nonce + "-" + name }

// holder is the argv of holder name (three characters, so that no name is
// a prefix of another): it journals its start, runs body, journals its end
// and then runs tail (an exit, say).
func (r *recRig) holder(name, body, tail string) []string {
	j := shq(r.journal)
	// The other holders' live processes: those marked by this test, less
	// this holder's own (the grep and wc of this very line included).
	others := fmt.Sprintf("grep -lsaF %s /proc/[0-9]*/environ | xargs -r grep -LsaF %s | wc -l",
		shq("HOISTREC="+r.nonce+"-"), shq(r.mark(name)))
	script := fmt.Sprintf(`echo "start %s $(%s) $(date +%%s%%N)" >>%s; %s; echo "end %s $(date +%%s%%N)" >>%s`,
		name, others, j, body, name, j)
	if tail != "" {
		script += "; " + tail
	}
	return []string{"env", r.mark(name), "sh", "-c", script}
}

// runArgs is "run [opts...] -- <holder argv>", with the global flags first.
func runArgs(global, opts, argv []string) []string {
	args := append(append([]string{}, global...), "run")
	args = append(append(args, opts...), "--")
	return append(args, argv...)
}

type recEntry struct {
	kind, name string
	others     int
	at         time.Time
}

// entries reads the journal.
func (r *recRig) entries() []recEntry {
	r.t.Helper()
	data, err := os.ReadFile(r.journal)
	if err != nil && !os.IsNotExist(err) {
		r.t.Fatal(err)
	}
	var es []recEntry
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		e := recEntry{}
		var ns int64
		switch {
		case len(f) == 4 && f[0] == "start":
			e.kind, e.name = f[0], f[1]
			e.others, err = strconv.Atoi(f[2])
			if err == nil {
				ns, err = strconv.ParseInt(f[3], 10, 64)
			}
		case len(f) == 3 && f[0] == "end":
			e.kind, e.name = f[0], f[1]
			ns, err = strconv.ParseInt(f[2], 10, 64)
		default:
			err = fmt.Errorf("bad line")
		}
		if err != nil {
			r.t.Fatalf("journal line %q: %v\n%s", sc.Text(), err, data)
		}
		e.at = time.Unix(0, ns)
		es = append(es, e)
	}
	return es
}

// entry is the journal's entry kind (start, end) of holder name.
func (r *recRig) entry(kind, name string) (recEntry, bool) {
	for _, e := range r.entries() {
		if e.kind == kind && e.name == name {
			return e, true
		}
	}
	return recEntry{}, false
}

// waitEntry waits for holder name's entry of kind.
func (r *recRig) waitEntry(kind, name string, d time.Duration) recEntry {
	r.t.Helper()
	var e recEntry
	waitFor(r.t, d, kind+" of "+name+" in the journal", func() bool {
		var ok bool
		e, ok = r.entry(kind, name)
		return ok
	})
	return e
}

type recSpan struct {
	start, end time.Time
	ended      bool
	others     int
}

// check verifies the journal: exactly the holders in names started, each
// once; no start fell between another holder's start and end; and a holder
// that never ended (killed) had no process left when any later holder
// started, except for the starts listed in overlapOK (a fault that keeps a
// holder's command alive by design), whose counts are returned in the
// spans. ended lists the holders that must have ended normally.
func (r *recRig) check(names, ended []string, overlapOK ...string) map[string]recSpan {
	r.t.Helper()
	es := r.entries()
	spans := map[string]recSpan{}
	var open []string
	var dump strings.Builder
	for _, e := range es {
		fmt.Fprintf(&dump, "  %s %s others=%d %s\n", e.kind, e.name, e.others, e.at.Format("15:04:05.000"))
	}
	endOf := map[string]bool{}
	for _, e := range es {
		if e.kind == "end" {
			endOf[e.name] = true
		}
	}
	for _, e := range es {
		s := spans[e.name]
		switch e.kind {
		case "start":
			if _, dup := spans[e.name]; dup {
				r.t.Fatalf("%s started twice:\n%s", e.name, dump.String())
			}
			for _, o := range open {
				if endOf[o] {
					r.t.Fatalf("OVERLAP: %s started while %s held the lock (before its end):\n%s", e.name, o, dump.String())
				}
			}
			if e.others != 0 && !contains(overlapOK, e.name) {
				r.t.Fatalf("OVERLAP: %s started while %d process(es) of an earlier holder %v were still alive:\n%s",
					e.name, e.others, open, dump.String())
			}
			s.start, s.others = e.at, e.others
			open = append(open, e.name)
		case "end":
			if _, ok := spans[e.name]; !ok || s.ended {
				r.t.Fatalf("%s ended without a start, or twice:\n%s", e.name, dump.String())
			}
			s.end, s.ended = e.at, true
			for i, o := range open {
				if o == e.name {
					open = append(open[:i], open[i+1:]...)
					break
				}
			}
		}
		spans[e.name] = s
	}
	for _, n := range names {
		if _, ok := spans[n]; !ok {
			r.t.Fatalf("%s never started:\n%s", n, dump.String())
		}
	}
	if len(spans) != len(names) {
		r.t.Fatalf("journal names %d holders, want %v:\n%s", len(spans), names, dump.String())
	}
	for _, n := range ended {
		if !spans[n].ended {
			r.t.Fatalf("%s did not end normally:\n%s", n, dump.String())
		}
	}
	r.t.Logf("journal:\n%s", dump.String())
	return spans
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// procs lists the live processes marked as holder name's.
func (r *recRig) procs(name string) []int {
	want := []byte(r.mark(name))
	self := os.Getpid()
	files, _ := filepath.Glob("/proc/[0-9]*/environ")
	var pids []int
	for _, f := range files {
		pid, err := strconv.Atoi(filepath.Base(filepath.Dir(f)))
		if err != nil || pid == self {
			continue
		}
		env, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		for _, kv := range bytes.Split(env, []byte{0}) {
			if bytes.Equal(kv, want) {
				pids = append(pids, pid)
				break
			}
		}
	}
	return pids
}

// recordField is field key= of the lock's record.
func (r *recRig) recordField(key string) string {
	r.t.Helper()
	p := lockRecord(r.root)
	if p == "" {
		r.t.Fatal("the lock has no record")
	}
	line := strings.SplitN(readFile(r.t, p), "\n", 2)[0]
	for _, f := range strings.Fields(line) {
		if v, ok := strings.CutPrefix(f, key+"="); ok {
			return v
		}
	}
	r.t.Fatalf("the record has no %s=: %s", key, line)
	return ""
}

// waitWaiting waits until client s waits for the lock.
func waitWaiting(t *testing.T, s *started) {
	t.Helper()
	waitFor(t, 30*time.Second, "the waiter waits for the lock", func() bool {
		select {
		case <-s.done:
			t.Fatalf("the waiter exited (%d) while it should wait: %s", s.code, s.stderr())
		default:
		}
		return strings.Contains(s.stderr(), "waiting for the store lock")
	})
}

// pgidOf is the process group of pid.
func pgidOf(t *testing.T, pid int) int {
	t.Helper()
	stat := readFile(t, fmt.Sprintf("/proc/%d/stat", pid))
	fields := strings.Fields(stat[strings.LastIndexByte(stat, ')')+1:])
	n, err := strconv.Atoi(fields[2])
	if err != nil {
		t.Fatalf("pgid of %d: %q", pid, stat)
	}
	return n
}

func ms(d time.Duration) int64 { return d.Milliseconds() }

// figure logs one recovery figure in the format the docs table collects.
func figure(t *testing.T, fault string, d time.Duration, ref string) {
	t.Helper()
	t.Logf("RECOVERY %s: %d ms (reference: %s)", fault, ms(d), ref)
}

// recoveryBound is the generous bound on every recovery that does not wait
// for a lease: far above what the design needs (a poll of 0.1 s, a
// re-evaluation every second), far below a lease.
const recoveryBound = 10 * time.Second

// TestRecoveryClientKilled: the client is SIGKILLed while its command
// runs; the command completes on the host and a waiting client gets the
// lock. Figure: from the command's end to the waiter's command start.
// The command waits for a gate instead of sleeping two seconds, so that
// the kill and the waiter's wait come before its end however slow the
// machine.
func TestRecoveryClientKilled(t *testing.T) {
	t.Parallel()
	h := sshd.Start(t, sshd.Options{})
	r := newRecRig(t, h, "store")
	gate := filepath.Join(h.Dir, "gate")
	a := r.cli().start(runArgs(nil, nil, r.holder("a00", "until [ -e "+shq(gate)+" ]; do sleep 0.05; done", ""))...)
	r.waitEntry("start", "a00", 30*time.Second)
	w := r.cli().start(runArgs(nil, []string{"--wait", "60s"}, r.holder("w01", "sleep 0.1", ""))...)
	waitWaiting(t, w)
	if err := a.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	a.wait(t, 10*time.Second)
	if _, ok := r.entry("end", "a00"); ok {
		t.Fatal("the command ended before its client was killed")
	}
	if err := os.WriteFile(gate, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if code := w.wait(t, 30*time.Second); code != 0 {
		t.Fatalf("waiter: exit %d, want 0; stderr: %s", code, w.stderr())
	}
	spans := r.check([]string{"a00", "w01"}, []string{"a00", "w01"})
	d := spans["w01"].start.Sub(spans["a00"].end)
	figure(t, "client SIGKILLed", d, "the host releases at the command's end; a waiter polls every 0.1 s")
	if d > recoveryBound {
		t.Fatalf("the waiter got the lock %s after the command ended, want within %s", d, recoveryBound)
	}
	waitFor(t, 10*time.Second, "lock released", func() bool { return !exists(lockPath(r.root)) })
}

// TestRecoveryHostWrapperKilled: the host command that holds the lock (the
// record's hpid) is SIGKILLed while its command runs. Its guardian stops
// the command's group and releases, or a waiter finds the holder exited
// (the exited-holder rule); either way the waiter gets the lock with no
// process of the command left. Figure: from the kill to the waiter's
// command start.
func TestRecoveryHostWrapperKilled(t *testing.T) {
	t.Parallel()
	h := sshd.Start(t, sshd.Options{})
	r := newRecRig(t, h, "store")
	wrapperKilled(t, r, nil, func() int {
		hpid, err := strconv.Atoi(r.recordField("hpid"))
		if err != nil {
			t.Fatal(err)
		}
		return hpid
	}, "host command SIGKILLed", "the guardian stops the group and releases; exited-holder rule; re-evaluated every 1 s")
}

// wrapperKilled: holder a00 runs a long command, a waiter waits, and the
// host command that holds the lock (its pid as shell finds it, this test's
// view) is SIGKILLed. The waiter must get the lock within recoveryBound
// with no process of a00's command left, and a00's client must fail. The
// figure is from the kill to the waiter's command start.
func wrapperKilled(t *testing.T, r *recRig, global []string, shell func() int, fault, ref string) {
	t.Helper()
	a := r.cli().start(runArgs(global, nil, r.holder("a00", "sleep 30", ""))...)
	r.waitEntry("start", "a00", 30*time.Second)
	w := r.cli().start(runArgs(global, []string{"--wait", "60s"}, r.holder("w01", "sleep 0.1", ""))...)
	waitWaiting(t, w)
	pid := shell()
	if n := len(r.procs("a00")); n == 0 {
		t.Fatal("no process of the command runs before the kill")
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatalf("kill -9 %d (the host command): %v", pid, err)
	}
	killed := time.Now()
	if code := w.wait(t, 40*time.Second); code != 0 {
		t.Fatalf("waiter: exit %d, want 0; stderr: %s", code, w.stderr())
	}
	spans := r.check([]string{"a00", "w01"}, []string{"w01"})
	d := spans["w01"].start.Sub(killed)
	figure(t, fault, d, ref)
	if d > recoveryBound {
		t.Fatalf("the waiter got the lock %s after the kill, want within %s", d, recoveryBound)
	}
	if left := r.procs("a00"); len(left) > 0 {
		t.Fatalf("processes %v of the killed holder's command are still running", left)
	}
	if code := a.wait(t, 40*time.Second); code == 0 {
		t.Fatalf("the killed holder's client exited 0: %s", a.stderr())
	}
	t.Logf("the killed holder's client: exit %d: %s", a.code, strings.TrimSpace(a.stderr()))
}

// TestRecoveryHostRebooted: the host is power-cycled (the harness's boot
// namespace: every process dies and the boot id changes) while a command
// runs under the lock; after the restart the next client takes the lock at
// once, saying it was taken in a previous boot. Figure: from the host being
// up again to the new client's command start (its ssh login included).
func TestRecoveryHostRebooted(t *testing.T) {
	t.Parallel()
	h := sshd.Start(t, sshd.Options{BootNamespace: true})
	r := newRecRig(t, h, "store")
	a := r.cli().start(runArgs(nil, nil, r.holder("a00", "sleep 30", ""))...)
	r.waitEntry("start", "a00", 30*time.Second)
	down := time.Now()
	h.Reboot(t)
	up := time.Now()
	if !exists(lockPath(r.root)) {
		t.Fatal("the lock went away with the reboot; the test needs it left behind")
	}
	b := r.cli().run(runArgs(nil, []string{"--wait", "60s"}, r.holder("w01", "true", ""))...)
	if b.code != 0 || !strings.Contains(b.stderr, "previous boot") {
		t.Fatalf("after the reboot: want the lock taken at once because of the previous boot: %s", b)
	}
	spans := r.check([]string{"a00", "w01"}, []string{"w01"})
	d := spans["w01"].start.Sub(up)
	figure(t, "host rebooted", d, fmt.Sprintf("previous-boot rule, at the first look; includes the new client's login; the reboot itself took %d ms", ms(up.Sub(down))))
	if d > recoveryBound {
		t.Fatalf("the lock was taken %s after the host came back, want within %s", d, recoveryBound)
	}
	// The holder's client lost its connection in the reboot and follows
	// the run again; whether it ends is TestRecoveryRebootedRunFollowEnds.
	select {
	case <-a.done:
		t.Logf("the rebooted holder's client: exit %d: %s", a.code, strings.TrimSpace(a.stderr()))
		if a.code == 0 {
			t.Fatalf("the rebooted holder's client exited 0: %s", a.stderr())
		}
	case <-time.After(5 * time.Second):
		t.Logf("the rebooted holder's client still runs: %s", strings.TrimSpace(a.stderr()))
	}
}

// TestRecoveryRebootedRunFollowEnds: the client of a run that a host
// reboot killed reconnects after the reboot and follows the run again; the
// run has no status and never will, so the follow must end (exit status
// unknown). The reconnection is the new boot's first login, as after a real
// power cycle of a quiet host, so its shell gets the same pid the run's
// host command had before the reboot: a follower that takes "a process
// with the run's pid is alive" for "the run's host command is alive",
// without its start time or boot, waits for ever.
func TestRecoveryRebootedRunFollowEnds(t *testing.T) {
	t.Parallel()
	h := sshd.Start(t, sshd.Options{BootNamespace: true})
	r := newRecRig(t, h, "store")
	a := r.cli().start(runArgs(nil, nil, r.holder("a00", "sleep 30", ""))...)
	r.waitEntry("start", "a00", 30*time.Second)
	info := readFile(t, filepath.Join(r.root, "runs", r.recordField("token"), "info"))
	h.Reboot(t)
	rebooted := time.Now()
	waitFor(t, 30*time.Second, "the client reconnects after the reboot", func() bool {
		select {
		case <-a.done:
			return true
		default:
		}
		return strings.Contains(a.stderr(), "reconnected")
	})
	select {
	case <-a.done:
		figure(t, "host rebooted, the run's client ends", time.Since(rebooted), "the follower finds the run's host command and guardian gone, checked every few seconds")
		if a.code == 0 || !strings.Contains(a.stderr(), "exit status is unknown") {
			t.Fatalf("the client of the killed run: exit %d, want non-zero and the exit status unknown: %s", a.code, a.stderr())
		}
	case <-time.After(20 * time.Second):
		ps, _ := h.SSH(t, "ps -o pid,args -u $(id -u)")
		t.Errorf("BUG: the client of the run that the reboot killed still follows it 20s after the reboot: %s\n"+
			"the run's info (pid= is its host command before the reboot): %s"+
			"the host user's processes now (after one more login):\n%s", strings.TrimSpace(a.stderr()), info, ps)
	}
}

// TestRecoveryFrozenHolder: the host command that holds the lock and its
// guardian are stopped (SIGSTOP to their process group) while the command,
// in a session of its own, runs on. No heartbeat renews the record, so a
// waiter takes the lock once the lease (4 s) has passed, and not before.
// When the holder resumes its guardian finds the lease lost and stops the
// command group at once (fencing); its client says the lock was lost.
//
// Figures: from the freeze and from the last renewal to the waiter's
// command start, and from SIGCONT to the fenced command being gone. The
// frozen holder's command is alive while the waiter holds the lock, by
// construction (only its guardian is frozen); the journal check allows
// that for the waiter's start, and requires the command never to reach its
// end.
func TestRecoveryFrozenHolder(t *testing.T) {
	t.Parallel()
	const lease = 4 * time.Second
	h := sshd.Start(t, sshd.Options{})
	r := newRecRig(t, h, "store")
	global := []string{"--lease", "4s"}
	a := r.cli().start(runArgs(global, nil, r.holder("a00", "sleep 20", ""))...)
	r.waitEntry("start", "a00", 30*time.Second)
	if got := r.recordField("lease"); got != "4" {
		t.Fatalf("the record's lease is %q, want 4", got)
	}
	w := r.cli().start(runArgs(global, []string{"--wait", "60s"}, r.holder("w01", "sleep 3", ""))...)
	waitWaiting(t, w)
	recPath := lockRecord(r.root)
	hpid, err := strconv.Atoi(r.recordField("hpid"))
	if err != nil {
		t.Fatal(err)
	}
	pgid := pgidOf(t, hpid)
	if pgid != hpid {
		t.Logf("note: the host command %d is in process group %d", hpid, pgid)
	}
	if err := syscall.Kill(-pgid, syscall.SIGSTOP); err != nil {
		t.Fatalf("kill -STOP -- -%d: %v", pgid, err)
	}
	frozen := time.Now()
	// Any renewal under way has finished (a stopped process makes no
	// further system call): the record's time is the last renewal.
	time.Sleep(200 * time.Millisecond)
	fi, err := os.Stat(recPath)
	if err != nil {
		syscall.Kill(-pgid, syscall.SIGCONT)
		t.Fatalf("the frozen holder's record: %v", err)
	}
	renewed := fi.ModTime()
	wStart := r.waitEntry("start", "w01", 30*time.Second).at
	afterFreeze, afterRenewal := wStart.Sub(frozen), wStart.Sub(renewed)
	figure(t, "holder frozen (lease 4 s), from the freeze", afterFreeze, "lease 4 s, renewed every 1 s: stale 3-5 s after the freeze, seen within 1 s")
	figure(t, "holder frozen (lease 4 s), from the last renewal", afterRenewal, "lease 4 s: stale once its whole-second age is above the lease")
	// The stale rule wants the record's whole-second age above the lease,
	// which proves that more than a whole lease passed since the renewal.
	if afterRenewal < lease {
		syscall.Kill(-pgid, syscall.SIGCONT)
		t.Fatalf("BUG: the lock was taken %s after its last renewal, before its lease (%s)", afterRenewal, lease)
	}
	if afterFreeze > lease+3*time.Second+2*time.Second {
		syscall.Kill(-pgid, syscall.SIGCONT)
		t.Fatalf("the lock was taken %s after the freeze, want within lease+3s (and 2s of slack)", afterFreeze)
	}
	// The host takes the lock before the waiter's client hears of it and
	// says so: give its line the time to come.
	for end := time.Now().Add(5 * time.Second); !strings.Contains(w.stderr(), "took over") && time.Now().Before(end); {
		time.Sleep(20 * time.Millisecond)
	}
	if !strings.Contains(w.stderr(), "took over") {
		t.Errorf("the waiter does not say it took the lock over: %s", w.stderr())
	}
	wToken := filepath.Base(filepath.Dir(lockRecord(r.root)))

	// Resume the holder while the waiter still holds the lock.
	if err := syscall.Kill(-pgid, syscall.SIGCONT); err != nil {
		t.Fatalf("kill -CONT -- -%d: %v", pgid, err)
	}
	resumed := time.Now()
	waitFor(t, 15*time.Second, "the frozen holder's command is stopped after it resumes", func() bool { return len(r.procs("a00")) == 0 })
	fenced := time.Since(resumed)
	figure(t, "holder frozen, fencing after it resumes", fenced, "the guardian's next poll (0.25 s) finds the lease lost and TERMs the group")
	code := a.wait(t, 20*time.Second)
	if !strings.Contains(a.stderr(), "lock lost while the command ran") {
		t.Fatalf("the fenced client (exit %d) does not report the lock lost: %s", code, a.stderr())
	}
	t.Logf("the fenced client: exit %d: %s", code, strings.TrimSpace(a.stderr()))
	if code == 0 {
		t.Fatal("the fenced client exited 0")
	}
	if _, ended := r.entry("end", "w01"); !ended {
		if got := lockRecord(r.root); got == "" || filepath.Base(filepath.Dir(got)) != wToken {
			t.Fatalf("the fenced holder's release touched the new holder's lock: record %q, want the waiter's %s", got, wToken)
		}
	} else {
		t.Logf("note: the waiter ended before the fenced holder; its lock could not be checked")
	}
	if code := w.wait(t, 30*time.Second); code != 0 {
		t.Fatalf("waiter: exit %d, want 0; stderr: %s", code, w.stderr())
	}
	spans := r.check([]string{"a00", "w01"}, []string{"w01"}, "w01")
	if _, ended := r.entry("end", "a00"); ended {
		t.Fatal("the frozen holder's command reached its end")
	}
	if spans["w01"].others == 0 {
		t.Logf("note: the frozen holder's command was not seen alive when the waiter started")
	}
}

// TestRecoveryConnectionCut: the connection (through a proxy) is reset
// while the command prints; hoist reconnects through the same target,
// follows the output from where it stopped, prints every line exactly once
// in order and exits with the command's status (7). A waiter on a
// connection of its own gets the lock only after the command's end. Figures:
// from the cut to the client saying it reconnected, and from the command's
// end to the waiter's start.
func TestRecoveryConnectionCut(t *testing.T) {
	t.Parallel()
	h := sshd.Start(t, sshd.Options{})
	r := newRecRig(t, h, "store")
	p := sshd.NewProxy(t, h.Addr)
	viaProxy := *r
	viaProxy.flags = cliFlags(t, h, p.Addr, r.root)
	body := "i=0; while [ $i -lt 30 ]; do echo line $i; i=$((i+1)); sleep 0.1; done"
	a := viaProxy.cli().start(runArgs(nil, nil, r.holder("a00", body, "exit 7"))...)
	waitFor(t, 30*time.Second, "line 10 reaches the client", func() bool { return strings.Contains(a.stdout(), "line 10\n") })
	w := r.cli().start(runArgs(nil, []string{"--wait", "60s"}, r.holder("w01", "true", ""))...)
	p.Cut()
	cut := time.Now()
	waitFor(t, 30*time.Second, "the client reconnects", func() bool {
		select {
		case <-a.done:
			t.Fatalf("the client exited (%d) without reconnecting: %s", a.code, a.stderr())
		default:
		}
		return strings.Contains(a.stderr(), "reconnected")
	})
	reattached := time.Since(cut)
	if code := a.wait(t, 40*time.Second); code != 7 {
		t.Fatalf("exit %d, want 7 (the command's); stderr: %s", code, a.stderr())
	}
	var want strings.Builder
	for i := range 30 {
		fmt.Fprintf(&want, "line %d\n", i)
	}
	if got := a.stdout(); got != want.String() {
		t.Fatalf("output across the reconnect is not every line once, in order:\n%s", got)
	}
	t.Logf("client stderr: %s", strings.TrimSpace(a.stderr()))
	if code := w.wait(t, 30*time.Second); code != 0 {
		t.Fatalf("waiter: exit %d, want 0; stderr: %s", code, w.stderr())
	}
	spans := r.check([]string{"a00", "w01"}, []string{"a00", "w01"})
	figure(t, "connection cut, client reattached", reattached, "first reconnection after 0.5 s, then 1 s, 2 s, ...")
	d := spans["w01"].start.Sub(spans["a00"].end)
	figure(t, "connection cut, lock handed on after the command's end", d, "the host releases at the command's end; a waiter polls every 0.1 s")
	if d > recoveryBound {
		t.Fatalf("the waiter got the lock %s after the command ended, want within %s", d, recoveryBound)
	}
}

// TestRecoveryHealthyHolderKept: a holder with a 4 s lease runs for 13 s,
// more than three leases, while 8 clients wait with --wait 60s: the
// heartbeats keep it, so no waiter starts inside its run, it ends with
// status 0 and no "lock lost", and then the waiters run one at a time.
// Figure: the oldest the record got while it was held (sampled every 50 ms).
func TestRecoveryHealthyHolderKept(t *testing.T) {
	t.Parallel()
	h := sshd.Start(t, sshd.Options{})
	r := newRecRig(t, h, "store")
	global := []string{"--lease", "4s"}
	a := r.cli().start(runArgs(global, nil, r.holder("a00", "sleep 13", ""))...)
	r.waitEntry("start", "a00", 30*time.Second)
	recPath := lockRecord(r.root)
	names := []string{"a00"}
	var waiters []*started
	for i := 1; i <= 8; i++ {
		name := fmt.Sprintf("w%02d", i)
		names = append(names, name)
		waiters = append(waiters, r.cli().start(runArgs(global, []string{"--wait", "60s"}, r.holder(name, "sleep 0.05", ""))...))
	}
	var maxAge time.Duration
	var mu sync.Mutex
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		for {
			select {
			case <-stop:
				return
			case <-time.After(50 * time.Millisecond):
			}
			fi, err := os.Stat(recPath)
			if err != nil {
				return // released (or lost: the journal tells)
			}
			mu.Lock()
			maxAge = max(maxAge, time.Since(fi.ModTime()))
			mu.Unlock()
		}
	}()
	code := a.wait(t, 40*time.Second)
	close(stop)
	<-sampled
	if code != 0 || strings.Contains(a.stderr(), "lock lost") {
		t.Fatalf("the healthy holder: exit %d, want 0 and no lock lost; stderr: %s", code, a.stderr())
	}
	for i, w := range waiters {
		if c := w.wait(t, 60*time.Second); c != 0 {
			t.Fatalf("waiter %d: exit %d; stderr: %s", i+1, c, w.stderr())
		}
		if strings.Contains(w.stderr(), "took over") {
			t.Fatalf("waiter %d took a lock over: %s", i+1, w.stderr())
		}
	}
	spans := r.check(names, names)
	if held := spans["a00"].end.Sub(spans["a00"].start); held < 3*4*time.Second {
		t.Fatalf("the holder held the lock %s, want more than three leases", held)
	}
	first := spans["w01"].start
	for _, n := range names[1:] {
		if spans[n].start.Before(first) {
			first = spans[n].start
		}
	}
	mu.Lock()
	figure(t, "healthy holder (lease 4 s), oldest record while held", maxAge, "renewed every lease/4 = 1000 ms; stale at 4000 ms")
	mu.Unlock()
	figure(t, "healthy holder, first of 8 waiters after its end", first.Sub(spans["a00"].end), "the host releases at the command's end; waiters poll every 0.1 s")
	if maxAge >= 3*time.Second {
		t.Errorf("the record of a healthy holder got %s old, within a second of its lease", maxAge)
	}
}

// TestRecoveryInterrupt: Ctrl-C (SIGINT) to the client of a command that
// left a process in the background: the host stops the whole group and
// releases the lock only once none of its processes is left, which the
// test checks at the moment the lock goes. With the command ignoring
// SIGTERM, the release waits for the SIGKILL after --grace. Figure: from
// SIGINT to the release.
func TestRecoveryInterrupt(t *testing.T) {
	t.Parallel()
	h := sshd.Start(t, sshd.Options{})
	for _, tc := range []struct {
		name, body string
		grace      time.Duration
	}{
		{"interrupt", "sleep 40 & sleep 41; wait", 0},
		{"interrupt, SIGTERM ignored", `trap "" TERM; sleep 40 & sleep 41; wait`, 2 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := newRecRig(t, h, strings.ReplaceAll(strings.ReplaceAll(tc.name, ",", ""), " ", "-"))
			var opts []string
			if tc.grace > 0 {
				opts = []string{"--grace", fmt.Sprint(tc.grace)}
			}
			a := r.cli().start(runArgs(nil, opts, r.holder("a00", tc.body, ""))...)
			r.waitEntry("start", "a00", 30*time.Second)
			// The shell and both sleeps.
			waitFor(t, 10*time.Second, "the command's processes run", func() bool { return len(r.procs("a00")) >= 3 })
			if err := a.cmd.Process.Signal(syscall.SIGINT); err != nil {
				t.Fatal(err)
			}
			sent := time.Now()
			end := sent.Add(30 * time.Second)
			for exists(lockPath(r.root)) {
				if time.Now().After(end) {
					t.Fatalf("the lock is still held 30s after SIGINT; client: %s", a.stderr())
				}
				time.Sleep(2 * time.Millisecond)
			}
			released := time.Since(sent)
			if left := r.procs("a00"); len(left) > 0 {
				t.Fatalf("BUG: the lock was released with processes %v of the command still running", left)
			}
			if code := a.wait(t, 20*time.Second); code != 130 {
				t.Fatalf("exit %d, want 130; stderr: %s", code, a.stderr())
			}
			if !strings.Contains(a.stderr(), "lock released") {
				t.Fatalf("the client does not say the lock was released: %s", a.stderr())
			}
			t.Logf("client stderr: %s", strings.TrimSpace(a.stderr()))
			r.check([]string{"a00"}, nil)
			if _, ended := r.entry("end", "a00"); ended {
				t.Fatal("the stopped command reached its end")
			}
			ref := "SIGTERM to the group at the guardian's next poll, release once it is gone"
			if tc.grace > 0 {
				ref = fmt.Sprintf("SIGKILL after --grace %s (whole seconds), release once the group is gone", tc.grace)
				if released < tc.grace {
					t.Fatalf("released %s after SIGINT, before the grace period %s: the group ignores SIGTERM", released, tc.grace)
				}
			}
			figure(t, tc.name, released, ref)
			if released > tc.grace+recoveryBound {
				t.Fatalf("released %s after SIGINT, want within %s", released, tc.grace+recoveryBound)
			}
		})
	}
}
