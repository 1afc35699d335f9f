package shellcmd

// Holder processes: the checks of proc.sh (h_gone, h_gsig, h_grplive,
// h_cmdalive) and the exited rule that rests on them (h_exited, through
// h_sample and h_stealable). The processes are real: sleeps these tests
// start, kill, reap or leave unreaped (zombies).

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// fnStat reads /proc/PID/stat: the state, the process group and the start
// time (field 22), as h_pstat does.
func fnStat(pid int) (state string, pgrp int, start string, err error) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return "", 0, "", err
	}
	s := string(data)
	i := strings.LastIndex(s, ") ")
	var f []string
	if i >= 0 {
		f = strings.Fields(s[i+2:])
	}
	if len(f) < 20 {
		return "", 0, "", fmt.Errorf("cannot read /proc/%d/stat: %q", pid, s)
	}
	pgrp, err = strconv.Atoi(f[2])
	return f[0], pgrp, f[19], err
}

// fnProc is a process this test started; a cleanup kills and reaps it.
type fnProc struct {
	cmd    *exec.Cmd
	pid    int
	start  string // its start time, field 22 of /proc/<pid>/stat
	reaped bool
}

// fnStart starts argv (which has exec'd when it returns: os.StartProcess
// waits for that) with attr, and reads its start time.
func fnStart(t *testing.T, attr *syscall.SysProcAttr, argv ...string) *fnProc {
	t.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.SysProcAttr = attr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &fnProc{cmd: cmd, pid: cmd.Process.Pid}
	t.Cleanup(func() {
		if !p.reaped {
			p.cmd.Process.Kill()
			p.cmd.Wait()
		}
	})
	var err error
	if _, _, p.start, err = fnStat(p.pid); err != nil {
		t.Fatal(err)
	}
	return p
}

func fnSleep(t *testing.T, attr *syscall.SysProcAttr) *fnProc {
	return fnStart(t, attr, "sleep", "300")
}

// kill kills p and reaps it: its pid is gone from /proc.
func (p *fnProc) kill(t *testing.T) {
	t.Helper()
	p.cmd.Process.Kill()
	p.cmd.Wait()
	p.reaped = true
	if _, err := os.Stat("/proc/" + strconv.Itoa(p.pid)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("process %d still in /proc after it was reaped: %v", p.pid, err)
	}
}

// zombie kills p and leaves it unreaped (its parent, this test, does not
// wait for it until the cleanup), and waits until /proc shows it a zombie.
func (p *fnProc) zombie(t *testing.T) {
	t.Helper()
	p.cmd.Process.Signal(syscall.SIGKILL)
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		state, _, _, err := fnStat(p.pid)
		if err != nil {
			t.Fatal(err)
		}
		if state == "Z" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("process %d killed and not reaped is %s, not a zombie", p.pid, state)
		}
	}
}

// fnNewGroup is a process started as the leader of a group of its own;
// fnJoin starts one in the group of leader.
var (
	fnNewGroup = &syscall.SysProcAttr{Setpgid: true}
	fnSession  = &syscall.SysProcAttr{Setsid: true} // as setsid starts a run's command
)

func fnJoin(leader *fnProc) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pgid: leader.pid}
}

// fnAllZombieGroup is a group (its pgid) whose leader exited and was
// reaped, leaving one member that exited and nobody reaped: a zombie, the
// group's only process.
func fnAllZombieGroup(t *testing.T) int {
	t.Helper()
	leader := fnSleep(t, fnNewGroup)
	member := fnSleep(t, fnJoin(leader))
	if _, g, _, err := fnStat(member.pid); err != nil || g != leader.pid {
		t.Fatalf("member %d is in group %d, want %d: %v", member.pid, g, leader.pid, err)
	}
	member.zombie(t)
	leader.kill(t)
	return leader.pid
}

// fnPair makes a group of two sleeping processes, a leader and a member,
// and then gives the member, and then the leader, its fate (nil: it stays
// alive); the group's id is the leader's pid.
func fnPair(leader, member func(*fnProc, *testing.T)) func(t *testing.T) int {
	return func(t *testing.T) int {
		l := fnSleep(t, fnNewGroup)
		m := fnSleep(t, fnJoin(l))
		if member != nil {
			member(m, t)
		}
		if leader != nil {
			leader(l, t)
		}
		return l.pid
	}
}

