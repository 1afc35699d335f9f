package shellcmd

// Leases, holder processes and run records: the record fields h_parse reads
// for them, the exited and lease rules (h_exited, h_stealable), heartbeats
// and fencing (h_renew, h_owned, h_fence, h_ownlease), the process checks
// they rest on (h_gone, h_gsig, h_grplive, h_cmdalive) and the run records'
// output (h_trim, h_skip through h_op_logs, h_runinfo). The processes are
// real: sleeps this test starts, kills, reaps or leaves unreaped (zombies).

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// fnlCall is shell code that runs call, then says the named variables (one
// "V name=value" line each, which fnlShown reads) and returns call's status.
func fnlCall(call string, names ...string) string {
	var b strings.Builder
	b.WriteString(call + "\nh_t_rc=$?\n")
	for _, n := range names {
		fmt.Fprintf(&b, "printf '\\n%%s V %s=%%s\\n' \"$h_marker\" \"$%s\"\n", n, n)
	}
	b.WriteString("return $h_t_rc")
	return b.String()
}

// fnlShown splits what a run said into the variables fnlCall showed and the
// other verdict lines.
func fnlShown(r fnResult) (map[string]string, []string) {
	vals := map[string]string{}
	var said []string
	for _, l := range r.said {
		if kv, ok := strings.CutPrefix(l, "V "); ok {
			k, v, _ := strings.Cut(kv, "=")
			vals[k] = v
			continue
		}
		said = append(said, l)
	}
	return vals, said
}

func fnlWant(t *testing.T, sh []string, what string, got, want map[string]string) {
	t.Helper()
	for k, w := range want {
		if g, ok := got[k]; !ok || g != w {
			t.Errorf("%s: %s: %s = %q, want %q", sh[0], what, k, g, w)
		}
	}
}

// fnlFields are a hoist-lock/2 record's facts; fnlRec writes them as
// h_create does.
type fnlFields struct{ mach, boot, ns, init, lease, hpid, hstart, huid string }

// fnlHere is a record of this host (the harness's facts) and this login,
// naming no holder process yet.
func fnlHere() fnlFields {
	return fnlFields{fnMach, fnBoot, fnNS, fnInit, "1200", "-", "-", strconv.Itoa(os.Getuid())}
}

func fnlRec(tok string, f fnlFields) string {
	return fmt.Sprintf("hoist-lock/2 token=%s since=1700000000 mach=%s boot=%s pidns=%s init=%s lease=%s hpid=%s hstart=%s huid=%s pid=7 who=u%%40h ver=1 cmd=run msg=hi",
		tok, f.mach, f.boot, f.ns, f.init, f.lease, f.hpid, f.hstart, f.huid)
}

// TestShParseLease: h_parse reads the lease and the holder process (hpid,
// hstart, huid) of a hoist-lock/2 record. "-" and anything that is not
// digits is unknown (empty); a lease must be 2 to 9999999 seconds, written
// without a leading zero; hpid is never 0 nor has a leading zero. A
// character that belongs in no field, in these or any other field h_parse
// reads, empties every field.
func TestShParseLease(t *testing.T) {
	head := "hoist-lock/2 token=" + fnOther + " since=1 mach=" + fnMach + " boot=" + fnBoot + " pidns=" + fnNS + " init=" + fnInit + " "
	type want struct{ lease, hpid, hst, huid string }
	cases := []struct {
		name, line string
		want       want
		keep       bool // the other fields are read
	}{
		{"all four", head + "lease=1200 hpid=4242 hstart=987654 huid=1000 pid=7", want{"1200", "4242", "987654", "1000"}, true},
		{"fields in another order", "hoist-lock/2 huid=3 hstart=2 hpid=1 lease=9 token=" + fnOther + " init=" + fnInit + " pidns=" + fnNS +
			" boot=" + fnBoot + " mach=" + fnMach, want{"9", "1", "2", "3"}, true},
		{"a manual hold names no process", head + "lease=60 hpid=- hstart=- huid=0", want{"60", "", "", "0"}, true},
		{"all unknown", head + "lease=- hpid=- hstart=- huid=-", want{}, true},
		{"absent (a record from before leases)", head + "pid=7 who=u%40h", want{}, true},
		{"empty values", head + "lease= hpid= hstart= huid=", want{}, true},
		{"non-digits", head + "lease=12a hpid=x1 hstart=1.5 huid=u0", want{}, true},
		{"negative", head + "lease=-5 hpid=-1 hstart=-2 huid=-3", want{}, true},
		{"lease 0", head + "lease=0 hpid=5 hstart=6 huid=7", want{"", "5", "6", "7"}, true},
		{"lease 1", head + "lease=1 hpid=5 hstart=6 huid=7", want{"", "5", "6", "7"}, true},
		{"lease 2", head + "lease=2 hpid=5 hstart=6 huid=7", want{"2", "5", "6", "7"}, true},
		{"lease 10", head + "lease=10", want{lease: "10"}, true},
		{"lease with a leading zero", head + "lease=05 hpid=5", want{"", "5", "", ""}, true},
		{"lease 00", head + "lease=00", want{}, true},
		{"lease 9999999", head + "lease=9999999", want{lease: "9999999"}, true},
		{"lease 10000000", head + "lease=10000000", want{}, true},
		{"lease 99999999", head + "lease=99999999", want{}, true},
		{"lease of 9 digits", head + "lease=100000000", want{}, true},
		{"lease of 20 digits", head + "lease=12345678901234567890", want{}, true},
		{"hpid 0", head + "lease=5 hpid=0 hstart=6 huid=7", want{"5", "", "6", "7"}, true},
		{"hpid with a leading zero", head + "hpid=042 hstart=6", want{"", "", "6", ""}, true},
		{"hpid 1, hstart 0, huid 0", head + "hpid=1 hstart=0 huid=0", want{"", "1", "0", "0"}, true},
		{"odd character in the lease empties everything", head + "lease=5$ hpid=5 hstart=6 huid=7", want{}, false},
		{"slash in hstart empties everything", head + "lease=5 hpid=5 hstart=1/2 huid=7", want{}, false},
		{"glob in huid empties everything", head + "lease=5 hpid=5 hstart=6 huid=*", want{}, false},
		{"odd character in the machine empties the lease too",
			strings.Replace(head, fnMach, fnMach+"$", 1) + "lease=5 hpid=5 hstart=6 huid=7", want{}, false},
		{"odd character in the token empties the lease too",
			strings.Replace(head, fnOther, fnOther+";", 1) + "lease=5 hpid=5 hstart=6 huid=7", want{}, false},
		{"version 1: no lease, no holder", "hoist-lock/1 token=" + fnOther + " lease=5 hpid=5 hstart=6 huid=7", want{}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fnShells(t, func(t *testing.T, sh []string, root string) {
				r := fnRun{fns: []string{"h_parse"}, vars: map[string]string{"h_line": c.line},
					call: fnlCall("h_parse", "h_r_lease", "h_r_hpid", "h_r_hst", "h_r_huid")}.do(t, sh, root)
				got, _ := fnlShown(r)
				fnlWant(t, sh, "h_parse", got, map[string]string{"h_r_lease": c.want.lease, "h_r_hpid": c.want.hpid,
					"h_r_hst": c.want.hst, "h_r_huid": c.want.huid})
				base := map[string]string{"h_r_tok": "", "h_r_mach": "", "h_r_boot": "", "h_r_ns": "", "h_r_init": ""}
				if c.keep {
					base = map[string]string{"h_r_tok": fnOther, "h_r_mach": fnMach, "h_r_boot": fnBoot, "h_r_ns": fnNS, "h_r_init": fnInit}
				} else if strings.HasPrefix(c.line, "hoist-lock/1 ") {
					base["h_r_tok"] = fnOther
				}
				fnWantVars(t, sh, r, base)
			})
		})
	}
}

// Processes.

