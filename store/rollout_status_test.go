package store

import "testing"

// TestRolloutStatusState: the state a host's records say, the local
// rule's checks after a settle (recheck) telling unhealthy from reverted.
func TestRolloutStatusState(t *testing.T) {
	rec := func(parts ...string) *RolloutRecord {
		r := &RolloutRecord{ID: "r"}
		for i := 0; i+1 < len(parts); i += 2 {
			r.Parts = append(r.Parts, RecordPart{Name: parts[i], Value: parts[i+1]})
		}
		return r
	}
	for _, c := range []struct {
		st   RolloutStatus
		want string
	}{
		{RolloutStatus{}, RSNoRecord},
		{RolloutStatus{Own: rec()}, RSPrepared},
		{RolloutStatus{Own: rec("vote", "ready")}, RSInDoubt},
		{RolloutStatus{Own: rec("done", "to")}, RSHealthy},
		{RolloutStatus{Own: rec("done", "from")}, RSReverted},
		{RolloutStatus{Own: rec("recheck", "healthy", "done", "from")}, RSReverted},
		{RolloutStatus{Own: rec("recheck", "unchecked", "done", "from")}, RSReverted},
		{RolloutStatus{Own: rec("recheck", "unhealthy", "done", "from")}, RSUnhealthy},
		{RolloutStatus{Own: rec("recheck", "unhealthy", "done", "to")}, RSUnhealthy},
		{RolloutStatus{Own: rec("recheck", "unhealthy")}, RSPrepared},
		{RolloutStatus{Own: rec("recheck", "unhealthy", "done", "overridden")}, RSOverridden},
		{RolloutStatus{Own: rec("done", "to"), Reverts: []*RolloutRecord{rec("done", "to")}}, RSReverted},
		{RolloutStatus{Own: rec("done", "to"), Reverts: []*RolloutRecord{rec("recheck", "unhealthy", "done", "from")}}, RSUnhealthy},
		{RolloutStatus{Own: rec("done", "to"), Reverts: []*RolloutRecord{rec()}}, RSUnfinished},
	} {
		if got := c.st.State(); got != c.want {
			var own []RecordPart
			if c.st.Own != nil {
				own = c.st.Own.Parts
			}
			t.Errorf("%v: %s, want %s", own, got, c.want)
		}
	}
}
