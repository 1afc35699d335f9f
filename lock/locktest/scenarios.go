package locktest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"al.essio.dev/pkg/shellescape"

	"github.com/hoistdev/hoist/lock"
	"github.com/hoistdev/hoist/transport"
)

func testAcquireStatusRelease(t *testing.T, e *env) {
	l := e.lock()
	s, err := l.Status(e.ctx())
	must(t, err)
	if s.Store || s.Locked {
		t.Fatalf("fresh root: want no store, got %+v", s)
	}
	if e.exists(e.dir) {
		t.Fatal("status created the root")
	}
	h := e.acquire(l)
	s, err = l.Status(e.ctx())
	must(t, err)
	if !s.Locked || !s.RecordOK || s.Record.Token != h.Token || s.Stealable() {
		t.Fatalf("after acquire: want held by %s, got %+v", h.Token, s)
	}
	if match, known := s.BootMatch(); known && !match {
		t.Fatalf("boot identity does not match the host's: %+v", s)
	}
	must(t, l.Release(e.ctx(), h.Token))
	s, err = l.Status(e.ctx())
	must(t, err)
	if s.Locked || !s.Store {
		t.Fatalf("after release: want free, got %+v", s)
	}
	if err := l.Release(e.ctx(), h.Token); !errors.Is(err, lock.ErrNotHeld) {
		t.Fatalf("second release: want ErrNotHeld, got %v", err)
	}
	if d := e.debris(); len(d) > 0 {
		t.Fatalf("left in the store: %v", d)
	}
}

func testTryMissingStore(t *testing.T, e *env) {
	_, err := e.lock().TryAcquire(e.ctx(), lock.Events{})
	if !errors.Is(err, lock.ErrNoStore) {
		t.Fatalf("want ErrNoStore, got %v", err)
	}
	if e.exists(e.dir) {
		t.Fatal("try-acquire created the root")
	}
}

func testTryBusy(t *testing.T, e *env) {
	a := e.acquire(e.lock())
	_, err := e.lock().TryAcquire(e.ctx(), lock.Events{})
	busy := wantBusy(t, err)
	if busy.Holder.Record.Token != a.Token {
		t.Fatalf("busy error names %q, want the holder %s", busy.Holder.Record.Token, a.Token)
	}
	if e.token() != a.Token {
		t.Fatal("try-acquire changed the lock")
	}
}

func testFreshLockKept(t *testing.T, e *env) {
	a := e.acquire(e.lock())
	e.backdateLock(19 * time.Minute)
	_, err := e.lock().Acquire(e.ctx(), 0, lock.Events{})
	wantBusy(t, err)
	if e.token() != a.Token {
		t.Fatal("a lock younger than the stale rule was taken")
	}
}

func testStaleLockTaken(t *testing.T, e *env) {
	a := e.acquire(e.lock())
	e.backdateLock(21 * time.Minute)
	var stole []lock.State
	b, err := e.lock().Acquire(e.ctx(), 0, lock.Events{Stole: func(s lock.State) { stole = append(stole, s) }})
	must(t, err)
	if b.Stolen == nil || b.Stolen.Why != lock.RuleStale || b.Stolen.Record.Token != a.Token || len(stole) != 1 {
		t.Fatalf("want a stale steal of %s reported once, got %+v (events %d)", a.Token, b.Stolen, len(stole))
	}
	if b.Stolen.Age < 21*time.Minute {
		t.Fatalf("reported age %s, want at least 21m", b.Stolen.Age)
	}
	if e.token() != b.Token {
		t.Fatal("the lock does not carry the new token")
	}
	if d := e.debris(); len(d) > 0 {
		t.Fatalf("left in the store: %v", d)
	}
}

func testOwnerlessLock(t *testing.T, e *env) {
	e.sh("mkdir -p " + q(e.lockDir()))
	_, err := e.lock().Acquire(e.ctx(), 0, lock.Events{})
	busy := wantBusy(t, err)
	if busy.Holder.RecordOK {
		t.Fatalf("an ownerless lock parsed as %+v", busy.Holder.Record)
	}
	e.backdate(e.lockDir(), 21*time.Minute)
	h, err := e.lock().Acquire(e.ctx(), 0, lock.Events{})
	must(t, err)
	if h.Stolen == nil || h.Stolen.Why != lock.RuleStale {
		t.Fatalf("want a stale steal, got %+v", h.Stolen)
	}
}