// fnGoneGroup is the pgid of a group whose every process was reaped.
func fnGoneGroup(t *testing.T) int {
	t.Helper()
	p := fnSleep(t, fnSession)
	p.kill(t)
	return p.pid
}

// TestShProcGone: h_gone on real processes: a reaped one is gone, a live
// one with its start time is not, a live one with another start time (its
// pid was reused) and a zombie are. A command name with ") " in it does not
// confuse the reading of /proc/<pid>/stat.
func TestShProcGone(t *testing.T) {
	odd := filepath.Join(t.TempDir(), "x) Z 1 2 3")
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(sleep, odd); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		proc func(t *testing.T) (pid, start string)
		gone bool
	}{
		{"reaped", func(t *testing.T) (string, string) {
			p := fnSleep(t, nil)
			p.kill(t)
			return fnItoa(p.pid), p.start
		}, true},
		{"alive", func(t *testing.T) (string, string) {
			p := fnSleep(t, nil)
			return fnItoa(p.pid), p.start
		}, false},
		{"alive, another start time (pid reused)", func(t *testing.T) (string, string) {
			p := fnSleep(t, nil)
			n, _ := strconv.Atoi(p.start)
			return fnItoa(p.pid), fnItoa(n + 1)
		}, true},
		{"alive, an earlier start time", func(t *testing.T) (string, string) {
			p := fnSleep(t, nil)
			n, _ := strconv.Atoi(p.start)
			return fnItoa(p.pid), fnItoa(n - 1)
		}, true},
		{"zombie", func(t *testing.T) (string, string) {
			p := fnSleep(t, nil)
			p.zombie(t)
			return fnItoa(p.pid), p.start
		}, true},
		{"alive, named with a parenthesis and a state", func(t *testing.T) (string, string) {
			p := fnStart(t, nil, odd, "300")
			if comm, _ := os.ReadFile("/proc/" + fnItoa(p.pid) + "/comm"); string(comm) != "x) Z 1 2 3\n" {
				t.Fatalf("comm is %q", comm)
			}
			return fnItoa(p.pid), p.start
		}, false},
		{"zombie, named with a parenthesis and a state", func(t *testing.T) (string, string) {
			p := fnStart(t, nil, odd, "300")
			p.zombie(t)
			return fnItoa(p.pid), p.start
		}, true},
		{"init, alive", func(t *testing.T) (string, string) {
			_, _, start, err := fnStat(1)
			if err != nil {
				t.Fatal(err)
			}
			return "1", start
		}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			pid, start := c.proc(t)
			fnShells(t, func(t *testing.T, sh []string, root string) {
				r := fnRun{fns: []string{"h_gone"}, call: fnCall(`h_gone "`+pid+`" "`+start+`"`, "h_pstate", "h_pst")}.do(t, sh, root)
				if got := r.rc == 0; got != c.gone || r.rc > 1 {
					v, _ := fnShown(r)
					t.Errorf("%s: h_gone %s %s returned %d (state %q, start %q), want gone %v", sh[0], pid, start, r.rc,
						v["h_pstate"], v["h_pst"], c.gone)
				}
			})
		})
	}
}

