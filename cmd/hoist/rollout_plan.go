package main

import (
	"fmt"
	"strconv"
	"strings"
)

// batchSizes is the plan of a rollout over n hosts: canary hosts first
// (canary < 0: 1 when there are more than 2 hosts, else none), then the
// sizes of list (Ansible's serial: "1,5,25%"; a percentage is of all n
// hosts, rounded up, at least 1; the last entry repeats), or the rest at
// once when list is empty. The sizes add up to n.
func batchSizes(n, canary int, list string) ([]int, error) {
	return batchSizesOf(n, n, canary, list)
}

// batchSizesOf is batchSizes over n hosts whose percentages are of all
// hosts given (the others were skipped).
func batchSizesOf(n, all, canary int, list string) ([]int, error) {
	var steps []int
	for _, f := range strings.Split(list, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			if list != "" {
				return nil, usageErr("--batch %q: give sizes or percentages separated by commas, such as 1,5,25%%", list)
			}
			continue
		}
		v, err := countOrPercent(f, all)
		if err != nil || v < 1 {
			return nil, usageErr("--batch %q: %q is not a size (1 or more) or a percentage (1%% to 100%%)", list, f)
		}
		steps = append(steps, v)
	}
	if canary < 0 {
		canary = 0
		if all > 2 {
			canary = 1
		}
	}
	var sizes []int
	left := n
	if canary > 0 && left > 0 {
		c := min(canary, left)
		sizes = append(sizes, c)
		left -= c
	}
	for i := 0; left > 0; i++ {
		size := left
		if len(steps) > 0 {
			size = min(steps[min(i, len(steps)-1)], left)
		}
		sizes = append(sizes, size)
		left -= size
	}
	return sizes, nil
}

// countOrPercent reads N or P% (of n, rounded up, at least 1).
func countOrPercent(s string, n int) (int, error) {
	if p, ok := strings.CutSuffix(s, "%"); ok {
		v, err := strconv.Atoi(p)
		if err != nil || v < 0 || v > 100 {
			return 0, fmt.Errorf("bad percentage %q", s)
		}
		if v == 0 {
			return 0, nil
		}
		return max(1, (v*n+99)/100), nil
	}
	v, err := strconv.Atoi(s)
	if err != nil || v < 0 {
		return 0, fmt.Errorf("bad count %q", s)
	}
	return v, nil
}

// maxFail is --max-fail for a batch of size hosts: N, or P% of the batch
// (rounded down: 0% allows none).
func maxFail(s string, size int) (int, error) {
	if p, ok := strings.CutSuffix(s, "%"); ok {
		v, err := strconv.Atoi(p)
		if err != nil || v < 0 || v > 100 {
			return 0, usageErr("--max-fail %q: give a count or a percentage of the batch (0%% to 100%%)", s)
		}
		return v * size / 100, nil
	}
	v, err := strconv.Atoi(s)
	if err != nil || v < 0 {
		return 0, usageErr("--max-fail %q: give a count or a percentage of the batch (0%% to 100%%)", s)
	}
	return v, nil
}