func testUnparsableRecord(t *testing.T, e *env) {
	// Garbage that mentions another boot must not make the lock stealable.
	e.sh(fmt.Sprintf("mkdir -p %s && printf 'hoist-lock/1 boot=zz token= junk\\n' >%s/owner", q(e.lockDir()), q(e.lockDir())))
	_, err := e.lock().Acquire(e.ctx(), 0, lock.Events{})
	wantBusy(t, err)
	e.backdate(e.lockDir(), 21*time.Minute)
	h, err := e.lock().Acquire(e.ctx(), 0, lock.Events{})
	must(t, err)
	if h.Stolen == nil || h.Stolen.Why != lock.RuleStale {
		t.Fatalf("want a stale steal, got %+v", h.Stolen)
	}
}

func testPreviousBootRecord(t *testing.T, e *env) {
	l := e.lock()
	a := e.acquire(l)
	facts := l.Facts()
	if facts == nil || facts.BootID == "" || facts.Machine == "" {
		t.Skip("this host has no readable boot_id or machine id: the previous-boot rule does not apply")
	}
	// Another boot_id of this machine: its kernel has gone.
	e.editRecord(`s/ boot=[^ ]* / boot=00000000-0000-0000-0000-000000000000 /`)
	var stole lock.State
	b, err := e.lock().Acquire(e.ctx(), 0, lock.Events{Stole: func(s lock.State) { stole = s }})
	must(t, err)
	if b.Stolen == nil || b.Stolen.Why != lock.RuleBoot || b.Stolen.Record.Token != a.Token {
		t.Fatalf("want a previous-boot steal of %s, got %+v", a.Token, b.Stolen)
	}
	if !strings.Contains(stole.Reason(), "previous boot") {
		t.Fatalf("reason does not say why: %q", stole.Reason())
	}
	must(t, e.lock().Release(e.ctx(), b.Token))
	// Evidence that proves nothing keeps the lock: another machine's boot
	// (a store on shared storage), unknown facts, and another PID
	// namespace on this boot (a container sharing the kernel and the
	// store), whatever its PID 1.
	for _, sed := range []string{
		`s/ mach=[^ ]* / mach=other:machine /; s/ boot=[^ ]* / boot=00000000-0000-0000-0000-000000000000 /`,
		`s/ mach=[^ ]* / mach=- /; s/ boot=[^ ]* / boot=00000000-0000-0000-0000-000000000000 /`,
		`s/ boot=[^ ]* / boot=- /`,
		`s/ pidns=[^ ]* / pidns=1 /; s/ init=[^ ]* / init=1 /`,
		`s/ pidns=[^ ]* / pidns=- /; s/ init=[^ ]* / init=1 /`,
	} {
		c := e.acquire(e.lock())
		e.editRecord(sed)
		_, err = e.lock().Acquire(e.ctx(), 0, lock.Events{})
		wantBusy(t, err)
		if e.token() != c.Token {
			t.Fatalf("after %q the lock changed hands", sed)
		}
		_, err = e.lock().Break(e.ctx(), true, c.Token)
		must(t, err)
	}
	// This boot, this PID namespace, another PID 1: the namespace the
	// record was written in has ended.
	if facts.PIDNS != "" && facts.Init != "" {
		c := e.acquire(e.lock())
		e.editRecord(`s/ init=[^ ]* / init=1 /`)
		d, err := e.lock().Acquire(e.ctx(), 0, lock.Events{})
		must(t, err)
		if d.Stolen == nil || d.Stolen.Why != lock.RuleBoot || d.Stolen.Record.Token != c.Token {
			t.Fatalf("want a steal of a replaced namespace's lock, got %+v", d.Stolen)
		}
	}
}

