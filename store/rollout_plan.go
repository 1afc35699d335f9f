package store

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/hoistdev/hoist/shellcmd"
)

// BatchPlan is what each host's record of a rollout in batches keeps of
// the rollout (docs/rollout.md, "Resume of a rollout in batches"): every
// host of it, in order, and the options that decide what a host goes
// through, as an argv (--check CMD, --batch LIST, ...). Records can be
// written by whoever controls a host: a plan read back is parsed strictly
// and bounded (ParseBatchPlan), and a resume uses it only when every host
// that has a record agrees on it.
type BatchPlan struct {
	Hosts, Options []string
}

// The bounds of a plan: its hosts, its options, and the two encoded (the
// plan line and the PLAN verdict carry them whole).
const (
	MaxPlanHosts   = 4096
	MaxPlanOptions = 256
	MaxPlanBytes   = 32 << 10
)

// ErrPlanTooLarge: a plan over the bounds, which a record does not keep.
var ErrPlanTooLarge = errors.New("the rollout's plan is too large to record")

// Fields is the plan as the record's plan line keeps it.
func (p BatchPlan) Fields() (string, error) {
	if len(p.Hosts) == 0 || len(p.Options) == 0 {
		return "", fmt.Errorf("a rollout's plan has hosts and options")
	}
	if len(p.Hosts) > MaxPlanHosts || len(p.Options) > MaxPlanOptions {
		return "", ErrPlanTooLarge
	}
	for _, v := range append(slices.Clone(p.Hosts), p.Options...) {
		if v == "" {
			return "", fmt.Errorf("a rollout's plan has no empty host or option")
		}
	}
	f := shellcmd.PlanFields(shellcmd.EncodeList(p.Hosts), shellcmd.EncodeList(p.Options))
	if len(f) > MaxPlanBytes {
		return "", ErrPlanTooLarge
	}
	return f, nil
}

// ParseBatchPlan reads a plan as Fields wrote it (RolloutPlan.Plan),
// strictly: the two fields, in order, within the bounds, every value
// percent-encoded and not empty.
func ParseBatchPlan(raw string) (BatchPlan, error) {
	bad := func(why string) (BatchPlan, error) {
		return BatchPlan{}, fmt.Errorf("the record's plan is not what hoist writes: %s", why)
	}
	if len(raw) > MaxPlanBytes {
		return bad("too large")
	}
	w := strings.Split(strings.TrimPrefix(raw, " "), " ")
	if len(w) != 2 || !strings.HasPrefix(w[0], "hosts=") || !strings.HasPrefix(w[1], "opts=") {
		return bad("want hosts= and opts=")
	}
	hosts, err := shellcmd.DecodeList(strings.TrimPrefix(w[0], "hosts="))
	if err != nil {
		return bad("hosts: " + err.Error())
	}
	opts, err := shellcmd.DecodeList(strings.TrimPrefix(w[1], "opts="))
	if err != nil {
		return bad("opts: " + err.Error())
	}
	if len(hosts) > MaxPlanHosts || len(opts) > MaxPlanOptions {
		return bad("too many hosts or options")
	}
	p := BatchPlan{Hosts: hosts, Options: opts}
	if f, err := p.Fields(); err != nil || f != raw {
		return bad("not in the form hoist writes")
	}
	return p, nil
}