// TestShProcGroup: h_gsig and h_grplive on real process groups: a group
// with a live process is alive; one whose processes were all reaped is
// gone ("No such process"); one whose only processes are zombies (its
// leader reaped, a member unreaped) still takes kill -0, and h_grplive's
// scan of /proc counts it gone; a zombie leader with a live member is alive.
func TestShProcGroup(t *testing.T) {
	cases := []struct {
		name   string
		group  func(t *testing.T) int
		sig    int  // h_gsig 0's status
		nosuch bool // h_gerr says "No such process"
		live   bool // h_grplive
	}{
		{"a live session leader", func(t *testing.T) int { return fnSleep(t, fnSession).pid }, 0, false, true},
		{"a live group of two", fnPair(nil, nil), 0, false, true},
		{"leader reaped, a member alive", fnPair((*fnProc).kill, nil), 0, false, true},
		{"leader a zombie, a member alive", fnPair((*fnProc).zombie, nil), 0, false, true},
		{"all reaped", fnGoneGroup, 1, true, false},
		// kill -0 reaches zombies: only the scan of /proc tells.
		{"leader reaped, its only member a zombie", fnAllZombieGroup, 0, false, false},
		{"leader and member zombies", fnPair((*fnProc).zombie, (*fnProc).zombie), 0, false, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := fnItoa(c.group(t))
			fnShells(t, func(t *testing.T, sh []string, root string) {
				r := fnRun{fns: []string{"h_gsig", "h_grplive"},
					call: fnCall("h_gsig 0 "+g+"\nh_t_sig=$?\nh_grplive "+g, "h_t_sig", "h_gerr")}.do(t, sh, root)
				v, _ := fnShown(r)
				if v["h_t_sig"] != fnItoa(c.sig) {
					t.Errorf("%s: h_gsig 0 %s returned %s (%q), want %d", sh[0], g, v["h_t_sig"], v["h_gerr"], c.sig)
				}
				if c.sig != 0 && c.nosuch != strings.Contains(v["h_gerr"], "No such process") {
					t.Errorf("%s: h_gsig 0 %s: h_gerr = %q, want \"No such process\" %v", sh[0], g, v["h_gerr"], c.nosuch)
				}
				if got := r.rc == 0; got != c.live || r.rc > 1 {
					t.Errorf("%s: h_grplive %s returned %d, want live %v", sh[0], g, r.rc, c.live)
				}
			})
		})
	}
	// A signal reaches the whole group, in every shell's kill syntax.
	fnShells(t, func(t *testing.T, sh []string, root string) {
		l := fnSleep(t, fnNewGroup)
		m := fnSleep(t, fnJoin(l))
		r := fnRun{fns: []string{"h_gsig"}, call: fnCall("h_gsig TERM "+fnItoa(l.pid), "h_gerr")}.do(t, sh, root)
		if r.rc != 0 {
			v, _ := fnShown(r)
			t.Errorf("%s: h_gsig TERM returned %d: %q", sh[0], r.rc, v["h_gerr"])
		}
		// A group the signal missed is killed after a while, not waited
		// for all its sleep.
		timer := time.AfterFunc(10*time.Second, func() {
			l.cmd.Process.Kill()
			m.cmd.Process.Kill()
		})
		defer timer.Stop()
		for _, p := range []*fnProc{l, m} {
			err := p.cmd.Wait()
			p.reaped = true
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGTERM {
				t.Errorf("%s: process %d of the group ended with %v, want SIGTERM", sh[0], p.pid, err)
			}
		}
	})
}

// fnScr makes what a run record's pgid file is, under scr (runs/<token>):
// a file with given content, or something that cannot be read.
type fnScr func(t *testing.T, scr string)

func fnPgid(content string) fnScr {
	return func(t *testing.T, scr string) { fnWrite(t, scr+"/pgid", content) }
}

var (
	fnPgidDir      fnScr = func(t *testing.T, scr string) { fnMkdir(t, scr+"/pgid") }
	fnPgidDangling fnScr = func(t *testing.T, scr string) {
		fnMkdir(t, scr)
		if err := os.Symlink("nowhere", scr+"/pgid"); err != nil {
			t.Fatal(err)
		}
	}
	fnPgidUnreadable fnScr = func(t *testing.T, scr string) {
		fnNotRoot(t)
		fnWrite(t, scr+"/pgid", "g 1\n")
		if err := os.Chmod(scr+"/pgid", 0); err != nil {
			t.Fatal(err)
		}
	}
)