// An earlier version's lock (a directory with an "owner" record) is read,
// reported, and taken by the age rule only, whatever its boot says.
func testEarlierVersionLock(t *testing.T, e *env) {
	tok := "0f0e0d0c-0b0a-4908-8706-050403020100"
	e.sh(fmt.Sprintf("mkdir -p %s && printf 'hoist-lock/1 token=%s boot=x:y/1 since=1 pid=1 who=old ver=0 cmd=x msg=\\n' >%s/owner",
		q(e.lockDir()), tok, q(e.lockDir())))
	_, err := e.lock().Acquire(e.ctx(), 0, lock.Events{})
	busy := wantBusy(t, err)
	if !busy.Holder.RecordOK || busy.Holder.Record.Token != tok || busy.Holder.Record.Format != 1 {
		t.Fatalf("an earlier version's record read as %+v", busy.Holder)
	}
	e.backdate(e.lockDir(), 21*time.Minute)
	h, err := e.lock().Acquire(e.ctx(), 0, lock.Events{})
	must(t, err)
	if h.Stolen == nil || h.Stolen.Why != lock.RuleStale || h.Stolen.Record.Token != tok {
		t.Fatalf("want a stale steal of %s, got %+v", tok, h.Stolen)
	}
	if e.token() != h.Token {
		t.Fatal("the new lock does not carry the new token")
	}
}

// A lock directory whose token has no record is what a release or a steal
// leaves between its two steps: nobody holds it, and it is taken at once.
func testDeadLockIsTakenAtOnce(t *testing.T, e *env) {
	e.sh(fmt.Sprintf("mkdir -p %s/0f0e0d0c-0b0a-4908-8706-050403020100", q(e.lockDir())))
	h, err := e.lock().Acquire(e.ctx(), 0, lock.Events{})
	must(t, err)
	if h.Stolen != nil || e.token() != h.Token {
		t.Fatalf("dead lock: want a plain acquire, got %+v (holder %q)", h.Stolen, e.token())
	}
}

// Something hoist does not put in a lock makes it not hoist's: refused,
// never touched, by every operation.
func testForeignEntryInLockRefused(t *testing.T, e *env) {
	e.sh(fmt.Sprintf("mkdir -p %s && echo mine >%s/precious", q(e.lockDir()), q(e.lockDir())))
	e.backdate(e.lockDir(), 21*time.Minute)
	for name, op := range map[string]func() error{
		"acquire": func() error { _, err := e.lock().Acquire(e.ctx(), 0, lock.Events{}); return err },
		"break":   func() error { _, err := e.lock().Break(e.ctx(), true, "-"); return err },
		"status":  func() error { _, err := e.lock().Status(e.ctx()); return err },
	} {
		if err := op(); !errors.Is(err, lock.ErrLockPath) {
			t.Fatalf("%s: want ErrLockPath, got %v", name, err)
		}
	}
	if got := e.sh("cat " + q(e.lockDir()+"/precious")); got != "mine\n" {
		t.Fatalf("the foreign file was touched: %q", got)
	}
}

func testReleaseKeepsSuccessor(t *testing.T, e *env) {
	old := e.lock()
	a := e.acquire(old)
	e.backdateLock(21 * time.Minute)
	b := e.acquire(e.lock())
	err := old.Release(e.ctx(), a.Token)
	var lost *lock.LostError
	if !errors.As(err, &lost) || lost.Holder.Record.Token != b.Token {
		t.Fatalf("release of a taken-over lock: want LostError naming %s, got %v", b.Token, err)
	}
	if e.token() != b.Token {
		t.Fatal("the successor's lock was removed")
	}
}

func testHostReleaseKeepsSuccessor(t *testing.T, e *env) {
	old := e.lock()
	mark, goOn := e.dir+"/started", e.dir+"/go"
	var res *lock.RunResult
	var runErr error
	done := make(chan struct{})
	go func() {
		defer close(done)
		script := "touch " + q(mark) + "; while [ ! -e " + q(goOn) + " ]; do sleep 0.1; done"
		res, runErr = old.Run(e.ctx(), []string{"sh", "-c", script}, lock.RunOptions{})
	}()
	waitFor(t, 20*time.Second, func() bool { return e.exists(mark) })
	e.backdateLock(21 * time.Minute)
	b := e.acquire(e.lock())
	if b.Stolen == nil {
		t.Fatal("the running command's lock was not taken as stale")
	}
	e.sh("touch " + q(goOn))
	<-done
	must(t, runErr)
	if res.Lost == nil || res.Lost.Holder.Record.Token != b.Token {
		t.Fatalf("want the run to report the lock lost to %s, got %+v", b.Token, res.Lost)
	}
	if e.token() != b.Token {
		t.Fatal("the host-side release removed the successor's lock")
	}
}

