package rolloutmodel

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

// The configurations explored. Each variant is explored on one of them, so
// that the violations found are the variant's: the design's own runs on
// the same configuration have none.
var (
	// One host's activate --check; any other command may reach the host,
	// and up to two faults (a host shell killed, a reboot) and one stall.
	single = Config{Mode: Single, Hosts: 1, OtherOn: 1, Faults: 2, Stalls: 1}
	// The same with gc as the other command.
	singleGC = Config{Mode: Single, Hosts: 1, OtherOn: 1, Other: GC, Faults: 2, Stalls: 1}
	// Two hosts, the coordinator's crash at any step and one fault, the
	// new runtime failing on any set of hosts.
	two = Config{Mode: Atomic, Hosts: 2, Faults: 1}
	// Two hosts with another command on the decider, or on the other host:
	// one stall (it takes a stalled participant's lock once its lease ran
	// out, and settles the host while the participant still has one
	// mutation to make), or one fault (it settles what a killed host shell
	// or a reboot left).
	twoOtherOnDecider = Config{Mode: Atomic, Hosts: 2, OtherOn: 1, Stalls: 1, Unhealthy: []uint8{0, 1}}
	twoOtherElsewhere = Config{Mode: Atomic, Hosts: 2, OtherOn: 2, Stalls: 1, Unhealthy: []uint8{0, 2}}
	twoOtherFault     = Config{Mode: Atomic, Hosts: 2, OtherOn: 2, Faults: 1, Unhealthy: []uint8{0, 2}}
	// Two hosts and a resume after the coordinator ended, which may itself
	// crash: with a stall, or with a fault.
	twoResumeStall = Config{Mode: Atomic, Hosts: 2, Resumer: true, Stalls: 1, Unhealthy: []uint8{0}}
	twoResumeFault = Config{Mode: Atomic, Hosts: 2, Resumer: true, Faults: 1, Unhealthy: []uint8{0, 2}}
	// A resume that starts while the coordinator still runs (a second
	// operator); with a stall, bounded.
	twoResumeAnytime      = Config{Mode: Atomic, Hosts: 2, Resumer: true, ResumeAnytime: true, Unhealthy: []uint8{0, 2}}
	twoResumeAnytimeStall = Config{Mode: Atomic, Hosts: 2, Resumer: true, ResumeAnytime: true, Stalls: 1, Unhealthy: []uint8{0}, MaxStates: 100_000}
	// Three hosts: every set of failing hosts and no fault, or one fault.
	three      = Config{Mode: Atomic, Hosts: 3}
	threeFault = Config{Mode: Atomic, Hosts: 3, Faults: 1, Unhealthy: []uint8{0, 4}}
)

// explore runs cfg and logs what it explored.
func explore(t *testing.T, cfg Config) *Result {
	t.Helper()
	begin := time.Now()
	r := New(cfg).Explore()
	bound := "exhaustive"
	switch {
	case r.Stopped:
		bound = "stopped once every violation sought was found"
	case !r.Complete:
		bound = fmt.Sprintf("bounded at %d states (every state within %d moves of a start)", cfg.MaxStates, r.CompleteDepth)
	}
	t.Logf("%s, %s: %d states (%d where everyone stopped), %d transitions, shortest runs up to %d moves, %v; a resume finished within %d steps",
		cfg.Variant, bound, r.States, r.Quiescent, r.Transitions, r.Depth, time.Since(begin).Round(time.Millisecond), r.MaxFreshSteps)
	return r
}

// holds fails t with every violation r found, each with its trace.
func holds(t *testing.T, r *Result) {
	t.Helper()
	for _, v := range r.Violations {
		t.Errorf("%v", v)
	}
}

// decideWindow is where the coordinator may stop, with no fault of a host
// or a connection, and leave a host in doubt: after it asked a host to
// vote, before every host learnt the outcome.
var decideWindow = []CPos{CVote, CVoted, CDecide, CDecided, CCommit, CAbort, CAborted, CRevert}

