package main

import (
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"testing"
)

func TestVersionOf(t *testing.T) {
	info := func(version string, settings ...string) *debug.BuildInfo {
		bi := &debug.BuildInfo{Main: debug.Module{Path: "github.com/hoistdev/hoist", Version: version}}
		for i := 0; i+1 < len(settings); i += 2 {
			bi.Settings = append(bi.Settings, debug.BuildSetting{Key: settings[i], Value: settings[i+1]})
		}
		return bi
	}
	const rev = "0123abcdef0123abcdef0123abcdef0123abcdef"
	for _, tc := range []struct {
		name string
		bi   *debug.BuildInfo
		want string
	}{
		{"no build info", nil, "dev"},
		{"nothing known", info("(devel)"), "dev"},
		{"nothing at all", info(""), "dev"},
		{"module version", info("v1.2.3"), "v1.2.3"},
		{"module version and revision", info("v1.2.3", "vcs.revision", rev), "v1.2.3 (0123abc)"},
		{"module version, modified", info("v1.2.3", "vcs.revision", rev, "vcs.modified", "true"), "v1.2.3 (0123abc+dirty)"},
		{"revision only", info("(devel)", "vcs.revision", rev, "vcs.modified", "false"), "(devel) 0123abc"},
		{"revision only, modified", info("(devel)", "vcs.revision", rev, "vcs.modified", "true"), "(devel) 0123abc+dirty"},
		{"pseudo-version names the revision", info("v0.0.0-20260101000000-0123abcdef01+dirty", "vcs.revision", rev, "vcs.modified", "true"),
			"v0.0.0-20260101000000-0123abcdef01+dirty"},
	} {
		if got := versionOf(tc.bi); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

// TestBuildStampsVersion builds hoist as make build does: the link-time
// version wins; without it, a build with VCS stamping names the revision.
func TestBuildStampsVersion(t *testing.T) {
	if testing.Short() {
		t.Skip("builds hoist twice")
	}
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command")
	}
	bin := filepath.Join(t.TempDir(), "hoist")
	for _, tc := range []struct {
		flags []string
		want  string
	}{
		{[]string{"-ldflags", "-X main.buildVersion=v9.8.7-test"}, `^hoist v9\.8\.7-test\n$`},
		{[]string{"-buildvcs=auto"}, `^hoist (dev|v\S+( \([0-9a-f]{7}(\+dirty)?\))?|\(devel\) [0-9a-f]{7}(\+dirty)?)\n$`},
	} {
		build := exec.Command("go", append(append([]string{"build", "-o", bin}, tc.flags...), ".")...)
		if out, err := build.CombinedOutput(); err != nil {
			t.Fatalf("go build %v: %v\n%s", tc.flags, err, out)
		}
		out, err := exec.Command(bin, "--version").Output()
		if err != nil || !regexp.MustCompile(tc.want).Match(out) {
			t.Errorf("built with %v: hoist --version printed %q (%v), want %s", tc.flags, out, err, tc.want)
		}
	}
}