func testStealRace(t *testing.T, e *env) {
	e.acquire(e.lock())
	e.backdateLock(21 * time.Minute)
	const n = 16
	locks := make([]*lock.Lock, n)
	for i := range locks {
		locks[i] = e.lock()
	}
	var wins, busy atomic.Int32
	var wg sync.WaitGroup
	for _, l := range locks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := l.Acquire(e.ctx(), 0, lock.Events{})
			switch {
			case err == nil:
				wins.Add(1)
			case errors.Is(err, lock.ErrBusy):
				busy.Add(1)
			default:
				t.Errorf("stealer: %v", err)
			}
		}()
	}
	wg.Wait()
	if wins.Load() != 1 || busy.Load() != n-1 {
		t.Fatalf("%d stealers: %d won, %d busy; want exactly one winner", n, wins.Load(), busy.Load())
	}
	if d := e.debris(); len(d) > 0 {
		t.Fatalf("left in the store: %v", d)
	}
}

func testWaiterHandoff(t *testing.T, e *env) {
	first := e.lock()
	a := e.acquire(first)
	var waiting atomic.Int32
	got := make(chan error, 1)
	go func() {
		_, err := e.lock().Acquire(e.ctx(), time.Minute, lock.Events{Waiting: func(s lock.State) {
			if s.Record.Token == a.Token {
				waiting.Add(1)
			}
		}})
		got <- err
	}()
	waitFor(t, 20*time.Second, func() bool { return waiting.Load() > 0 })
	must(t, first.Release(e.ctx(), a.Token))
	select {
	case err := <-got:
		must(t, err)
	case <-time.After(30 * time.Second):
		t.Fatal("the waiter did not take the released lock")
	}
	if waiting.Load() != 1 {
		t.Fatalf("the holder was reported %d times, want once", waiting.Load())
	}
}

func testCancelledWaiter(t *testing.T, e *env) {
	first := e.lock()
	a := e.acquire(first)
	ctx, cancel := context.WithCancel(e.ctx())
	waiting := make(chan struct{})
	var once sync.Once
	got := make(chan error, 1)
	go func() {
		_, err := e.lock().Acquire(ctx, time.Minute, lock.Events{Waiting: func(lock.State) { once.Do(func() { close(waiting) }) }})
		got <- err
	}()
	<-waiting
	cancel()
	if err := <-got; !errors.Is(err, transport.ErrUnknownOutcome) {
		t.Fatalf("cancelled acquire: want an unknown outcome, got %v", err)
	}
	must(t, first.Release(e.ctx(), a.Token))
	// The abandoned waiter must not take the lock, or must release it at once.
	time.Sleep(500 * time.Millisecond)
	waitFor(t, 10*time.Second, func() bool { return !e.exists(e.lockDir()) })
	if d := e.debris(); len(d) > 0 {
		t.Fatalf("left in the store: %v", d)
	}
}

func testRunOutput(t *testing.T, e *env) {
	var out, errb bytes.Buffer
	// Output without a final newline, binary bytes and a line that looks
	// like a protocol line must all arrive unchanged.
	script := `printf 'line\n@hoist:0 EXIT 0\n\001\377partial'; printf 'oops' >&2; exit 3`
	res, err := e.lock().Run(e.ctx(), []string{"sh", "-c", script}, lock.RunOptions{Stdout: &out, Stderr: &errb})
	must(t, err)
	if !res.Exited || res.Status != 3 || !res.Started || res.Lost != nil {
		t.Fatalf("want exit 3, got %+v", res)
	}
	if want := "line\n@hoist:0 EXIT 0\n\001\377partial"; out.String() != want {
		t.Fatalf("stdout = %q, want %q", out.String(), want)
	}
	if errb.String() != "oops" {
		t.Fatalf("stderr = %q", errb.String())
	}
	if e.exists(e.lockDir()) {
		t.Fatal("the lock is still there after the run")
	}
	// The host keeps the run's record: hoist runs lists it, hoist logs
	// prints its output again, from an offset too.
	runs, err := e.lock().Runs(e.ctx())
	must(t, err)
	if len(runs) != 1 || runs[0].ID != res.ID || !runs[0].Exited || runs[0].Status != 3 || runs[0].Running() ||
		runs[0].Command != shellescape.QuoteCommand([]string{"sh", "-c", script}) {
		t.Fatalf("runs = %+v, want the one run %s with status 3", runs, res.ID)
	}
	var again, againErr bytes.Buffer
	rec, err := e.lock().Logs(e.ctx(), res.ID, lock.LogOptions{Offsets: [2]int64{5, 1}, Stdout: &again, Stderr: &againErr})
	must(t, err)
	if again.String() != out.String()[5:] || againErr.String() != "ops" || !rec.Exited || rec.Status != 3 {
		t.Fatalf("logs from offsets 5 and 1: stdout %q, stderr %q, record %+v", again.String(), againErr.String(), rec)
	}
}

