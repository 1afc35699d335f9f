package main

import (
	"slices"
	"testing"
	"time"
)

func TestBatchSizes(t *testing.T) {
	for _, c := range []struct {
		n, canary int
		list      string
		want      []int
	}{
		{40, -1, "1,5,25%", []int{1, 1, 5, 10, 10, 10, 3}},
		{40, 0, "1,5,25%", []int{1, 5, 10, 10, 10, 4}},
		{40, 1, "5,25%", []int{1, 5, 10, 10, 10, 4}}, // docs/rollout.md
		{40, -1, "", []int{1, 39}},
		{2, -1, "", []int{2}},
		{3, -1, "", []int{1, 2}},
		{6, 2, "1", []int{2, 1, 1, 1, 1}},
		{6, -1, "50%", []int{1, 3, 2}},
		{7, 0, "1%", []int{1, 1, 1, 1, 1, 1, 1}},
		{5, 9, "", []int{5}},
		{1, -1, "10", []int{1}},
	} {
		got, err := batchSizes(c.n, c.canary, c.list)
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("batchSizes(%d, %d, %q) = %v, %v; want %v", c.n, c.canary, c.list, got, err, c.want)
		}
	}
	for _, bad := range []string{"0", "x", "1,,2", "101%", "-1", "0%"} {
		if _, err := batchSizes(10, 0, bad); err == nil {
			t.Errorf("batchSizes(10, 0, %q): no error", bad)
		}
	}
}

func TestMaxFail(t *testing.T) {
	for _, c := range []struct {
		s    string
		size int
		want int
	}{{"0", 10, 0}, {"2", 10, 2}, {"25%", 10, 2}, {"0%", 10, 0}, {"100%", 4, 4}, {"50%", 1, 0}} {
		if got, err := maxFail(c.s, c.size); err != nil || got != c.want {
			t.Errorf("maxFail(%q, %d) = %d, %v; want %d", c.s, c.size, got, err, c.want)
		}
	}
	for _, bad := range []string{"x", "-1", "101%"} {
		if _, err := maxFail(bad, 4); err == nil {
			t.Errorf("maxFail(%q): no error", bad)
		}
	}
}

// TestPlanArgs: a rollout's options read back from its plan as they
// were; options not in planArgs' form are refused.
func TestPlanArgs(t *testing.T) {
	o := rolloutOptions{canary: 1, batch: "1,25%", wait: 30 * time.Second, maxFail: "10%", onFail: "revert", skipUnreachable: true, checkFlags: newCheckFlags()}
	o.exec, o.http, o.restart = []string{"bin/ok --x", "-v"}, []string{"http://127.0.0.1:8080/up"}, "bin/restart"
	got, err := parsePlanArgs(o.planArgs())
	if err != nil || !slices.Equal(got.planArgs(), o.planArgs()) || got.canary != 1 || got.onFail != "revert" || got.exec[1] != "-v" {
		t.Fatalf("read back %+v, %v", got, err)
	}
	args := newRolloutArgs()
	for _, bad := range [][]string{
		append(slices.Clone(args), "--force"),
		append(slices.Clone(args), "extra"),
		append([]string{"--stable=0s"}, args...),
		append(slices.Clone(args), "--check-interval=1s"),
		{"--canary=0", "--wait", "0s"},
		append(slices.Clone(args), "--name=x"),
	} {
		if _, err := parsePlanArgs(bad); err == nil {
			t.Errorf("%q: read as a plan's options", bad)
		}
	}
	bad := rolloutOptions{canary: -1, maxFail: "0", onFail: "later", checkFlags: newCheckFlags()}
	if _, err := parsePlanArgs(bad.planArgs()); err == nil {
		t.Error("--on-fail later read as a plan's")
	}
}

func newRolloutArgs() []string {
	return rolloutOptions{canary: -1, maxFail: "0", onFail: "stop", checkFlags: newCheckFlags()}.planArgs()
}