// TestShProcCmdAlive: h_cmdalive reads the run's pgid file: "g PGID" is
// alive while the group has a process that is not a zombie, "p PID" while
// that process is there; "-" (the command is starting), an empty, odd or
// unreadable file, or none, is doubt: alive. The same with a file of the
// command's own for kill's messages (h_kf, which then has the message of a
// group or process gone) and with one that cannot be written (kill's
// message comes through a command substitution).
func TestShProcCmdAlive(t *testing.T) {
	cases := []struct {
		name string
		scr  func(t *testing.T) fnScr
		live bool
	}{
		{"g, live group", func(t *testing.T) fnScr { return fnPgid("g " + fnItoa(fnSleep(t, fnSession).pid) + "\n") }, true},
		{"g, group gone", func(t *testing.T) fnScr { return fnPgid("g " + fnItoa(fnGoneGroup(t)) + "\n") }, false},
		{"g, only a zombie left", func(t *testing.T) fnScr { return fnPgid("g " + fnItoa(fnAllZombieGroup(t)) + "\n") }, false},
		{"g without a newline", func(t *testing.T) fnScr { return fnPgid("g " + fnItoa(fnGoneGroup(t))) }, true},
		{"p, live process", func(t *testing.T) fnScr { return fnPgid("p " + fnItoa(fnSleep(t, nil).pid) + "\n") }, true},
		{"p, process gone", func(t *testing.T) fnScr {
			p := fnSleep(t, nil)
			p.kill(t)
			return fnPgid("p " + fnItoa(p.pid) + "\n")
		}, false},
		{"starting", func(*testing.T) fnScr { return fnPgid("-\n") }, true},
		{"empty", func(*testing.T) fnScr { return fnPgid("") }, true},
		{"odd kind", func(t *testing.T) fnScr { return fnPgid("x " + fnItoa(fnGoneGroup(t)) + "\n") }, true},
		{"odd pgid", func(*testing.T) fnScr { return fnPgid("g abc\n") }, true},
		{"no pgid file", func(*testing.T) fnScr { return func(t *testing.T, scr string) { fnMkdir(t, scr) } }, true},
		{"pgid is a directory", func(*testing.T) fnScr { return fnPgidDir }, true},
		{"pgid is a dangling symlink", func(*testing.T) fnScr { return fnPgidDangling }, true},
		{"pgid unreadable", func(*testing.T) fnScr { return fnPgidUnreadable }, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			scr := c.scr(t)
			fnShells(t, func(t *testing.T, sh []string, root string) {
				_, _, runs := fnPaths(root)
				scr(t, runs+"/"+fnMe)
				for _, kf := range []string{"", root + "/kill", root + "/nowhere/kill"} {
					r := fnRun{fns: []string{"h_cmdalive"}, vars: map[string]string{"h_scr": runs + "/" + fnMe, "h_kf": kf},
						call: fnCall("h_cmdalive", "h_gerr")}.do(t, sh, root)
					v, _ := fnShown(r)
					if got := r.rc == 0; got != c.live || r.rc > 1 {
						t.Errorf("%s, h_kf %q: h_cmdalive returned %d (h_gerr %q), want alive %v", sh[0], kf, r.rc, v["h_gerr"], c.live)
					}
					if !strings.HasSuffix(c.name, " gone") {
						continue
					}
					if !strings.Contains(strings.ToLower(v["h_gerr"]), "no such process") {
						t.Errorf("%s, h_kf %q: h_gerr = %q, want kill's \"No such process\"", sh[0], kf, v["h_gerr"])
					}
					if kf == root+"/kill" {
						if b, err := os.ReadFile(kf); err != nil || !strings.Contains(strings.ToLower(string(b)), "no such process") {
							t.Errorf("%s: h_kf holds %q (%v), want kill's message", sh[0], b, err)
						}
						os.Remove(kf)
					}
				}
			})
		})
	}
}

// fnHolder is the holder process a record names: its hpid and hstart.
type fnHolder func(t *testing.T) (hpid, hstart string)

var (
	fnManual fnHolder = func(*testing.T) (string, string) { return "-", "-" }
	fnLive   fnHolder = func(t *testing.T) (string, string) {
		p := fnSleep(t, nil)
		return fnItoa(p.pid), p.start
	}
	fnReaped fnHolder = func(t *testing.T) (string, string) {
		p := fnSleep(t, nil)
		p.kill(t)
		return fnItoa(p.pid), p.start
	}
	fnReused fnHolder = func(t *testing.T) (string, string) {
		p := fnSleep(t, nil)
		n, _ := strconv.Atoi(p.start)
		return fnItoa(p.pid), fnItoa(n + 1)
	}
	fnZombie fnHolder = func(t *testing.T) (string, string) {
		p := fnSleep(t, nil)
		p.zombie(t)
		return fnItoa(p.pid), p.start
	}
)