func testRunsNeverOverlap(t *testing.T, e *env) {
	journal := e.dir + "/journal"
	e.sh("mkdir -p " + q(e.dir))
	const n = 8
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			script := fmt.Sprintf("echo start %d >>%s; sleep 0.1; echo end %d >>%s", i, q(journal), i, q(journal))
			res, err := e.lock().Run(e.ctx(), []string{"sh", "-c", script}, lock.RunOptions{Wait: time.Minute})
			if err != nil || res.Status != 0 {
				t.Errorf("run %d: %v %+v", i, err, res)
			}
		}()
	}
	wg.Wait()
	CheckJournal(t, e.sh("cat "+q(journal)), n)
}

// CheckJournal fails unless journal holds n "start ID" / "end ID" pairs
// that never interleave: proof that n commands ran one at a time.
func CheckJournal(t *testing.T, journal string, n int) {
	t.Helper()
	lines := strings.Fields(strings.ReplaceAll(journal, "\n", " "))
	if len(lines) != 4*n {
		t.Fatalf("journal has %d words, want %d:\n%s", len(lines), 4*n, journal)
	}
	for i := 0; i < len(lines); i += 4 {
		if lines[i] != "start" || lines[i+2] != "end" || lines[i+1] != lines[i+3] {
			t.Fatalf("runs overlapped at entry %d:\n%s", i/4, journal)
		}
	}
}

func testHostReleasesAfterDetach(t *testing.T, e *env) {
	done := e.dir + "/done"
	ctx, cancel := context.WithCancel(e.ctx())
	started := make(chan struct{})
	var res *lock.RunResult
	var err error
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		res, err = e.lock().Run(ctx, []string{"sh", "-c", "sleep 1; echo after; touch " + q(done)},
			lock.RunOptions{Events: lock.Events{Started: func() { close(started) }}})
	}()
	<-started
	cancel()
	<-finished
	if !errors.Is(err, transport.ErrUnknownOutcome) || !res.Started {
		t.Fatalf("detached run: want unknown outcome after start, got %v %+v", err, res)
	}
	if !e.exists(e.lockDir()) {
		t.Fatal("the lock was released while the command still ran")
	}
	waitFor(t, 20*time.Second, func() bool { return e.exists(done) })
	waitFor(t, 2*time.Second, func() bool { return !e.exists(e.lockDir()) })
	// The output the client never received is kept on the host.
	if out := e.sh(fmt.Sprintf("cat %s/runs/%s/out", q(e.dir), res.Token)); out != "after\n" {
		t.Fatalf("kept output = %q", out)
	}
}

func testStopRequest(t *testing.T, e *env) {
	stop := make(chan struct{})
	res, err := e.lock().Run(e.ctx(), []string{"sleep", "30"}, lock.RunOptions{
		Stop:   stop,
		Events: lock.Events{Started: func() { close(stop) }},
	})
	must(t, err)
	if !res.Exited || res.Status != 143 {
		t.Fatalf("stopped command: want exit 143 (SIGTERM), got %+v", res)
	}
	if e.exists(e.lockDir()) {
		t.Fatal("the lock is still there after the stopped run")
	}
}

func testBadLockPath(t *testing.T, e *env) {
	e.sh(fmt.Sprintf("mkdir -p %s && echo keep >%s", q(e.store()), q(e.lockDir())))
	_, err := e.lock().Acquire(e.ctx(), 0, lock.Events{})
	if !errors.Is(err, lock.ErrLockPath) {
		t.Fatalf("lock path is a file: want ErrLockPath, got %v", err)
	}
	if got := e.sh("cat " + q(e.lockDir())); got != "keep\n" {
		t.Fatalf("the file was touched: %q", got)
	}
	target := e.dir + "/elsewhere"
	e.sh(fmt.Sprintf("rm %s && mkdir -p %s && ln -s %s %s", q(e.lockDir()), q(target), q(target), q(e.lockDir())))
	for _, op := range []func() error{
		func() error { _, err := e.lock().Acquire(e.ctx(), 0, lock.Events{}); return err },
		func() error { _, err := e.lock().Break(e.ctx(), true, "-"); return err },
		func() error { _, err := e.lock().Status(e.ctx()); return err },
	} {
		if err := op(); !errors.Is(err, lock.ErrLockPath) {
			t.Fatalf("lock path is a symlink: want ErrLockPath, got %v", err)
		}
	}
	if got := strings.TrimSpace(e.sh("ls -A " + q(target))); got != "" {
		t.Fatalf("something was written through the symlink: %q", got)
	}
}

