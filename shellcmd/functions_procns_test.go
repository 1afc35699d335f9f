package shellcmd

// /proc and PID namespaces: where /proc is not this namespace's (a host's
// sshd under unshare -p --fork without --mount-proc), a pid of this
// namespace names another process in /proc, or none. h_procown proves which
// case a host is in; without the proof nothing looks a pid up in /proc.

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hoistdev/hoist/e2e/sshd"
)

// The namespaces a test shell can run in: its own /proc (the machine's),
// a PID namespace of its own with the machine's /proc, and one with its own.
var (
	fnForeignProc = []string{"unshare", "-p", "--fork", "--kill-child"}
	fnOwnProc     = []string{"unshare", "-m", "-p", "--fork", "--kill-child", "--mount-proc"}
)

func fnNeedUnshare(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root: only root can make a PID namespace (unshare -p)")
	}
	if _, err := exec.LookPath("unshare"); err != nil {
		t.Fatal("unshare is not installed: run make test, which installs util-linux")
	}
}

// TestShProcOwn: h_procown sets h_proc where /proc is the shell's PID
// namespace's: here, and in a PID namespace with a /proc of its own; not in
// one that kept the machine's /proc. Every shell reads /proc/self in its own
// process (no fork for the redirected loop), or it would never prove it.
// Where it proves it, it also gives the shell's start time (h_myst, as
// h_pstat reads it) and its umask (h_umask, as the umask builtin says it);
// elsewhere neither.
func TestShProcOwn(t *testing.T) {
	for _, c := range []struct {
		name string
		wrap []string
		own  bool
	}{
		{"this machine's", nil, true},
		{"a PID namespace with its own /proc", fnOwnProc, true},
		{"a PID namespace with the machine's /proc", fnForeignProc, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.wrap != nil {
				fnNeedUnshare(t)
			}
			fnShells(t, func(t *testing.T, sh []string, root string) {
				r := fnRun{fns: []string{"h_procown", "h_pstat"}, vars: map[string]string{"h_proc": "stale", "h_myst": "1", "h_umask": "0"},
					wrap: c.wrap, defs: "umask 0027",
					call: fnCall("h_procown\nh_t_own=$?\nh_t_um=$(umask)\nh_pstat $$\n(exit $h_t_own)", "h_proc", "h_myst", "h_pst", "h_umask", "h_t_um")}.do(t, sh, root)
				v, _ := fnShown(r)
				if got := r.rc == 0 && v["h_proc"] == "1"; got != c.own || !c.own && (r.rc == 0 || v["h_proc"] != "") {
					t.Errorf("%s: h_procown returned %d with h_proc %q, want /proc proven this namespace's: %v", sh[0], r.rc, v["h_proc"], c.own)
				}
				octal := func(s string) string { return strings.TrimLeft(s, "0") }
				if c.own && (v["h_myst"] == "" || v["h_myst"] != v["h_pst"] || octal(v["h_umask"]) != "27" || octal(v["h_t_um"]) != "27") {
					t.Errorf("%s: h_procown gave start time %q and umask %q, want %q (h_pstat $$) and 0027 (umask says %q)", sh[0], v["h_myst"], v["h_umask"], v["h_pst"], v["h_t_um"])
				}
				if !c.own && (v["h_myst"] != "" || v["h_umask"] != "") {
					t.Errorf("%s: h_procown gave start time %q and umask %q without proving /proc this namespace's", sh[0], v["h_myst"], v["h_umask"])
				}
			})
		})
	}
}

