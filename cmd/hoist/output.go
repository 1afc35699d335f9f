package main

import (
	"encoding/json"
	"fmt"
	"io"
	"runtime/debug"
	"sync"
	"time"

	"github.com/hoistdev/hoist/lock"
)

// buildVersion is set at link time (-X main.buildVersion=...).
var buildVersion string

func version() string {
	if buildVersion != "" {
		return buildVersion
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "dev"
}

func writeJSON(w io.Writer, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		b = []byte(fmt.Sprintf(`{"error":%q}`, err.Error()))
	}
	w.Write(append(b, '\n'))
}

// stateJSON is the stable shape of a lock state in --json output.
func stateJSON(s lock.State) map[string]any {
	obj := map[string]any{"store": s.Store, "locked": s.Locked, "stale": s.Stealable()}
	if len(s.Debris) > 0 {
		obj["debris"] = s.Debris
	}
	if !s.Locked {
		return obj
	}
	obj["token"] = s.Record.Token
	if !s.RecordOK {
		obj["token"] = "-"
		obj["record"] = s.Raw
	}
	if s.AgeKnown {
		obj["age_seconds"] = int64(s.Age / time.Second)
	} else {
		obj["age_seconds"] = nil
	}
	obj["reason"] = s.Reason()
	obj["why"] = s.Why
	if match, known := s.BootMatch(); known {
		obj["boot_match"] = match
	}
	if s.RecordOK {
		r := s.Record
		owner := map[string]any{
			"who": r.Who, "pid": r.PID, "command": r.Command, "message": r.Message,
			"version": r.Version, "since": r.Since.UTC().Format(time.RFC3339), "boot": r.BootID,
			"machine": r.Machine, "pidns": r.PIDNS, "init": r.Init,
		}
		if r.Format == 1 {
			owner["boot"] = r.Boot
		}
		obj["owner"] = owner
	}
	return obj
}

// liveLine is the "waiting" line kept up to date on a terminal.
type liveLine struct {
	mu   sync.Mutex
	w    io.Writer
	text string
	stop chan struct{}
}

// start shows text, followed by the time waited, until clear.
func (a *app) startLive(host string, bound time.Duration) {
	if !a.stderrTTY || a.json || a.quiet || a.multi {
		return
	}
	l := &a.live
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.stop != nil {
		return
	}
	l.w = a.stderr
	l.stop = make(chan struct{})
	begin := time.Now()
	stop := l.stop
	go func() {
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			l.mu.Lock()
			if l.stop != stop {
				l.mu.Unlock()
				return
			}
			l.text = fmt.Sprintf("hoist: %s: waiting for the store lock: %s of %s", host,
				time.Since(begin).Round(time.Second), bound)
			fmt.Fprintf(l.w, "\r\033[K%s", l.text)
			l.mu.Unlock()
			select {
			case <-stop:
				return
			case <-t.C:
			}
		}
	}()
}

// clearLive removes the waiting line, so a message can take its place.
func (a *app) clearLive() {
	l := &a.live
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.stop == nil {
		return
	}
	close(l.stop)
	l.stop = nil
	if l.text != "" {
		fmt.Fprint(l.w, "\r\033[K")
		l.text = ""
	}
}

func (a *app) printHelp() {
	fmt.Fprint(a.stdout, `hoist installs runtimes onto hosts over SSH, into a store guarded by a lock.

usage: hoist [global flags] COMMAND [flags] [args]

commands:
  push ARTIFACT [--name NAME] [--activate] [--wait D] [--keep-setuid]
                                    install a directory or .tar/.tar.gz/.tgz as a runtime
  list                              the runtimes on each host
  activate ID [--wait D]            point current at ID; the old one becomes previous
  rollback [--wait D]               point current back at previous
  pin ID | unpin ID                 keep ID from gc, or let it go
  gc [--keep N] [--dry-run]         delete what nothing needs; tries the lock once
  run [--wait D] -- CMD [ARG...]    run CMD on each host under the store lock
  lock status                       show the store lock (read-only)
  lock acquire [--wait D] [--message TEXT] [--try]
                                    take the lock for a manual hold; prints the token
  lock release --token TOKEN        release a manual hold (owner-checked)
  lock break [--force --token TOKEN]
                                    remove a stale or previous-boot lock; with
                                    --force, the lock whose token is TOKEN
  version                           print the version

global flags (before or after the command):
  -H, --host TARGET        local, [user@]host[:port]; repeatable or comma-separated (default local)
      --hosts-file FILE    one target per line
      --root DIR           store root on the host: /abs or ~/rel (default ~/.hoist, env HOIST_ROOT)
      --json               one JSON object per host on stdout
      --parallel N         hosts worked on at once (default 8)
  -i, --identity FILE      private key; repeatable (default ~/.ssh/id_*, and ssh-agent)
      --known-hosts FILE   known_hosts file (default ~/.ssh/known_hosts)
      --accept-new-host-key
                           record the key of a host not yet in known_hosts
  -o Key=Value             ConnectTimeout, ServerAliveInterval, ServerAliveCountMax, User
  -v, --verbose / -q, --quiet

exit status: 0 ok, 1 failure, 2 usage, 75 lock busy after --wait, 79 outcome
unknown (connection lost before the host answered); hoist run exits with the
command's status; 130/143/129 after Ctrl-C, SIGTERM, SIGHUP.
`)
}