// fnlStat reads /proc/PID/stat: the state, the process group and the start
// time (field 22), as h_pstat does.
func fnlStat(pid int) (state string, pgrp int, start string, err error) {
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

// fnlProc is a process this test started; a cleanup kills and reaps it.
type fnlProc struct {
	cmd    *exec.Cmd
	pid    int
	start  string // its start time, field 22 of /proc/<pid>/stat
	reaped bool
}

// fnlStart starts argv (which has exec'd when it returns: os.StartProcess
// waits for that) with attr, and reads its start time.
func fnlStart(t *testing.T, attr *syscall.SysProcAttr, argv ...string) *fnlProc {
	t.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.SysProcAttr = attr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &fnlProc{cmd: cmd, pid: cmd.Process.Pid}
	t.Cleanup(func() {
		if !p.reaped {
			p.cmd.Process.Kill()
			p.cmd.Wait()
		}
	})
	var err error
	if _, _, p.start, err = fnlStat(p.pid); err != nil {
		t.Fatal(err)
	}
	return p
}

func fnlSleep(t *testing.T, attr *syscall.SysProcAttr) *fnlProc {
	return fnlStart(t, attr, "sleep", "300")
}

// kill kills p and reaps it: its pid is gone from /proc.
func (p *fnlProc) kill(t *testing.T) {
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
func (p *fnlProc) zombie(t *testing.T) {
	t.Helper()
	p.cmd.Process.Signal(syscall.SIGKILL)
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		state, _, _, err := fnlStat(p.pid)
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

// fnlNewGroup is a process started as the leader of a group of its own;
// fnlJoin starts one in the group of leader.
var (
	fnlNewGroup = &syscall.SysProcAttr{Setpgid: true}
	fnlSession  = &syscall.SysProcAttr{Setsid: true} // as setsid starts a run's command
)

func fnlJoin(leader *fnlProc) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pgid: leader.pid}
}

func fnlItoa(n int) string { return strconv.Itoa(n) }

// fnlAllZombieGroup is a group (its pgid) whose leader exited and was
// reaped, leaving one member that exited and nobody reaped: a zombie, the
// group's only process.
func fnlAllZombieGroup(t *testing.T) int {
	t.Helper()
	leader := fnlSleep(t, fnlNewGroup)
	member := fnlSleep(t, fnlJoin(leader))
	if _, g, _, err := fnlStat(member.pid); err != nil || g != leader.pid {
		t.Fatalf("member %d is in group %d, want %d: %v", member.pid, g, leader.pid, err)
	}
	member.zombie(t)
	leader.kill(t)
	return leader.pid
}

// fnlPair makes a group of two sleeping processes, a leader and a member,
// and then gives the member, and then the leader, its fate (nil: it stays
// alive); the group's id is the leader's pid.
func fnlPair(leader, member func(*fnlProc, *testing.T)) func(t *testing.T) int {
	return func(t *testing.T) int {
		l := fnlSleep(t, fnlNewGroup)
		m := fnlSleep(t, fnlJoin(l))
		if member != nil {
			member(m, t)
		}
		if leader != nil {
			leader(l, t)
		}
		return l.pid
	}
}

// fnlGoneGroup is the pgid of a group whose every process was reaped.
func fnlGoneGroup(t *testing.T) int {
	t.Helper()
	p := fnlSleep(t, fnlSession)
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
			p := fnlSleep(t, nil)
			p.kill(t)
			return fnlItoa(p.pid), p.start
		}, true},
		{"alive", func(t *testing.T) (string, string) {
			p := fnlSleep(t, nil)
			return fnlItoa(p.pid), p.start
		}, false},
		{"alive, another start time (pid reused)", func(t *testing.T) (string, string) {
			p := fnlSleep(t, nil)
			n, _ := strconv.Atoi(p.start)
			return fnlItoa(p.pid), fnlItoa(n + 1)
		}, true},
		{"alive, an earlier start time", func(t *testing.T) (string, string) {
			p := fnlSleep(t, nil)
			n, _ := strconv.Atoi(p.start)
			return fnlItoa(p.pid), fnlItoa(n - 1)
		}, true},
		{"zombie", func(t *testing.T) (string, string) {
			p := fnlSleep(t, nil)
			p.zombie(t)
			return fnlItoa(p.pid), p.start
		}, true},
		{"alive, named with a parenthesis and a state", func(t *testing.T) (string, string) {
			p := fnlStart(t, nil, odd, "300")
			if comm, _ := os.ReadFile("/proc/" + fnlItoa(p.pid) + "/comm"); string(comm) != "x) Z 1 2 3\n" {
				t.Fatalf("comm is %q", comm)
			}
			return fnlItoa(p.pid), p.start
		}, false},
		{"zombie, named with a parenthesis and a state", func(t *testing.T) (string, string) {
			p := fnlStart(t, nil, odd, "300")
			p.zombie(t)
			return fnlItoa(p.pid), p.start
		}, true},
		{"init, alive", func(t *testing.T) (string, string) {
			_, _, start, err := fnlStat(1)
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
				r := fnRun{fns: []string{"h_gone"}, call: fnlCall(`h_gone "`+pid+`" "`+start+`"`, "h_pstate", "h_pst")}.do(t, sh, root)
				if got := r.rc == 0; got != c.gone || r.rc > 1 {
					v, _ := fnlShown(r)
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
		{"a live session leader", func(t *testing.T) int { return fnlSleep(t, fnlSession).pid }, 0, false, true},
		{"a live group of two", fnlPair(nil, nil), 0, false, true},
		{"leader reaped, a member alive", fnlPair((*fnlProc).kill, nil), 0, false, true},
		{"leader a zombie, a member alive", fnlPair((*fnlProc).zombie, nil), 0, false, true},
		{"all reaped", fnlGoneGroup, 1, true, false},
		// kill -0 reaches zombies: only the scan of /proc tells.
		{"leader reaped, its only member a zombie", fnlAllZombieGroup, 0, false, false},
		{"leader and member zombies", fnlPair((*fnlProc).zombie, (*fnlProc).zombie), 0, false, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := fnlItoa(c.group(t))
			fnShells(t, func(t *testing.T, sh []string, root string) {
				r := fnRun{fns: []string{"h_gsig", "h_grplive"},
					call: fnlCall("h_gsig 0 "+g+"\nh_t_sig=$?\nh_grplive "+g, "h_t_sig", "h_gerr")}.do(t, sh, root)
				v, _ := fnlShown(r)
				if v["h_t_sig"] != fnlItoa(c.sig) {
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
		l := fnlSleep(t, fnlNewGroup)
		m := fnlSleep(t, fnlJoin(l))
		r := fnRun{fns: []string{"h_gsig"}, call: fnlCall("h_gsig TERM "+fnlItoa(l.pid), "h_gerr")}.do(t, sh, root)
		if r.rc != 0 {
			v, _ := fnlShown(r)
			t.Errorf("%s: h_gsig TERM returned %d: %q", sh[0], r.rc, v["h_gerr"])
		}
		// A group the signal missed is killed after a while, not waited
		// for all its sleep.
		timer := time.AfterFunc(10*time.Second, func() {
			l.cmd.Process.Kill()
			m.cmd.Process.Kill()
		})
		defer timer.Stop()
		for _, p := range []*fnlProc{l, m} {
			err := p.cmd.Wait()
			p.reaped = true
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGTERM {
				t.Errorf("%s: process %d of the group ended with %v, want SIGTERM", sh[0], p.pid, err)
			}
		}
	})
}

// fnlScr makes what a run record's pgid file is, under scr (runs/<token>):
// a file with given content, or something that cannot be read.
type fnlScr func(t *testing.T, scr string)

func fnlPgid(content string) fnlScr {
	return func(t *testing.T, scr string) { fnWrite(t, scr+"/pgid", content) }
}

var (
	fnlPgidDir      fnlScr = func(t *testing.T, scr string) { fnMkdir(t, scr+"/pgid") }
	fnlPgidDangling fnlScr = func(t *testing.T, scr string) {
		fnMkdir(t, scr)
		if err := os.Symlink("nowhere", scr+"/pgid"); err != nil {
			t.Fatal(err)
		}
	}
	fnlPgidUnreadable fnlScr = func(t *testing.T, scr string) {
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
// unreadable file, or none, is doubt: alive.
func TestShProcCmdAlive(t *testing.T) {
	cases := []struct {
		name string
		scr  func(t *testing.T) fnlScr
		live bool
	}{
		{"g, live group", func(t *testing.T) fnlScr { return fnlPgid("g " + fnlItoa(fnlSleep(t, fnlSession).pid) + "\n") }, true},
		{"g, group gone", func(t *testing.T) fnlScr { return fnlPgid("g " + fnlItoa(fnlGoneGroup(t)) + "\n") }, false},
		{"g, only a zombie left", func(t *testing.T) fnlScr { return fnlPgid("g " + fnlItoa(fnlAllZombieGroup(t)) + "\n") }, false},
		{"g without a newline", func(t *testing.T) fnlScr { return fnlPgid("g " + fnlItoa(fnlGoneGroup(t))) }, true},
		{"p, live process", func(t *testing.T) fnlScr { return fnlPgid("p " + fnlItoa(fnlSleep(t, nil).pid) + "\n") }, true},
		{"p, process gone", func(t *testing.T) fnlScr {
			p := fnlSleep(t, nil)
			p.kill(t)
			return fnlPgid("p " + fnlItoa(p.pid) + "\n")
		}, false},
		{"starting", func(*testing.T) fnlScr { return fnlPgid("-\n") }, true},
		{"empty", func(*testing.T) fnlScr { return fnlPgid("") }, true},
		{"odd kind", func(t *testing.T) fnlScr { return fnlPgid("x " + fnlItoa(fnlGoneGroup(t)) + "\n") }, true},
		{"odd pgid", func(*testing.T) fnlScr { return fnlPgid("g abc\n") }, true},
		{"no pgid file", func(*testing.T) fnlScr { return func(t *testing.T, scr string) { fnMkdir(t, scr) } }, true},
		{"pgid is a directory", func(*testing.T) fnlScr { return fnlPgidDir }, true},
		{"pgid is a dangling symlink", func(*testing.T) fnlScr { return fnlPgidDangling }, true},
		{"pgid unreadable", func(*testing.T) fnlScr { return fnlPgidUnreadable }, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			scr := c.scr(t)
			fnShells(t, func(t *testing.T, sh []string, root string) {
				_, _, runs := fnPaths(root)
				scr(t, runs+"/"+fnMe)
				r := fnRun{fns: []string{"h_cmdalive"}, vars: map[string]string{"h_scr": runs + "/" + fnMe},
					call: fnlCall("h_cmdalive", "h_gerr")}.do(t, sh, root)
				if got := r.rc == 0; got != c.live || r.rc > 1 {
					v, _ := fnlShown(r)
					t.Errorf("%s: h_cmdalive returned %d (h_gerr %q), want alive %v", sh[0], r.rc, v["h_gerr"], c.live)
				}
			})
		})
	}
}

// fnlHolder is the holder process a record names: its hpid and hstart.
type fnlHolder func(t *testing.T) (hpid, hstart string)

var (
	fnlManual fnlHolder = func(*testing.T) (string, string) { return "-", "-" }
	fnlLive   fnlHolder = func(t *testing.T) (string, string) {
		p := fnlSleep(t, nil)
		return fnlItoa(p.pid), p.start
	}
	fnlReaped fnlHolder = func(t *testing.T) (string, string) {
		p := fnlSleep(t, nil)
		p.kill(t)
		return fnlItoa(p.pid), p.start
	}
	fnlReused fnlHolder = func(t *testing.T) (string, string) {
		p := fnlSleep(t, nil)
		n, _ := strconv.Atoi(p.start)
		return fnlItoa(p.pid), fnlItoa(n + 1)
	}
	fnlZombie fnlHolder = func(t *testing.T) (string, string) {
		p := fnlSleep(t, nil)
		p.zombie(t)
		return fnlItoa(p.pid), p.start
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
	noRun := func(*testing.T) fnlScr { return nil }
	group := func(kind string, pid func(t *testing.T) int) func(*testing.T) fnlScr {
		return func(t *testing.T) fnlScr { return fnlPgid(kind + " " + fnlItoa(pid(t)) + "\n") }
	}
	live := func(t *testing.T) int { return fnlSleep(t, fnlSession).pid }
	reaped := func(t *testing.T) int {
		p := fnlSleep(t, nil)
		p.kill(t)
		return p.pid
	}
	fixed := func(s fnlScr) func(*testing.T) fnlScr { return func(*testing.T) fnlScr { return s } }
	cases := []struct {
		name   string
		holder fnlHolder
		rec    func(f *fnlFields) // changes to a record of this host
		vars   map[string]string
		defs   string
		scr    func(t *testing.T) fnlScr // the run record, nil for none
		why    string
		pwhy   string
	}{
		// It fires.
		{name: "holder reaped, no run record", holder: fnlReaped, scr: noRun, why: "exited", pwhy: "exited"},
		{name: "holder reaped, its group gone", holder: fnlReaped, scr: group("g", fnlGoneGroup), why: "exited", pwhy: "exited"},
		{name: "holder reaped, only a zombie left in its group", holder: fnlReaped, scr: group("g", fnlAllZombieGroup), why: "exited", pwhy: "exited"},
		{name: "holder reaped, its process gone (no setsid)", holder: fnlReaped, scr: group("p", reaped), why: "exited", pwhy: "exited"},
		{name: "holder reaped, run record without a pgid file", holder: fnlReaped,
			scr: fixed(func(t *testing.T, scr string) { fnMkdir(t, scr) }), why: "exited", pwhy: "exited"},
		{name: "pid alive with another start time", holder: fnlReused, scr: noRun, why: "exited", pwhy: "exited"},
		{name: "pid alive with another start time, its group gone", holder: fnlReused, scr: group("g", fnlGoneGroup), why: "exited", pwhy: "exited"},
		{name: "holder a zombie", holder: fnlZombie, scr: noRun, why: "exited", pwhy: "exited"},
		{name: "holder reaped, a lease of its own", holder: fnlReaped, rec: func(f *fnlFields) { f.lease = "60" }, scr: noRun, why: "exited", pwhy: "exited"},
		// It does not.
		{name: "manual hold", holder: fnlManual, scr: noRun, pwhy: "none"},
		// A record written where /proc was not the namespace's names its
		// holder's pid, not its start time.
		{name: "holder reaped, no hstart", holder: fnlReaped, rec: func(f *fnlFields) { f.hstart = "-" }, scr: noRun, pwhy: "unknown"},
		{name: "holder reaped, no hpid", holder: fnlReaped, rec: func(f *fnlFields) { f.hpid = "-" }, scr: noRun, pwhy: "none"},
		{name: "holder reaped, odd hpid", holder: fnlReaped, rec: func(f *fnlFields) { f.hpid = "0" + f.hpid }, scr: noRun, pwhy: "none"},
		{name: "holder reaped, other boot of another machine", holder: fnlReaped, rec: func(f *fnlFields) { f.mach, f.boot = fnMach2, fnBoot2 },
			scr: noRun, pwhy: "boot"},
		{name: "holder reaped, record boot unknown", holder: fnlReaped, rec: func(f *fnlFields) { f.boot = "-" }, scr: noRun, pwhy: "boot"},
		{name: "holder reaped, host boot unknown", holder: fnlReaped, vars: map[string]string{"h_bootid": "-"}, scr: noRun, pwhy: "boot"},
		{name: "holder reaped, host boot empty", holder: fnlReaped, vars: map[string]string{"h_bootid": ""}, scr: noRun, pwhy: "boot"},
		{name: "holder reaped, boot unknown on both sides", holder: fnlReaped, rec: func(f *fnlFields) { f.boot = "-" },
			vars: map[string]string{"h_bootid": ""}, scr: noRun, pwhy: "boot"},
		{name: "holder reaped, other pidns", holder: fnlReaped, rec: func(f *fnlFields) { f.ns = fnNS2 }, scr: noRun, pwhy: "pidns"},
		{name: "holder reaped, record pidns unknown", holder: fnlReaped, rec: func(f *fnlFields) { f.ns = "-" }, scr: noRun, pwhy: "unknown"},
		{name: "holder reaped, host pidns unknown", holder: fnlReaped, vars: map[string]string{"h_pidns": "-"}, scr: noRun, pwhy: "unknown"},
		{name: "holder reaped, pidns unknown on both sides", holder: fnlReaped, rec: func(f *fnlFields) { f.ns = "-" },
			vars: map[string]string{"h_pidns": ""}, scr: noRun, pwhy: "unknown"},
		// /proc is not this namespace's: a pid there is another process.
		{name: "holder reaped, /proc not the namespace's", holder: fnlReaped, vars: map[string]string{"h_proc": ""}, scr: noRun, pwhy: "unknown"},
		{name: "holder reaped, other uid", holder: fnlReaped, rec: func(f *fnlFields) { f.huid = other }, scr: noRun, pwhy: "uid"},
		{name: "holder reaped, record uid unknown", holder: fnlReaped, rec: func(f *fnlFields) { f.huid = "-" }, scr: noRun, pwhy: "uid"},
		{name: "holder reaped, host uid unknown", holder: fnlReaped, vars: map[string]string{"h_uid": "-"}, scr: noRun, pwhy: "uid"},
		{name: "holder reaped, uid unknown on both sides", holder: fnlReaped, rec: func(f *fnlFields) { f.huid = "-" },
			vars: map[string]string{"h_uid": ""}, scr: noRun, pwhy: "uid"},
		{name: "holder alive", holder: fnlLive, scr: noRun, pwhy: "alive"},
		{name: "holder alive, its group gone", holder: fnlLive, scr: group("g", fnlGoneGroup), pwhy: "alive"},
		{name: "holder reaped, its group alive", holder: fnlReaped, scr: group("g", live), pwhy: "alive"},
		{name: "holder a zombie, its group alive", holder: fnlZombie, scr: group("g", live), pwhy: "alive"},
		{name: "holder reaped, its process alive (no setsid)", holder: fnlReaped,
			scr: group("p", func(t *testing.T) int { return fnlSleep(t, nil).pid }), pwhy: "alive"},
		{name: "holder reaped, its command starting", holder: fnlReaped, scr: fixed(fnlPgid("-\n")), pwhy: "alive"},
		{name: "holder reaped, empty pgid file", holder: fnlReaped, scr: fixed(fnlPgid("")), pwhy: "alive"},
		{name: "holder reaped, pgid a directory", holder: fnlReaped, scr: fixed(fnlPgidDir), pwhy: "alive"},
		{name: "holder reaped, pgid a dangling symlink", holder: fnlReaped, scr: fixed(fnlPgidDangling), pwhy: "alive"},
		{name: "holder reaped, pgid unreadable", holder: fnlReaped, scr: fixed(fnlPgidUnreadable), pwhy: "alive"},
		{name: "holder reaped, run record unsearchable", holder: fnlReaped, scr: fixed(func(t *testing.T, scr string) {
			fnNotRoot(t)
			fnMkdirMode(t, scr, 0o600)
		}), pwhy: "unknown"},
		// As root every directory can be searched: h_absent stands in.
		{name: "holder reaped, absence of the pgid file unknown", holder: fnlReaped, defs: "h_absent() { return 1; }",
			scr: noRun, pwhy: "unknown"},
		// The previous-boot rule comes first.
		{name: "holder reaped, previous boot", holder: fnlReaped, rec: func(f *fnlFields) { f.boot = fnBoot2 }, scr: noRun, why: "boot", pwhy: "-"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := fnlHere()
			f.hpid, f.hstart = c.holder(t)
			if c.rec != nil {
				c.rec(&f)
			}
			rec := fnlRec(fnOther, f)
			scr := c.scr(t)
			fnShells(t, func(t *testing.T, sh []string, root string) {
				_, lock, runs := fnPaths(root)
				fnWrite(t, lock+"/"+fnOther+"/rec", rec+"\n")
				if scr != nil {
					scr(t, runs+"/"+fnOther)
				}
				r := fnRun{fns: []string{"h_sample", "h_stealable"}, vars: c.vars, defs: c.defs,
					call: fnlCall("h_sample\nh_stealable", "h_pwhy")}.do(t, sh, root)
				v, _ := fnlShown(r)
				if want := map[bool]int{true: 0, false: 1}[c.why != ""]; r.rc != want || r.v["h_why"] != c.why || v["h_pwhy"] != c.pwhy {
					t.Errorf("%s: h_stealable returned %d with h_why %q, h_pwhy %q; want %d, %q, %q\nrecord: %s",
						sh[0], r.rc, r.v["h_why"], v["h_pwhy"], want, c.why, c.pwhy, rec)
				}
			})
		})
	}
}

// TestShLeaseStale: the age rule with the record's own lease: a record
// whose lease= is 5 is stale once more than 5 seconds old (ages are whole
// seconds: above the lease proves a whole lease passed), whatever hp_stale says; one
// without a lease (or with a lease h_parse refuses) has hp_stale. h_lz is the
// lease that applied.
func TestShLeaseStale(t *testing.T) {
	cases := []struct {
		name  string
		lease string
		stale string // hp_stale
		age   int
		lz    string
		why   string
	}{
		{"lease 5, 6 s old", "5", "1200", 6, "5", "stale"},
		{"lease 5, exactly 5 s old", "5", "1200", 5, "5", ""},
		{"lease 5, 4 s old", "5", "1200", 4, "5", ""},
		{"lease 5, 3 days old", "5", "1200", 3 * 86400, "5", "stale"},
		{"lease 100 over hp_stale 60, 70 s old", "100", "60", 70, "100", ""},
		{"lease 100 over hp_stale 60, 101 s old", "100", "60", 101, "100", "stale"},
		{"no lease, hp_stale 60, 61 s old", "-", "60", 61, "60", "stale"},
		{"no lease, hp_stale 60, 58 s old", "-", "60", 58, "60", ""},
		{"lease 1 refused, hp_stale 60, 6 s old", "1", "60", 6, "60", ""},
		{"lease 05 refused, hp_stale 60, 61 s old", "05", "60", 61, "60", "stale"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := fnlHere()
			f.lease = c.lease
			rec := fnlRec(fnOther, f)
			fnShells(t, func(t *testing.T, sh []string, root string) {
				_, lock, _ := fnPaths(root)
				fnWrite(t, lock+"/"+fnOther+"/rec", rec+"\n")
				r := fnRun{fns: []string{"h_sample", "h_stealable"}, vars: map[string]string{"hp_stale": c.stale},
					defs: fnClock + "\n" + fmt.Sprintf(`touch -d "@$(($(date +%%s) - %d))" "$h_lock/%s/rec"`, c.age, fnOther),
					call: fnlCall("h_sample\nh_stealable", "h_lz", "h_pwhy")}.do(t, sh, root)
				v, _ := fnlShown(r)
				if want := map[bool]int{true: 0, false: 1}[c.why != ""]; r.rc != want || r.v["h_why"] != c.why || v["h_lz"] != c.lz {
					t.Errorf("%s: h_stealable returned %d with h_why %q and h_lz %q (age %s), want %d, %q, %q",
						sh[0], r.rc, r.v["h_why"], v["h_lz"], r.v["h_a"], want, c.why, c.lz)
				}
				if v["h_pwhy"] != "none" {
					t.Errorf("%s: h_pwhy = %q, want none: the record names no process", sh[0], v["h_pwhy"])
				}
			})
		})
	}
}

// fnlMtime is the modification time of path, in seconds; -1 when it is
// not there.
func fnlMtime(t *testing.T, path string) int64 {
	t.Helper()
	fi, err := os.Stat(path)
	if errors.Is(err, os.ErrNotExist) {
		return -1
	}
	if err != nil {
		t.Fatal(err)
	}
	return fi.ModTime().Unix()
}

// fnEpoch is the host's clock in the cases on a lease's boundary: fnClock
// stops the shell's date +%s there, and their records are aged from it
// (fnlPinned, or a touch after fnClock), so that "exactly the lease" cannot
// become a second more between the test's touch and the shell's look.
const fnEpoch = 1800000000

// fnClock is shell code that makes date +%s say fnEpoch.
var fnClock = fmt.Sprintf(`date() { case $1 in +%%s) echo %d ;; *) command date "$@" ;; esac; }`, fnEpoch)

// fnlPinned writes tok's record under lock, age seconds before fnEpoch.
func fnlPinned(tok string, lease string, age int) func(*testing.T, string) {
	return func(t *testing.T, lock string) {
		f := fnlHere()
		f.lease = lease
		path := lock + "/" + tok + "/rec"
		fnWrite(t, path, fnlRec(tok, f)+"\n")
		at := time.Unix(fnEpoch-int64(age), 0)
		if err := os.Chtimes(path, at, at); err != nil {
			t.Fatal(err)
		}
	}
}

// fnlAged writes tok's record under lock, age seconds old.
func fnlAged(tok string, lease string, age int) func(*testing.T, string) {
	return func(t *testing.T, lock string) {
		f := fnlHere()
		f.lease = lease
		path := lock + "/" + tok + "/rec"
		fnWrite(t, path, fnlRec(tok, f)+"\n")
		at := time.Now().Add(-time.Duration(age) * time.Second)
		if err := os.Chtimes(path, at, at); err != nil {
			t.Fatal(err)
		}
	}
}

// TestShRenew: a heartbeat touches our own record, and only while the lock
// is ours to keep: never when the record is gone (touch -c creates
// nothing), nor once its age has reached our lease (it ran out before this
// renewal), and a touch that came after the lease ran out (the heartbeat
// stalled between its look and its touch) is disowned.
func TestShRenew(t *testing.T) {
	rec := LockName + "/" + fnMe + "/rec"
	// h_step double: stalls at renew.looked, or runs code there.
	at := func(code string) string {
		return "h_step() { case $1 in renew.looked) " + code + " ;; esac; }"
	}
	cases := []struct {
		name  string
		lock  func(*testing.T, string)
		vars  map[string]string
		defs  string
		rc    int
		moved bool // the record's time is now's
		left  []string
	}{
		{name: "100 s old", lock: fnlAged(fnMe, "1200", 100), rc: 0, moved: true, left: fnHeldLeft(fnMe)},
		{name: "just written", lock: fnlAged(fnMe, "1200", 0), rc: 0, moved: true, left: fnHeldLeft(fnMe)},
		{name: "10 s before the lease ends", lock: fnlAged(fnMe, "1200", 1190), rc: 0, moved: true, left: fnHeldLeft(fnMe)},
		{name: "a second before the lease ends", lock: fnlPinned(fnMe, "1200", 1199), defs: fnClock, rc: 0, moved: true, left: fnHeldLeft(fnMe)},
		{name: "at the lease", lock: fnlPinned(fnMe, "1200", 1200), defs: fnClock, rc: 0, moved: true, left: fnHeldLeft(fnMe)},
		{name: "a second past the lease", lock: fnlPinned(fnMe, "1200", 1201), defs: fnClock, rc: 1, left: fnHeldLeft(fnMe)},
		{name: "past the lease", lock: fnlAged(fnMe, "1200", 5000), rc: 1, left: fnHeldLeft(fnMe)},
		{name: "past a short lease", lock: fnlAged(fnMe, "1200", 8), vars: map[string]string{"h_mylease": "5"}, rc: 1, left: fnHeldLeft(fnMe)},
		{name: "within a long lease", lock: fnlAged(fnMe, "1200", 5000), vars: map[string]string{"h_mylease": "86400"}, rc: 0, moved: true,
			left: fnHeldLeft(fnMe)},
		{name: "age unknown (no stat)", lock: fnlAged(fnMe, "1200", 5000), vars: map[string]string{"h_stat": "none"}, rc: 0, moved: true,
			left: fnHeldLeft(fnMe)},
		{name: "record gone", lock: func(t *testing.T, lock string) { fnMkdir(t, lock+"/"+fnMe) }, rc: 1,
			left: []string{LockName + "/", LockName + "/" + fnMe + "/"}},
		{name: "lock free", rc: 1},
		{name: "lock someone else's", lock: fnlAged(fnOther, "1200", 100), rc: 1, left: fnHeldLeft(fnOther)},
		{name: "record moved out between the look and the touch", lock: fnlAged(fnMe, "1200", 100),
			defs: at(`mv "$h_rp" "$h_lock.stolen"`), rc: 1, left: []string{LockName + "/", LockName + "/" + fnMe + "/", LockName + ".stolen"}},
		{name: "stalled past the lease between the look and the touch", lock: fnlAged(fnMe, "1200", 2),
			vars: map[string]string{"h_mylease": "4"}, defs: at("sleep 3"), rc: 1, moved: true, left: fnHeldLeft(fnMe)},
		{name: "stalled within the lease", lock: fnlAged(fnMe, "1200", 2),
			vars: map[string]string{"h_mylease": "10"}, defs: at("sleep 1"), rc: 0, moved: true, left: fnHeldLeft(fnMe)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fnShells(t, func(t *testing.T, sh []string, root string) {
				store, lock, _ := fnPaths(root)
				fnMkdir(t, store)
				if c.lock != nil {
					c.lock(t, lock)
				}
				others := map[string]int64{}
				for _, p := range fnTree(t, store) {
					if strings.HasSuffix(p, "/rec") {
						others[p] = fnlMtime(t, store+"/"+p)
					}
				}
				before := time.Now().Unix()
				r := fnRun{fns: []string{"h_renew"}, vars: c.vars, defs: c.defs, call: "h_renew"}.do(t, sh, root)
				if r.rc != c.rc {
					t.Errorf("%s: h_renew returned %d, want %d", sh[0], r.rc, c.rc)
				}
				fnWantTree(t, store, c.left...)
				for p, m := range others {
					now := fnlMtime(t, store+"/"+p)
					switch {
					case now < 0: // moved out: fnWantTree checked it
					case p == rec && c.moved:
						if now < before {
							t.Errorf("%s: our record's time is %d, want it renewed (%d or later)", sh[0], now, before)
						}
					case now != m:
						t.Errorf("%s: %s was touched (%d, was %d)", sh[0], p, now, m)
					}
				}
			})
		})
	}
}

// TestShLeaseFence: fencing: h_owned holds while our record is there and
// younger than our lease (or its age is unknown); h_fence then passes
// (step fence.checked), else it says LOST with the lock's record. The lease
// of a manual hold is its record's (h_ownlease), hp_stale when it names none.
func TestShLeaseFence(t *testing.T) {
	steps := "h_step() { h_say STEP \"$1\"; }"
	mine := func(lease string) string {
		f := fnlHere()
		f.lease = lease
		return fnlRec(fnMe, f)
	}
	otherRec := fnlRec(fnOther, fnlHere())
	fnRunLockCases(t, []string{"h_owned", "h_fence"}, []fnLockCase{
		{name: "owned: fresh", lock: fnlAged(fnMe, "1200", 100), call: "h_owned", rc: 0, left: fnHeldLeft(fnMe)},
		{name: "owned: a second before our lease ends", lock: fnlPinned(fnMe, "1200", 1199), defs: fnClock, call: "h_owned", rc: 0, left: fnHeldLeft(fnMe)},
		{name: "owned: at our lease", lock: fnlPinned(fnMe, "1200", 1200), defs: fnClock, call: "h_owned", rc: 0, left: fnHeldLeft(fnMe)},
		{name: "owned: a second past our lease", lock: fnlPinned(fnMe, "1200", 1201), defs: fnClock, call: "h_owned", rc: 1, left: fnHeldLeft(fnMe)},
		{name: "owned: past a short lease", lock: fnlAged(fnMe, "1200", 61), vars: map[string]string{"h_mylease": "60"},
			call: "h_owned", rc: 1, left: fnHeldLeft(fnMe)},
		{name: "owned: age unknown", lock: fnlAged(fnMe, "1200", 5000), vars: map[string]string{"h_stat": "none"},
			call: "h_owned", rc: 0, left: fnHeldLeft(fnMe)},
		{name: "owned: the lock someone else's", lock: fnlAged(fnOther, "1200", 1), call: "h_owned", rc: 1, left: fnHeldLeft(fnOther)},
		// Our lease ran out, and a waiter steals our record while our age
		// is read (the steal is in date's double): the age is unknown
		// then, and the record gone.
		{name: "owned: our lapsed record stolen while its age is read", lock: fnlPinned(fnMe, "1200", 5000),
			defs: `date() { case $1 in +%s) mv "$h_lock/$hp_me/rec" "$h_lock.stolen-x" 2>/dev/null; echo ` + strconv.Itoa(fnEpoch) + ` ;; *) command date "$@" ;; esac; }`,
			call: "h_owned", rc: 1, left: []string{LockName + "/", LockName + "/" + fnMe + "/", LockName + ".stolen-x"}},
		{name: "owned: free", call: "h_owned", rc: 1},
		{name: "fresh: no record is fresh (age unknown)", call: "h_fresh", rc: 0},
		{name: "fence: fresh", lock: fnlAged(fnMe, "1200", 100), defs: steps, call: "h_fence", rc: 0,
			said: []string{"STEP fence.checked"}, left: fnHeldLeft(fnMe)},
		{name: "fence: our lease ran out", lock: fnlAged(fnMe, "1200", 1300), defs: steps, call: "h_fence", rc: 1,
			said: []string{"LOST - - - " + mine("1200")}, left: fnHeldLeft(fnMe)},
		{name: "fence: taken", lock: fnlAged(fnOther, "1200", 1), defs: steps, call: "h_fence", rc: 1,
			said: []string{"LOST - - - " + otherRec}, left: fnHeldLeft(fnOther)},
		{name: "fence: free", defs: steps, call: "h_fence", rc: 1, said: []string{"LOST - - - -"}},
	})
	// h_ownlease, then h_owned by that lease.
	cases := []struct {
		name  string
		lock  func(*testing.T, string)
		lease string // h_mylease after h_ownlease
		owned bool
		stale string
	}{
		{"a hold with lease 30, 20 s old", fnlAged(fnMe, "30", 20), "30", true, "777"},
		{"a hold with lease 30, 40 s old", fnlAged(fnMe, "30", 40), "30", false, "777"},
		{"a hold with lease 9999999, 5000 s old", fnlAged(fnMe, "9999999", 5000), "9999999", true, "777"},
		{"a hold without a lease, 700 s old", fnlAged(fnMe, "-", 700), "777", true, "777"},
		{"a hold without a lease, 800 s old", fnlAged(fnMe, "-", 800), "777", false, "777"},
		{"a hold with a refused lease", fnlAged(fnMe, "1", 20), "777", true, "777"},
		{"an unreadable hold", func(t *testing.T, lock string) { fnWrite(t, lock+"/"+fnMe+"/rec", "x$y\n") }, "777", true, "777"},
		{"no hold", nil, "777", false, "777"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fnShells(t, func(t *testing.T, sh []string, root string) {
				store, lock, _ := fnPaths(root)
				fnMkdir(t, store)
				if c.lock != nil {
					c.lock(t, lock)
				}
				r := fnRun{fns: []string{"h_ownlease", "h_owned"}, vars: map[string]string{"hp_stale": c.stale, "h_mylease": "5"},
					call: fnlCall("h_ownlease\nh_owned", "h_mylease")}.do(t, sh, root)
				v, _ := fnlShown(r)
				if got := r.rc == 0; v["h_mylease"] != c.lease || got != c.owned || r.rc > 1 {
					t.Errorf("%s: h_ownlease set h_mylease %q and h_owned returned %d, want %q and owned %v",
						sh[0], v["h_mylease"], r.rc, c.lease, c.owned)
				}
			})
		})
	}
}

// fnlBytes is n bytes of text that differ from line to line, so that any
// misplaced offset shows.
func fnlBytes(n int, tag string) string {
	var b strings.Builder
	for i := 0; b.Len() < n; i++ {
		fmt.Fprintf(&b, "%s line %06d\n", tag, i)
	}
	return b.String()[:n]
}

// TestShLogsTrim: h_trim keeps the last 64 KiB of each output of a finished
// run and writes their whole sizes to "cut", only when one of them is
// longer; the kept files are the login's own (0600).
func TestShLogsTrim(t *testing.T) {
	cases := []struct {
		name     string
		out, err int // sizes; -1: no file
		cut      string
	}{
		{"both short", 100, 10, ""},
		{"both exactly 64 KiB", 65536, 65536, ""},
		{"out one byte longer", 65537, 0, "65537 0\n"},
		{"out long", 100000, 10, "100000 10\n"},
		{"err long", 10, 70000, "10 70000\n"},
		{"both long", 1 << 20, 200000, "1048576 200000\n"},
		// Known bug: the 2>/dev/null in $(wc -c <"$h_scr/err" 2>/dev/null)
		// comes after the redirection that fails, so the shell complains.
		{"no err", 100000, -1, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fnShells(t, func(t *testing.T, sh []string, root string) {
				_, _, runs := fnPaths(root)
				scr := runs + "/" + fnMe
				fnMkdir(t, scr)
				whole := map[string]string{}
				for name, n := range map[string]int{"out": c.out, "err": c.err} {
					if n >= 0 {
						whole[name] = fnlBytes(n, name)
						fnWrite(t, scr+"/"+name, whole[name])
					}
				}
				// Its complaints are read apart, so that a known one can be
				// told from the rest.
				r := fnRun{fns: []string{"h_trim"}, vars: map[string]string{"h_scr": scr}, call: "h_trim \"$h_scr\" 2>trim.err"}.do(t, sh, root)
				if r.rc != 0 {
					t.Errorf("%s: h_trim returned %d", sh[0], r.rc)
				}
				if e, _ := os.ReadFile(filepath.Join(filepath.Dir(root), "trim.err")); len(e) != 0 {
					t.Errorf("%s: h_trim wrote to stderr: %s", sh[0], e)
				}
				left := []string{"out"}
				if c.err >= 0 {
					left = append(left, "err")
				}
				if c.cut != "" {
					left = append(left, "cut")
				}
				fnWantTree(t, scr, left...)
				for name, w := range whole {
					if c.cut != "" && len(w) > 65536 {
						w = w[len(w)-65536:]
					}
					got, err := os.ReadFile(scr + "/" + name)
					if err != nil || string(got) != w {
						t.Errorf("%s: %s has %d bytes (%v), want the last %d of it", sh[0], name, len(got), err, len(w))
					}
					if fi, err := os.Stat(scr + "/" + name); c.cut != "" && (err != nil || fi.Mode().Perm() != 0o600) {
						t.Errorf("%s: %s is %v, want 0600 (%v)", sh[0], name, fi.Mode(), err)
					}
				}
				if got, _ := os.ReadFile(scr + "/cut"); string(got) != c.cut {
					t.Errorf("%s: cut = %q, want %q", sh[0], got, c.cut)
				}
			})
		})
	}
}

// fnlRunRecord writes the record of run fnMe under root: info, and outputs
// of outN and errN bytes, which it returns with the record's directory.
func fnlRunRecord(t *testing.T, root, info string, outN, errN int) (scr, out, errs string) {
	t.Helper()
	_, _, runs := fnPaths(root)
	scr = runs + "/" + fnMe
	out, errs = fnlBytes(outN, "out"), fnlBytes(errN, "err")
	fnWrite(t, scr+"/info", info)
	fnWrite(t, scr+"/out", out)
	fnWrite(t, scr+"/err", errs)
	return scr, out, errs
}

// fnlLogs reads what h_op_logs wrote to logs.out and logs.err in dir: the
// verdict lines (on lines of their own), and the output between them.
func fnlLogs(t *testing.T, dir string) (said []string, out, errs string) {
	t.Helper()
	gotOut, err1 := os.ReadFile(dir + "/logs.out")
	gotErr, err2 := os.ReadFile(dir + "/logs.err")
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	var data strings.Builder
	rest := string(gotOut)
	for rest != "" {
		i := strings.Index(rest, "\n"+fnMarker+" ")
		if i < 0 {
			data.WriteString(rest)
			break
		}
		data.WriteString(rest[:i])
		line, after, _ := strings.Cut(rest[i+1:], "\n")
		said = append(said, strings.TrimPrefix(line, fnMarker+" "))
		rest = after
	}
	return said, data.String(), string(gotErr)
}

// TestShLogsSkip: h_op_logs prints a run's output from the offsets the
// client has, counted in the whole output: after h_trim kept the last
// 64 KiB, an offset before what was kept says CUT with the bytes lost and
// starts at the first kept byte, and one after it starts where the whole
// output had it (h_skip's arithmetic with "cut"). Then RUNSTATE.
func TestShLogsSkip(t *testing.T) {
	const outN, errN = 100000, 70000
	outCut, errCut := outN-65536, errN-65536
	info := "hoist-run/1 id=" + fnMe + " start=1700000000 pid=99999999 token=" + fnMe + " lease=1200 who=u%40h cmd=make%20x\n"
	state := "RUNSTATE 1700000000 1700000100 3 u%40h make%20x"
	cases := []struct {
		name     string
		out, err int    // whole sizes
		cut      string // a cut file to write instead of h_trim's
		oo, eo   int
		said     []string
		outAt    int // the first byte of the whole output printed
		errAt    int
	}{
		{name: "from the start of a cut run", out: outN, err: errN, oo: 0, eo: 0,
			said: []string{"CUT out " + fnlItoa(outCut), "CUT err " + fnlItoa(errCut), state}, outAt: outCut, errAt: errCut},
		{name: "one byte before what was kept", out: outN, err: errN, oo: outCut - 1, eo: errCut - 1,
			said: []string{"CUT out 1", "CUT err 1", state}, outAt: outCut, errAt: errCut},
		{name: "at the first byte kept", out: outN, err: errN, oo: outCut, eo: errCut, said: []string{state}, outAt: outCut, errAt: errCut},
		{name: "inside what was kept", out: outN, err: errN, oo: 90000, eo: errCut + 1, said: []string{state}, outAt: 90000, errAt: errCut + 1},
		{name: "at the end", out: outN, err: errN, oo: outN, eo: errN, said: []string{state}, outAt: outN, errAt: errN},
		{name: "err short, not cut", out: outN, err: 50, oo: 0, eo: 7,
			said: []string{"CUT out " + fnlItoa(outCut), state}, outAt: outCut, errAt: 7},
		{name: "nothing cut", out: 100, err: 50, oo: 40, eo: 0, said: []string{state}, outAt: 40, errAt: 0},
		{name: "a cut file of odd content counts nothing cut", out: 100, err: 50, cut: "x y\n", oo: 40, eo: 3,
			said: []string{state}, outAt: 40, errAt: 3},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fnShells(t, func(t *testing.T, sh []string, root string) {
				scr, out, errs := fnlRunRecord(t, root, info, c.out, c.err)
				fnWrite(t, scr+"/status", "3 1700000100\n")
				call := "h_trim \"$h_scr\"\n"
				if c.cut != "" {
					fnWrite(t, scr+"/cut", c.cut)
					call = ""
				}
				dir := filepath.Dir(root)
				r := fnRun{fns: []string{"h_trim", "h_op_logs"},
					vars: map[string]string{"h_scr": scr, "hp_oo": fnlItoa(c.oo), "hp_eo": fnlItoa(c.eo)},
					call: call + "h_op_logs >logs.out 2>logs.err"}.do(t, sh, root)
				if r.rc != 0 {
					t.Errorf("%s: h_op_logs returned %d", sh[0], r.rc)
				}
				said, gotOut, gotErr := fnlLogs(t, dir)
				if strings.Join(said, "\n") != strings.Join(c.said, "\n") {
					t.Errorf("%s: said %q, want %q", sh[0], said, c.said)
				}
				if got, want := gotOut, out[c.outAt:]; got != want {
					t.Errorf("%s: stdout has %d bytes starting %.20q, want %d from byte %d (%.20q)", sh[0], len(got), got, len(want), c.outAt, want)
				}
				if got, want := gotErr, errs[c.errAt:]; got != want {
					t.Errorf("%s: stderr has %d bytes starting %.20q, want %d from byte %d (%.20q)", sh[0], len(got), got, len(want), c.errAt, want)
				}
			})
		})
	}
	// A reader that starts while h_trim works: here, after "cut" was
	// written and before the outputs were replaced by their tails. Whatever it prints must be the whole output's bytes from
	// its offset: the offset is no offset into the kept tail.
	fnShells(t, func(t *testing.T, sh []string, root string) {
		scr, out, _ := fnlRunRecord(t, root, info, outN, 10)
		r := fnRun{fns: []string{"h_trim", "h_op_logs"},
			vars: map[string]string{"h_scr": scr, "hp_oo": "40000", "hp_eo": "0"},
			defs: `mv() { command mv "$@" && case $2 in */cut) h_op_logs >logs.out 2>logs.err ;; esac; }`,
			call: `h_trim "$h_scr"`}.do(t, sh, root)
		if r.rc != 0 {
			t.Errorf("%s: h_trim returned %d", sh[0], r.rc)
		}
		said, gotOut, _ := fnlLogs(t, filepath.Dir(root))
		// Right: all of it from 40000, or what is left after a CUT that
		// says how much is missing.
		want := out[40000:]
		lost := len(want) - len(gotOut)
		right := strings.HasSuffix(want, gotOut) && (lost == 0 || slices.Contains(said, "CUT out "+fnlItoa(lost)))
		if !right {
			t.Errorf("%s: a reader that starts between h_trim's write of \"cut\" and its cut of the outputs "+
				"must read from its offset in the whole output: from offset 40000 it printed %d bytes (said %q), want the last %d of the whole output",
				sh[0], len(gotOut), said, len(want))
		}
	})
	// A reader that opened the whole outputs just before h_trim replaced
	// them by their tails, and sizes them after ("cut" was already there;
	// wc's double does the replacing): it reads the whole file it holds,
	// from its offset, and nothing is cut for it.
	fnShells(t, func(t *testing.T, sh []string, root string) {
		scr, out, _ := fnlRunRecord(t, root, info, outN, 10)
		fnWrite(t, scr+"/cut", fnlItoa(outN)+" 10\n")
		r := fnRun{fns: []string{"h_op_logs"},
			vars: map[string]string{"h_scr": scr, "hp_oo": "40000", "hp_eo": "0"},
			// The first wc is h_skip's of out: the outputs are replaced
			// just before it opens the path.
			defs: `wc() {
				if [ -z "$h_t_done" ]; then
					h_t_done=1
					tail -c 65536 "$h_scr/out" >"$h_scr/out.t" && command mv "$h_scr/out.t" "$h_scr/out"
					command wc "$@" <"$h_scr/out"
					return
				fi
				command wc "$@"
			}`,
			call: `h_op_logs >logs.out 2>logs.err`}.do(t, sh, root)
		if r.rc != 0 {
			t.Errorf("%s: h_op_logs returned %d", sh[0], r.rc)
		}
		said, gotOut, _ := fnlLogs(t, filepath.Dir(root))
		if want := out[40000:]; gotOut != want || slices.ContainsFunc(said, func(v string) bool { return strings.HasPrefix(v, "CUT") }) {
			t.Errorf("%s: a reader holding the whole output while it was trimmed printed %d bytes from offset 40000 (said %q), want the %d after it, nothing cut",
				sh[0], len(gotOut), said, len(want))
		}
	})
	// A run that is not one: NORUN.
	fnShells(t, func(t *testing.T, sh []string, root string) {
		_, _, runs := fnPaths(root)
		fnMkdir(t, runs+"/"+fnOther)
		for _, rid := range []string{"x", fnOther, "../" + fnMe} {
			r := fnRun{fns: []string{"h_op_logs"}, vars: map[string]string{"hp_rid": rid}, call: "h_op_logs"}.do(t, sh, root)
			if strings.Join(r.said, "\n") != "NORUN "+rid {
				t.Errorf("%s: h_op_logs of %q said %q, want NORUN", sh[0], rid, r.said)
			}
		}
	})
}