// TestShProcForeign: in a PID namespace that kept the machine's /proc, a
// process of the namespace is followed by kill -0 alone. The test's
// processes have small pids there, which the machine's /proc shows as other
// processes (kernel threads): a command that has exited and been reaped is
// gone, not the kernel thread of its number; a live process is not "gone"
// because the process /proc shows under its number started at another
// time; a live group is alive; and nothing reads a start time.
func TestShProcForeign(t *testing.T) {
	fnNeedUnshare(t)
	// dead: a reaped process whose number /proc shows as another, live
	// process; live: a process in a group of its own (setsid keeps its
	// pid). Then each check says its result as a variable.
	const setup = `h_procown
h_t_i=0
while [ "$h_t_i" -lt 200 ]; do
	sleep 300 &
	h_t_dead=$!
	kill -9 "$h_t_dead"
	wait "$h_t_dead" 2>/dev/null
	[ -r "/proc/$h_t_dead/stat" ] && break
	h_t_i=$((h_t_i + 1))
done
[ -r "/proc/$h_t_dead/stat" ] || h_t_dead=none
setsid sleep 300 &
h_t_live=$!
h_scr=$h_root/scr
mkdir -p "$h_scr"
h_t() { "$@"; echo $?; }
h_t_pstat=$(h_t h_pstat $$)
h_t_gonelive=$(h_t h_gone "$h_t_live" 1)
echo "g $h_t_dead" >"$h_scr/pgid"
h_t_deadgroup=$(h_t h_cmdalive)
echo "p $h_t_dead" >"$h_scr/pgid"
h_t_deadproc=$(h_t h_cmdalive)
echo "g $h_t_live" >"$h_scr/pgid"
h_t_livegroup=$(h_t h_cmdalive)
h_t_shell=$(h_t h_shellgone)
kill "$h_t_live"`
	vars := []string{"h_proc", "h_t_dead", "h_t_pstat", "h_t_gonelive", "h_t_deadgroup", "h_t_deadproc", "h_t_livegroup", "h_t_shell"}
	fnShells(t, func(t *testing.T, sh []string, root string) {
		fnMkdir(t, root)
		r := fnRun{fns: []string{"h_procown", "h_pstat", "h_gone", "h_cmdalive", "h_shellgone"}, wrap: fnForeignProc,
			call: fnCall(setup, vars...)}.do(t, sh, root)
		v, _ := fnShown(r)
		if v["h_t_dead"] == "none" {
			sshd.NeedMachine(t, fmt.Sprintf("%s: no reaped pid of the namespace that the machine's /proc shows (its kernel threads have such small pids): %v", sh[0], v))
		}
		fnWant(t, sh, "a PID namespace with the machine's /proc", v, map[string]string{
			"h_proc":        "",  // not proven
			"h_t_pstat":     "1", // no start time read
			"h_t_gonelive":  "1", // a live process is not gone
			"h_t_deadgroup": "1", // the reaped command is gone
			"h_t_deadproc":  "1",
			"h_t_livegroup": "0", // a live group is alive
			"h_t_shell":     "1", // the shell that runs this is there
		})
	})
}

// TestShRunKilledForeignProc: where /proc is not the namespace's, a run's
// record names no start time, and h_runkilled knows its guardian by its
// sign of life: a run without a status whose directory nothing touched for
// five minutes is over (logs -f ends); a fresh one, or one that ended, is
// not "killed". Judged by pid, such a run would be followed for ever.
func TestShRunKilledForeignProc(t *testing.T) {
	for _, c := range []struct {
		name          string
		quiet, status bool
		killed        bool
	}{
		{"quiet for ten minutes", true, false, true},
		{"touched just now", false, false, false},
		{"ended", true, true, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			fnShells(t, func(t *testing.T, sh []string, root string) {
				_, _, runs := fnPaths(root)
				scr := runs + "/" + fnMe
				fnWrite(t, scr+"/info", "hoist-run/1 id="+fnMe+" start=1700000000 pid=7 pstart=- boot="+fnBoot+" token="+fnMe+" lease=4 who=u cmd=c\n")
				fnWrite(t, scr+"/out", "")
				fnWrite(t, scr+"/guard", "9 -\n")
				if c.status {
					fnWrite(t, scr+"/status", "0 1700000001\n")
				}
				if c.quiet {
					old := time.Now().Add(-10 * time.Minute)
					for _, f := range []string{"info", "out", "guard", "status", ""} {
						os.Chtimes(filepath.Join(scr, f), old, old)
					}
				}
				r := fnRun{fns: []string{"h_runinfo", "h_runkilled"}, vars: map[string]string{"h_proc": "", "h_scr": scr},
					call: `h_runinfo "$h_scr" && h_runkilled`}.do(t, sh, root)
				if got := r.rc == 0; got != c.killed {
					t.Errorf("%s: h_runkilled returned %d, want killed %v", sh[0], r.rc, c.killed)
				}
			})
		})
	}
}
