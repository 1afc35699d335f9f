package main

import (
	"fmt"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"
)

// buildVersion is set at link time (make build: -X main.buildVersion=...)
// and wins over what the build info says.
var buildVersion string

func (a *app) versionCommand() *cobra.Command {
	return &cobra.Command{
		Use:     "version",
		Short:   "print the version",
		Long:    "version prints hoist's version: the module version and the VCS revision it was built from.",
		Example: "  hoist version\n  hoist --version",
		Args:    noArgs,
		RunE: func(*cobra.Command, []string) error {
			fmt.Fprintln(a.stdout, "hoist", version())
			return nil
		},
	}
}

// version is the link-time version, else the module version and the VCS
// revision from the build info ("v1.2.3 (abc1234)", "(devel) 0123abc+dirty"),
// else "dev".
func version() string {
	if buildVersion != "" {
		return buildVersion
	}
	bi, _ := debug.ReadBuildInfo()
	return versionOf(bi)
}

func versionOf(bi *debug.BuildInfo) string {
	if bi == nil {
		return "dev"
	}
	var rev, dirty string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				dirty = "+dirty"
			}
		}
	}
	if len(rev) > 7 {
		rev = rev[:7]
	}
	mod := bi.Main.Version
	known := mod != "" && mod != "(devel)"
	switch {
	case known && rev != "" && strings.Contains(mod, rev):
		return mod // a pseudo-version names the revision already
	case known && rev != "":
		return fmt.Sprintf("%s (%s%s)", mod, rev, dirty)
	case known:
		return mod
	case rev != "":
		return fmt.Sprintf("(devel) %s%s", rev, dirty)
	}
	return "dev"
}
