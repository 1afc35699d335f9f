package main

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestEveryClientStepIsTested: every step the coordinator of an --atomic
// rollout or a resume stops at (clientStep) is one of clientSteps, named
// in docs/rollout.md, and a case of the e2e kill table.
func TestEveryClientStepIsTested(t *testing.T) {
	src, err := os.ReadFile("rollout_atomic.go")
	if err != nil {
		t.Fatal(err)
	}
	doc, _ := os.ReadFile("../../docs/rollout.md")
	table, _ := os.ReadFile("../../e2e/rollout_atomic_test.go")
	var called []string
	for _, m := range regexp.MustCompile(`clientStep\("([a-z]+\.[a-z]+)"\)`).FindAllStringSubmatch(string(src), -1) {
		called = append(called, m[1])
	}
	// tell stops at the step its callers give it.
	for _, m := range regexp.MustCompile(`c\.tell\([^\n]*"([a-z]+\.[a-z]+)"\)`).FindAllStringSubmatch(string(src), -1) {
		called = append(called, m[1])
	}
	for _, s := range clientSteps {
		if !slices.Contains(called, s) {
			t.Errorf("%s is listed but the coordinator never stops there", s)
		}
		if !strings.Contains(string(doc), "`"+s+"`") {
			t.Errorf("docs/rollout.md does not name %s", s)
		}
		if !strings.Contains(string(table), `{"`+s+`"`) {
			t.Errorf("the e2e kill table (TestRolloutAtomicKilled) has no case for %s", s)
		}
	}
	for _, s := range called {
		if !slices.Contains(clientSteps, s) {
			t.Errorf("the coordinator stops at %s, which clientSteps does not list", s)
		}
	}
}

// TestEveryBatchStepIsTested: every step a rollout in batches stops at is
// one of batchSteps, named in docs/rollout.md and used by an e2e test.
func TestEveryBatchStepIsTested(t *testing.T) {
	src, err := os.ReadFile("cmd_rollout.go")
	if err != nil {
		t.Fatal(err)
	}
	doc, _ := os.ReadFile("../../docs/rollout.md")
	e2e, _ := os.ReadFile("../../e2e/rollout_resume_test.go")
	var called []string
	for _, m := range regexp.MustCompile(`clientStep\("([a-z]+\.[a-z]+)"\)`).FindAllStringSubmatch(string(src), -1) {
		called = append(called, m[1])
	}
	for _, s := range batchSteps {
		if !slices.Contains(called, s) {
			t.Errorf("%s is listed but a rollout in batches never stops there", s)
		}
		if !strings.Contains(string(doc), "`"+s+"`") {
			t.Errorf("docs/rollout.md does not name %s", s)
		}
		if !strings.Contains(string(e2e), "HOIST_TEST_STEP="+s) {
			t.Errorf("e2e/rollout_resume_test.go does not stop at %s", s)
		}
	}
	for _, s := range called {
		if !slices.Contains(batchSteps, s) {
			t.Errorf("a rollout in batches stops at %s, which batchSteps does not list", s)
		}
	}
}