// fnlEmpty stands for an empty file.
const fnlEmpty = "(empty)"

// TestShLogsRunInfo: h_runinfo reads a run record's info and status: start
// (required, digits), pid (digits or nothing), who and cmd as encoded
// ("-" both when either has a character no encoding makes), and the end
// and status ("-" while it runs; "?" for a status nobody saw).
func TestShLogsRunInfo(t *testing.T) {
	info := func(fields string) string { return "hoist-run/1 id=" + fnMe + " " + fields + "\n" }
	good := info("start=1700000000 pid=4242 token=" + fnMe + " lease=1200 who=u%40h cmd=make%20x")
	type want struct{ st, pid, who, cmd, end, sta string }
	cases := []struct {
		name         string
		info, status string // "" for no file
		rc           int
		want         want
	}{
		{"running", good, "", 0, want{"1700000000", "4242", "u%40h", "make%20x", "-", "-"}},
		{"ended", good, "3 1700000100\n", 0, want{"1700000000", "4242", "u%40h", "make%20x", "1700000100", "3"}},
		{"ended 0", good, "0 1700000100\n", 0, want{"1700000000", "4242", "u%40h", "make%20x", "1700000100", "0"}},
		{"status nobody saw", good, "- 1700000100\n", 0, want{"1700000000", "4242", "u%40h", "make%20x", "1700000100", "?"}},
		{"odd status", good, "x$ y\n", 0, want{"1700000000", "4242", "u%40h", "make%20x", "-", "?"}},
		{"status without an end", good, "3\n", 0, want{"1700000000", "4242", "u%40h", "make%20x", "-", "3"}},
		{"status without a newline", good, "3 1700000100", 0, want{"1700000000", "4242", "u%40h", "make%20x", "1700000100", "3"}},
		// A status file that read cannot finish (empty: a full disk; or
		// no newline): what read set is checked all the same.
		{"empty status", good, fnlEmpty, 0, want{"1700000000", "4242", "u%40h", "make%20x", "-", "?"}},
		{"odd status without a newline", good, "x$ y", 0, want{"1700000000", "4242", "u%40h", "make%20x", "-", "?"}},
		{"fields in another order", info("cmd=c who=w pid=1 start=5"), "", 0, want{"5", "1", "w", "c", "-", "-"}},
		{"no pid", info("start=5 who=w cmd=c"), "", 0, want{"5", "", "w", "c", "-", "-"}},
		{"odd pid", info("start=5 pid=1x who=w cmd=c"), "", 0, want{"5", "", "w", "c", "-", "-"}},
		{"no who, no cmd", info("start=5 pid=1"), "", 0, want{"5", "1", "-", "-", "-", "-"}},
		{"odd character in who", info("start=5 pid=1 who=u$x cmd=c"), "", 0, want{"5", "1", "-", "-", "-", "-"}},
		{"odd character in cmd", info("start=5 pid=1 who=w cmd=a*b"), "", 0, want{"5", "1", "-", "-", "-", "-"}},
		{"no start", info("pid=1 who=w cmd=c"), "", 1, want{}},
		{"odd start", info("start=5x pid=1"), "", 1, want{}},
		{"another format", "hoist-run/2 start=5 pid=1\n", "", 1, want{}},
		{"empty info", "\n", "", 1, want{}},
		{"no info", "", "", 1, want{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fnShells(t, func(t *testing.T, sh []string, root string) {
				_, _, runs := fnPaths(root)
				scr := runs + "/" + fnMe
				fnMkdir(t, scr)
				if c.info != "" {
					fnWrite(t, scr+"/info", c.info)
				}
				if c.status == fnlEmpty {
					fnWrite(t, scr+"/status", "")
				} else if c.status != "" {
					fnWrite(t, scr+"/status", c.status)
				}
				r := fnRun{fns: []string{"h_runinfo"},
					call: fnlCall(`h_runinfo "$h_runs/$hp_rid"`, "h_ist", "h_ipid", "h_iwho", "h_icmd", "h_iend", "h_ista")}.do(t, sh, root)
				if r.rc != c.rc {
					t.Errorf("%s: h_runinfo returned %d, want %d", sh[0], r.rc, c.rc)
				}
				if c.rc != 0 {
					return
				}
				v, _ := fnlShown(r)
				want := map[string]string{"h_ist": c.want.st, "h_ipid": c.want.pid, "h_iwho": c.want.who,
					"h_icmd": c.want.cmd, "h_iend": c.want.end, "h_ista": c.want.sta}
				fnlWant(t, sh, "h_runinfo", v, want)
			})
		})
	}
}