// mixedOnlyUnfinished checks what the fleet looks like when everyone has
// stopped and before anyone resumes: where it is mixed, some host has an
// unfinished record, which the next command (or the resume) finishes;
// without faults of hosts and connections and without stalls, some host is
// in doubt (it voted ready and only the decider knows the outcome), and
// the coordinator stopped inside the decide window. The groups are logged.
func mixedOnlyUnfinished(t *testing.T, r *Result) {
	t.Helper()
	var keys []string
	for k := range r.Mixed {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	doubt, open := 0, 0
	for _, k := range keys {
		c := r.Mixed[k]
		if c.InDoubt {
			doubt += c.States
		} else {
			open += c.States
		}
		switch {
		case strings.Contains(k, "unfinished hosts []"):
			t.Errorf("a mixed fleet with no unfinished host (%s):\n%v", k, c.Example)
		case !c.Faulty && !c.InDoubt:
			t.Errorf("a mixed fleet without faults and no host in doubt (%s):\n%v", k, c.Example)
		case !c.Faulty && !slices.ContainsFunc(decideWindow, func(p CPos) bool { return strings.Contains(k, " at "+p.String()+";") }):
			t.Errorf("a host in doubt with the coordinator stopped outside the decide window (%s):\n%v", k, c.Example)
		}
	}
	t.Logf("mixed until someone finishes it: %d states with a host in doubt, %d with a host unfinished by a fault or a stall, in %d groups", doubt, open, len(keys))
	for _, k := range keys {
		if testing.Verbose() {
			t.Logf("  %s: %d states", k, r.Mixed[k].States)
		}
	}
}

// checkDesign explores cfg and checks every invariant.
func checkDesign(t *testing.T, cfg Config) {
	t.Helper()
	t.Parallel()
	r := explore(t, cfg)
	if !r.Complete && cfg.MaxStates == 0 {
		t.Fatal("the search was cut short")
	}
	if r.Quiescent == 0 {
		t.Fatal("no state where everyone stopped: the resume was never checked")
	}
	holds(t, r)
	mixedOnlyUnfinished(t, r)
}

// TestSingleHostActivation explores activate --check on one host: the
// client killed at any step (it dials the probes: unconfirmed is
// unhealthy), the host shell killed or the host rebooted at any step (up to
// twice), a stall past the lease, and another command (any that takes the
// lock, or gc) reaching the host at any moment; then the next command
// finishes what is left.
func TestSingleHostActivation(t *testing.T) {
	t.Run("another command", func(t *testing.T) { checkDesign(t, single) })
	t.Run("gc", func(t *testing.T) { checkDesign(t, singleGC) })
}

// TestAtomicTwoHosts explores an --atomic rollout of two hosts: the
// coordinator crashes at any step, one host shell is killed, a host
// reboots or a connection is cut at any step, the new runtime fails on any
// set of hosts.
func TestAtomicTwoHosts(t *testing.T) { checkDesign(t, two) }

// TestAtomicOtherCommand adds another command that switches current: on
// the decider or on the other host with a stall, and with a fault.
func TestAtomicOtherCommand(t *testing.T) {
	t.Run("on the decider, stall", func(t *testing.T) { checkDesign(t, twoOtherOnDecider) })
	t.Run("elsewhere, stall", func(t *testing.T) { checkDesign(t, twoOtherElsewhere) })
	t.Run("elsewhere, fault", func(t *testing.T) { checkDesign(t, twoOtherFault) })
}

// TestAtomicResume adds hoist rollout resume, started once the coordinator
// ended while its participants may still be settling, crashing at any step
// itself; with one stall, or one fault.
func TestAtomicResume(t *testing.T) {
	t.Run("stall", func(t *testing.T) { checkDesign(t, twoResumeStall) })
	t.Run("fault", func(t *testing.T) { checkDesign(t, twoResumeFault) })
	t.Run("while the coordinator runs", func(t *testing.T) { checkDesign(t, twoResumeAnytime) })
	t.Run("while the coordinator runs, stall", func(t *testing.T) { checkDesign(t, twoResumeAnytimeStall) })
}

// TestAtomicThreeHosts explores three hosts: every set of failing hosts
// without faults, and one fault.
func TestAtomicThreeHosts(t *testing.T) {
	t.Run("no fault", func(t *testing.T) { checkDesign(t, three) })
	t.Run("one fault", func(t *testing.T) { checkDesign(t, threeFault) })
}
