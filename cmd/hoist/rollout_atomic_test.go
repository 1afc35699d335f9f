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
	src := readTest(t, "rollout_atomic.go")
	called := stepsIn(src, `clientStep\("([a-z]+\.[a-z]+)"\)`)
	// tell stops at the step its callers give it.
	called = append(called, stepsIn(src, `c\.tell\([^\n]*"([a-z]+\.[a-z]+)"\)`)...)
	table := readTest(t, "../../e2e/rollout_atomic_test.go")
	checkSteps(t, "the coordinator", clientSteps, called, "the e2e kill table (TestRolloutAtomicKilled) has no case for",
		func(s string) bool { return strings.Contains(table, `{"`+s+`"`) })
}

// TestEveryBatchStepIsTested: every step a rollout in batches stops at is
// one of batchSteps, named in docs/rollout.md and used by an e2e test.
func TestEveryBatchStepIsTested(t *testing.T) {
	called := stepsIn(readTest(t, "cmd_rollout.go"), `clientStep\("([a-z]+\.[a-z]+)"\)`)
	e2e := readTest(t, "../../e2e/rollout_resume_test.go")
	checkSteps(t, "a rollout in batches", batchSteps, called, "e2e/rollout_resume_test.go does not stop at",
		func(s string) bool { return strings.Contains(e2e, `"`+s+`"`) })
}

// checkSteps: every listed step is called by who, named in
// docs/rollout.md and tested (else the untested message), and every step
// called is listed.
func checkSteps(t *testing.T, who string, listed, called []string, untested string, tested func(string) bool) {
	t.Helper()
	doc := readTest(t, "../../docs/rollout.md")
	for _, s := range listed {
		if !slices.Contains(called, s) {
			t.Errorf("%s is listed but %s never stops there", s, who)
		}
		if !strings.Contains(doc, "`"+s+"`") {
			t.Errorf("docs/rollout.md does not name %s", s)
		}
		if !tested(s) {
			t.Errorf("%s %s", untested, s)
		}
	}
	for _, s := range called {
		if !slices.Contains(listed, s) {
			t.Errorf("%s stops at %s, which is not listed", who, s)
		}
	}
}

func readTest(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// stepsIn is the first group of every match of re in src.
func stepsIn(src, re string) []string {
	var steps []string
	for _, m := range regexp.MustCompile(re).FindAllStringSubmatch(src, -1) {
		steps = append(steps, m[1])
	}
	return steps
}
