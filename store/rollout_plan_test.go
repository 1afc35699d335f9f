package store

import (
	"slices"
	"strings"
	"testing"
)

// TestBatchPlanRoundTrip: a plan reads back as written; anything else a
// host could write there is refused.
func TestBatchPlanRoundTrip(t *testing.T) {
	p := BatchPlan{Hosts: []string{"web1", "u@web,2:22"}, Options: []string{"--canary=0", "--check=test ! -e \"x y\"; echo %"}}
	f, err := p.Fields()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Count(f, " ") != 2 || !strings.HasPrefix(f, " hosts=web1,u@web%2C2:22 opts=") {
		t.Fatalf("fields %q", f)
	}
	got, err := ParseBatchPlan(f)
	if err != nil || !slices.Equal(got.Hosts, p.Hosts) || !slices.Equal(got.Options, p.Options) {
		t.Fatalf("read back %+v, %v", got, err)
	}
	for _, bad := range []string{
		"", " hosts=web1", " opts=x hosts=web1", " hosts=web1 opts=--canary%3d0", " hosts=web1,,web2 opts=x",
		" hosts=web1 opts=x extra=1", " hosts=web1 opts=%zz", " hosts=web1 opts=a$b", " hosts=web1 opts=" + strings.Repeat("a", MaxPlanBytes),
	} {
		if _, err := ParseBatchPlan(bad); err == nil {
			t.Errorf("%q: read as a plan", bad)
		}
	}
	if _, err := (BatchPlan{Hosts: make([]string, MaxPlanHosts+1), Options: []string{"x"}}).Fields(); err == nil {
		t.Error("a plan over the bounds was written")
	}
}