func testBreak(t *testing.T, e *env) {
	l := e.lock()
	a := e.acquire(l)
	if _, err := l.Break(e.ctx(), false, ""); !errors.Is(err, lock.ErrNotStealable) {
		t.Fatalf("break of a fresh lock: want ErrNotStealable, got %v", err)
	}
	if _, err := l.Break(e.ctx(), true, "not-a-token"); err == nil || !strings.Contains(err.Error(), "not a lock token") {
		t.Fatalf("forced break with a malformed token: want it refused before reaching the host, got %v", err)
	}
	if _, err := l.Break(e.ctx(), true, "0f0e0d0c-0b0a-4908-8706-050403020100"); !errors.Is(err, lock.ErrNotOwner) {
		t.Fatalf("forced break with another token: want ErrNotOwner, got %v", err)
	}
	s, err := l.Break(e.ctx(), true, a.Token)
	must(t, err)
	if s.Record.Token != a.Token || e.exists(e.lockDir()) {
		t.Fatalf("forced break: %+v, lock still there: %v", s, e.exists(e.lockDir()))
	}
	b := e.acquire(l)
	e.backdateLock(21 * time.Minute)
	s, err = l.Break(e.ctx(), false, "")
	must(t, err)
	if s.Why != lock.RuleStale || s.Record.Token != b.Token {
		t.Fatalf("break of a stale lock: %+v", s)
	}
	if _, err := l.Break(e.ctx(), false, ""); !errors.Is(err, lock.ErrNotHeld) {
		t.Fatalf("break of no lock: want ErrNotHeld, got %v", err)
	}
	if d := e.debris(); len(d) > 0 {
		t.Fatalf("left in the store: %v", d)
	}
}

func testHostileRoot(t *testing.T, e *env) {
	pwned := e.dir + "/pwned"
	name := "sp ace 'q\"uote $(touch " + pwned + ") `touch " + pwned + "` ;x\nnew\\line -n"
	hostile := e.dir + "/" + name + "/-rf"
	e.root = lock.Root{Path: hostile}
	l := e.lock()
	h := e.acquire(l)
	s, err := l.Status(e.ctx())
	must(t, err)
	if s.Record.Token != h.Token {
		t.Fatalf("status under a hostile root: %+v", s)
	}
	must(t, l.Release(e.ctx(), h.Token))
	res, err := l.Run(e.ctx(), []string{"printf", "%s", "$(touch " + pwned + ")"}, lock.RunOptions{})
	must(t, err)
	if res.Status != 0 {
		t.Fatalf("run under a hostile root: %+v", res)
	}
	if e.exists(pwned) {
		t.Fatal("a value was executed as shell code")
	}
	if !e.exists(hostile + "/runtimes") {
		t.Fatal("the store is not at the literal path")
	}
}

// A command line far over the 128 KiB a single argument may have on Linux
// runs: the fragment travels on standard input, not as an argument.
func testLargeCommandLine(t *testing.T, e *env) {
	argv := []string{"sh", "-c", `n=0; for a in "$@"; do n=$((n + ${#a})); done; echo "$# $n"`, "sh"}
	for range 24 {
		argv = append(argv, strings.Repeat("x", 10000))
	}
	var out bytes.Buffer
	res, err := e.lock().Run(e.ctx(), argv, lock.RunOptions{Stdout: &out})
	must(t, err)
	if res.Status != 0 || out.String() != "24 240000\n" {
		t.Fatalf("a 240 KB command line: status %d, output %q", res.Status, out.String())
	}
}

func waitFor(t *testing.T, d time.Duration, cond func() bool) {
	t.Helper()
	end := time.Now().Add(d)
	for !cond() {
		if time.Now().After(end) {
			t.Fatalf("condition not met within %s", d)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