// TestShLogsWaitsForAWaitingRun: followed, a run whose scratch directory is
// there without a record (still waiting for the lock: its client may only
// have lost contact) is waited for: once it starts, its output and
// RUNSTATE come; if it gives up (its directory goes), NORUN. Not followed,
// it is NORUN at once.
func TestShLogsWaitsForAWaitingRun(t *testing.T) {
	info := "hoist-run/1 id=" + fnMe + " start=1700000000 pid=99999999 token=" + fnMe + " lease=1200 who=u%40h cmd=make%20x\n"
	for _, c := range []struct {
		name   string
		follow string
		sleep  string // sleep's double: what happens during a poll
		said   []string
		out    string
	}{
		{"starts", "1", `printf hi >"$h_scr/out"; : >"$h_scr/err"; echo "3 1700000100" >"$h_scr/status"; printf '%s' '` + info + `' >"$h_scr/info"`,
			[]string{"RUNSTATE 1700000000 1700000100 3 u%40h make%20x"}, "hi"},
		{"gives up", "1", `rm -rf "$h_scr"`, []string{"NORUN " + fnMe}, ""},
		{"not followed", "", `exit 9`, []string{"NORUN " + fnMe}, ""},
		// Its client asks to stop the run (a "stop" line): the waiter
		// gives up (here, as soon as the stop file is there).
		{"stopped by its client", "1", `h_t_n=$((h_t_n + 1))
			if [ "$h_t_n" = 1 ]; then echo stop >&8; fi
			if [ -f "$h_scr/stop" ]; then rm -rf "$h_scr"; elif [ "$h_t_n" -gt 1000 ]; then kill "$h_lp"; fi
			command sleep 0.01`, []string{"NORUN " + fnMe}, ""},
		// The follower's own client left (its stdin reader ended): it
		// ends, saying nothing.
		{"its client leaves", "1", `kill "$h_lp"`, nil, ""},
		// Killed while it waited: nothing touched its directory for five
		// minutes.
		{"quiet for five minutes", "1", `exit 9`, []string{"NORUN " + fnMe}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			fnShells(t, func(t *testing.T, sh []string, root string) {
				_, _, runs := fnPaths(root)
				scr := runs + "/" + fnMe
				fnMkdir(t, scr)
				if err := os.Chmod(scr, 0o700); err != nil {
					t.Fatal(err)
				}
				if c.name == "quiet for five minutes" {
					past := time.Now().Add(-6 * time.Minute)
					if err := os.Chtimes(scr, past, past); err != nil {
						t.Fatal(err)
					}
				}
				r := fnRun{fns: []string{"h_op_logs"}, vars: map[string]string{"h_scr": scr, "hp_follow": c.follow},
					// Its client's input stays open (a FIFO this shell also
					// holds for writing) until it returns: a client that left
					// ends the wait quietly. Then its stdin reader goes.
					defs: "sleep() { " + c.sleep + "; }",
					call: `mkfifo "$h_root/in" && exec 8<>"$h_root/in" || return 9
						h_op_logs <"$h_root/in" >logs.out 2>logs.err
						h_t_rc=$?
						kill "$h_lp" 2>/dev/null
						exec 8>&-
						return "$h_t_rc"`}.do(t, sh, root)
				said, out, _ := fnlLogs(t, filepath.Dir(root))
				if r.rc != 0 || strings.Join(said, "\n") != strings.Join(c.said, "\n") || out != c.out {
					t.Fatalf("%s: h_op_logs = %d, said %q, printed %q; want %q, %q", sh[0], r.rc, said, out, c.said, c.out)
				}
			})
		})
	}
}