// TestShExited: the exited rule, through h_sample and h_stealable on real
// lock directories and real processes. It fires only for a record that
// names its holder process (hpid and hstart), of this boot, this PID
// namespace and this login, when that process is gone (reaped, a zombie,
// or its pid now another process's) and the run's group file names no live
// group (or there is no run record). h_pwhy says what was found.
func TestShExited(t *testing.T) {
	other := strconv.Itoa(os.Getuid() + 1)
	noRun := func(*testing.T) fnScr { return nil }
	group := func(kind string, pid func(t *testing.T) int) func(*testing.T) fnScr {
		return func(t *testing.T) fnScr { return fnPgid(kind + " " + fnItoa(pid(t)) + "\n") }
	}
	live := func(t *testing.T) int { return fnSleep(t, fnSession).pid }
	reaped := func(t *testing.T) int {
		p := fnSleep(t, nil)
		p.kill(t)
		return p.pid
	}
	fixed := func(s fnScr) func(*testing.T) fnScr { return func(*testing.T) fnScr { return s } }
	cases := []struct {
		name   string
		holder fnHolder
		rec    func(f *fnFields) // changes to a record of this host
		vars   map[string]string
		defs   string
		scr    func(t *testing.T) fnScr // the run record, nil for none
		why    string
		pwhy   string
	}{
		// It fires.
		{name: "holder reaped, no run record", holder: fnReaped, scr: noRun, why: "exited", pwhy: "exited"},
		{name: "holder reaped, its group gone", holder: fnReaped, scr: group("g", fnGoneGroup), why: "exited", pwhy: "exited"},
		{name: "holder reaped, only a zombie left in its group", holder: fnReaped, scr: group("g", fnAllZombieGroup), why: "exited", pwhy: "exited"},
		{name: "holder reaped, its process gone (no setsid)", holder: fnReaped, scr: group("p", reaped), why: "exited", pwhy: "exited"},
		{name: "holder reaped, run record without a pgid file", holder: fnReaped,
			scr: fixed(func(t *testing.T, scr string) { fnMkdir(t, scr) }), why: "exited", pwhy: "exited"},
		{name: "pid alive with another start time", holder: fnReused, scr: noRun, why: "exited", pwhy: "exited"},
		{name: "pid alive with another start time, its group gone", holder: fnReused, scr: group("g", fnGoneGroup), why: "exited", pwhy: "exited"},
		{name: "holder a zombie", holder: fnZombie, scr: noRun, why: "exited", pwhy: "exited"},
		{name: "holder reaped, a lease of its own", holder: fnReaped, rec: func(f *fnFields) { f.lease = "60" }, scr: noRun, why: "exited", pwhy: "exited"},
		// It does not.
		{name: "manual hold", holder: fnManual, scr: noRun, pwhy: "none"},
		// A record written where /proc was not the namespace's names its
		// holder's pid, not its start time.
		{name: "holder reaped, no hstart", holder: fnReaped, rec: func(f *fnFields) { f.hstart = "-" }, scr: noRun, pwhy: "unknown"},
		{name: "holder reaped, no hpid", holder: fnReaped, rec: func(f *fnFields) { f.hpid = "-" }, scr: noRun, pwhy: "none"},
		{name: "holder reaped, odd hpid", holder: fnReaped, rec: func(f *fnFields) { f.hpid = "0" + f.hpid }, scr: noRun, pwhy: "none"},
		{name: "holder reaped, other boot of another machine", holder: fnReaped, rec: func(f *fnFields) { f.mach, f.boot = fnMach2, fnBoot2 },
			scr: noRun, pwhy: "boot"},
		{name: "holder reaped, record boot unknown", holder: fnReaped, rec: func(f *fnFields) { f.boot = "-" }, scr: noRun, pwhy: "boot"},
		{name: "holder reaped, host boot unknown", holder: fnReaped, vars: map[string]string{"h_bootid": "-"}, scr: noRun, pwhy: "boot"},
		{name: "holder reaped, host boot empty", holder: fnReaped, vars: map[string]string{"h_bootid": ""}, scr: noRun, pwhy: "boot"},
		{name: "holder reaped, boot unknown on both sides", holder: fnReaped, rec: func(f *fnFields) { f.boot = "-" },
			vars: map[string]string{"h_bootid": ""}, scr: noRun, pwhy: "boot"},
		{name: "holder reaped, other pidns", holder: fnReaped, rec: func(f *fnFields) { f.ns = fnNS2 }, scr: noRun, pwhy: "pidns"},
		{name: "holder reaped, record pidns unknown", holder: fnReaped, rec: func(f *fnFields) { f.ns = "-" }, scr: noRun, pwhy: "unknown"},
		{name: "holder reaped, host pidns unknown", holder: fnReaped, vars: map[string]string{"h_pidns": "-"}, scr: noRun, pwhy: "unknown"},
		{name: "holder reaped, pidns unknown on both sides", holder: fnReaped, rec: func(f *fnFields) { f.ns = "-" },
			vars: map[string]string{"h_pidns": ""}, scr: noRun, pwhy: "unknown"},
		// /proc is not this namespace's: a pid there is another process.
		{name: "holder reaped, /proc not the namespace's", holder: fnReaped, vars: map[string]string{"h_proc": ""}, scr: noRun, pwhy: "unknown"},
		{name: "holder reaped, other uid", holder: fnReaped, rec: func(f *fnFields) { f.huid = other }, scr: noRun, pwhy: "uid"},
		{name: "holder reaped, record uid unknown", holder: fnReaped, rec: func(f *fnFields) { f.huid = "-" }, scr: noRun, pwhy: "uid"},
		{name: "holder reaped, host uid unknown", holder: fnReaped, vars: map[string]string{"h_uid": "-"}, scr: noRun, pwhy: "uid"},
		{name: "holder reaped, uid unknown on both sides", holder: fnReaped, rec: func(f *fnFields) { f.huid = "-" },
			vars: map[string]string{"h_uid": ""}, scr: noRun, pwhy: "uid"},
		{name: "holder alive", holder: fnLive, scr: noRun, pwhy: "alive"},
		{name: "holder alive, its group gone", holder: fnLive, scr: group("g", fnGoneGroup), pwhy: "alive"},
		{name: "holder reaped, its group alive", holder: fnReaped, scr: group("g", live), pwhy: "alive"},
		{name: "holder a zombie, its group alive", holder: fnZombie, scr: group("g", live), pwhy: "alive"},
		{name: "holder reaped, its process alive (no setsid)", holder: fnReaped,
			scr: group("p", func(t *testing.T) int { return fnSleep(t, nil).pid }), pwhy: "alive"},
		{name: "holder reaped, its command starting", holder: fnReaped, scr: fixed(fnPgid("-\n")), pwhy: "alive"},
		{name: "holder reaped, empty pgid file", holder: fnReaped, scr: fixed(fnPgid("")), pwhy: "alive"},
		{name: "holder reaped, pgid a directory", holder: fnReaped, scr: fixed(fnPgidDir), pwhy: "alive"},
		{name: "holder reaped, pgid a dangling symlink", holder: fnReaped, scr: fixed(fnPgidDangling), pwhy: "alive"},
		{name: "holder reaped, pgid unreadable", holder: fnReaped, scr: fixed(fnPgidUnreadable), pwhy: "alive"},
		{name: "holder reaped, run record unsearchable", holder: fnReaped, scr: fixed(func(t *testing.T, scr string) {
			fnNotRoot(t)
			fnMkdirMode(t, scr, 0o600)
		}), pwhy: "unknown"},
		// As root every directory can be searched: h_absent stands in.
		{name: "holder reaped, absence of the pgid file unknown", holder: fnReaped, defs: "h_absent() { return 1; }",
			scr: noRun, pwhy: "unknown"},
		// The previous-boot rule comes first.
		{name: "holder reaped, previous boot", holder: fnReaped, rec: func(f *fnFields) { f.boot = fnBoot2 }, scr: noRun, why: "boot", pwhy: "-"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := fnHere()
			f.hpid, f.hstart = c.holder(t)
			if c.rec != nil {
				c.rec(&f)
			}
			rec := fnRecWith(fnOther, f)
			scr := c.scr(t)
			fnShells(t, func(t *testing.T, sh []string, root string) {
				_, lock, runs := fnPaths(root)
				fnWrite(t, lock+"/"+fnOther+"/rec", rec+"\n")
				if scr != nil {
					scr(t, runs+"/"+fnOther)
				}
				r := fnRun{fns: []string{"h_sample", "h_stealable"}, vars: c.vars, defs: c.defs,
					call: fnCall("h_sample\nh_stealable", "h_pwhy")}.do(t, sh, root)
				v, _ := fnShown(r)
				if want := map[bool]int{true: 0, false: 1}[c.why != ""]; r.rc != want || r.v["h_why"] != c.why || v["h_pwhy"] != c.pwhy {
					t.Errorf("%s: h_stealable returned %d with h_why %q, h_pwhy %q; want %d, %q, %q\nrecord: %s",
						sh[0], r.rc, r.v["h_why"], v["h_pwhy"], want, c.why, c.pwhy, rec)
				}
			})
		})
	}
}
