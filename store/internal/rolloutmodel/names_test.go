package rolloutmodel

import (
	"os"
	"regexp"
	"slices"
	"testing"
)

// namedSteps is every step of the model that docs/rollout.md names: the
// host commands' (h_step hooks in the fragments to come) and the client's
// (where the step tests stop it). host.record exists only in the
// JournalAfterSwitch variant.
func namedSteps() []string {
	var n []string
	for p := PAcquire; p < PEnd; p++ {
		if p != PRecord {
			n = append(n, p.String())
		}
	}
	for p := CStage; p <= RFinish; p++ {
		if p != CEnd {
			n = append(n, p.String())
		}
	}
	return n
}

// batchOnly is the client step of a rollout in batches, which the page
// names and this model (of --atomic) does not have: cmd/hoist's
// TestEveryBatchStepIsTested holds it to its tests.
var batchOnly = []string{"rollout.batch"}

// TestEveryStepIsNamedInTheDocs: every step the model has is named in
// docs/rollout.md, and every step the page names is one of the model's.
func TestEveryStepIsNamedInTheDocs(t *testing.T) {
	doc, err := os.ReadFile("../../../docs/rollout.md")
	if err != nil {
		t.Fatal(err)
	}
	named := map[string]bool{}
	for _, m := range regexp.MustCompile("`((?:host|rollout|resumer|gc)\\.[a-z]+)`").FindAllStringSubmatch(string(doc), -1) {
		named[m[1]] = true
	}
	steps := namedSteps()
	for _, s := range steps {
		if !named[s] {
			t.Errorf("the model has step %s, which docs/rollout.md does not name", s)
		}
	}
	for s := range named {
		if !slices.Contains(steps, s) && !slices.Contains(batchOnly, s) {
			t.Errorf("docs/rollout.md names step %s, which the model does not have", s)
		}
	}
	if len(steps) < 30 {
		t.Errorf("only %d steps: %v", len(steps), steps)
	}
}
