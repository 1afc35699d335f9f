package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/hoistdev/hoist/cmd/hoist/output"
	"github.com/hoistdev/hoist/store"
)

// checkFlags are the flags of a health-checked switch (activate, rollback,
// push --activate; docs/rollout.md).
type checkFlags struct {
	exec, http, tcp                     []string
	restart                             string
	interval, timeout, deadline, stable time.Duration
	force                               bool
}

func newCheckFlags() checkFlags {
	return checkFlags{interval: store.DefaultCheckInterval, timeout: store.DefaultCheckTimeout,
		deadline: store.DefaultCheckDeadline, stable: store.DefaultStable}
}

func (c *checkFlags) add(f *pflag.FlagSet) {
	f.StringArrayVar(&c.exec, "check", nil, "after the switch, run `CMD` on the host in the runtime's directory until it exits 0 (env HOIST_RUNTIME, HOIST_PREVIOUS, HOIST_DIR); if it does not, go back; repeatable")
	f.StringArrayVar(&c.http, "check-http", nil, "GET `URL` (http://HOST:PORT/PATH as the host sees it) through the ssh connection: 2xx is healthy; repeatable")
	f.StringArrayVar(&c.tcp, "check-tcp", nil, "connect to `HOST:PORT` (as the host sees it) through the ssh connection; repeatable")
	f.StringVar(&c.restart, "restart", "", "run `CMD` on the host after the switch and after a revert, to start the service from <root>/current")
	f.Var(durationValue{&c.interval}, "check-interval", "start a try of the checks every `D`")
	f.Var(durationValue{&c.timeout}, "check-timeout", "give each try `D`")
	f.Var(durationValue{&c.deadline}, "check-deadline", "go back unless a try passed within `D` of the restart")
	f.Var(durationValue{&c.stable}, "stable", "after the first passing try, every try must pass for `D`")
	f.BoolVar(&c.force, "force", false, "switch to a runtime marked bad on the host (it failed its checks there), and over an earlier rollout's record in doubt there (finished as overridden)")
}

func (c *checkFlags) checks() (store.Checks, error) {
	for _, u := range c.http {
		if _, _, err := store.ParseCheckURL(u); err != nil {
			return store.Checks{}, usageErr("--check-http %s", err)
		}
	}
	for _, a := range c.tcp {
		if !strings.Contains(a, ":") {
			return store.Checks{}, usageErr("--check-tcp %q: give HOST:PORT", a)
		}
	}
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"--check-interval", c.interval}, {"--check-timeout", c.timeout}, {"--check-deadline", c.deadline}} {
		if d.v <= 0 {
			return store.Checks{}, usageErr("%s: give a duration above 0", d.name)
		}
	}
	return store.Checks{Exec: c.exec, HTTP: c.http, TCP: c.tcp, Restart: c.restart, Interval: c.interval,
		Timeout: c.timeout, Deadline: c.deadline, Stable: max(c.stable, 0), Force: c.force}, nil
}

// healthJSON is h for --json; nil when no sequence ran.
func healthJSON(h *store.Health) *output.Health {
	if h == nil || h.ID == "" {
		return nil
	}
	o := &output.Health{ID: h.ID, From: h.From, To: h.To, Healthy: h.Healthy, Why: h.Why, Check: phaseJSON(&h.Check),
		RevertVerdict: h.RevertVerdict}
	if h.Revert != nil {
		p := phaseJSON(h.Revert)
		o.Revert = &p
	}
	return o
}

func phaseJSON(p *store.Phase) output.Phase {
	o := output.Phase{RestartStatus: p.RestartStatus, RestartMS: p.RestartTook.Milliseconds(),
		FirstOKMS: p.FirstOK.Milliseconds(), StableMS: p.Stable.Milliseconds(), Tries: []output.Try{}}
	for _, t := range p.Tries {
		ot := output.Try{Seq: t.Seq, OK: t.OK, MS: t.Took.Milliseconds(), Detail: orNone(t.Detail), Probes: []output.Probe{}}
		for _, pr := range t.Probes {
			ot.Probes = append(ot.Probes, output.Probe{Name: pr.Name, OK: pr.OK, MS: pr.Took.Milliseconds(), Detail: orNone(pr.Detail)})
		}
		o.Tries = append(o.Tries, ot)
	}
	return o
}

// orNone drops the placeholder of a detail the host had none for.
func orNone(s string) string { return strings.TrimPrefix(s, "-") }

// healthLine says how the checks went, for people.
func healthLine(h *store.Health) string {
	if h == nil || h.ID == "" || !h.Healthy {
		return ""
	}
	return fmt.Sprintf("healthy after %d tries (first passed %s after the restart, stable %s)", len(h.Check.Tries),
		h.Check.FirstOK.Round(time.Millisecond), h.Check.Stable.Round(time.Millisecond))
}
