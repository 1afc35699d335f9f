package main

import (
	"slices"
	"testing"
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
