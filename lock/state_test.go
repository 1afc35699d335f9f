package lock

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"testing"
)

// TestRulesAreTheHostsWords: the rules and holder-process states are
// exactly the words the host's rules say (h_why and h_pwhy in sh/*.sh), so a
// rule the shell adds cannot go untyped, and --json keeps the host's words.
func TestRulesAreTheHostsWords(t *testing.T) {
	files, _ := filepath.Glob("../shellcmd/sh/*.sh")
	said := map[string][]string{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range regexp.MustCompile(`\b(h_why|h_pwhy)=([a-z]+)\b`).FindAllStringSubmatch(string(data), -1) {
			if filepath.Base(f) == "rules.sh" || m[1] == "h_why" && m[2] == "forced" {
				if !slices.Contains(said[m[1]], m[2]) {
					said[m[1]] = append(said[m[1]], m[2])
				}
			}
		}
	}
	var rules, procs []string
	for _, r := range []Rule{RuleBoot, RuleExited, RuleStale, RuleForced} {
		rules = append(rules, string(r))
	}
	for _, p := range []HolderProc{ProcAlive, ProcExited, ProcNone, ProcBoot, ProcPIDNS, ProcUID, ProcUnknown} {
		procs = append(procs, string(p))
	}
	slices.Sort(rules)
	slices.Sort(procs)
	slices.Sort(said["h_why"])
	slices.Sort(said["h_pwhy"])
	if !slices.Equal(rules, said["h_why"]) {
		t.Errorf("the rules are %v; the host's h_why says %v", rules, said["h_why"])
	}
	if !slices.Equal(procs, said["h_pwhy"]) {
		t.Errorf("the holder-process states are %v; the host's h_pwhy says %v", procs, said["h_pwhy"])
	}
}
