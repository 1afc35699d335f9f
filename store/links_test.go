package store

import (
	"archive/tar"
	"errors"
	"fmt"
	"strings"
	"testing"
)

// linkTarball builds an archive from "d path", "f path" and "l path target"
// lines.
func linkTarball(t *testing.T, lines ...string) string {
	t.Helper()
	var hs []*tar.Header
	for _, l := range lines {
		f := strings.Fields(l)
		switch f[0] {
		case "d":
			hs = append(hs, &tar.Header{Name: f[1] + "/", Typeflag: tar.TypeDir, Mode: 0o755})
		case "f":
			hs = append(hs, &tar.Header{Name: f[1], Size: 1})
		case "l":
			hs = append(hs, &tar.Header{Name: f[1], Typeflag: tar.TypeSymlink, Linkname: f[2]})
		}
	}
	return tarball(t, hs...)
}

// chain is n links, each to the next, the last to a file, named so that
// path order runs along the chain or against it.
func chain(n int, forward bool) []string {
	lines := []string{"f end"}
	name := func(i int) string {
		if forward {
			return fmt.Sprintf("c%03d", i)
		}
		return fmt.Sprintf("c%03d", n-i)
	}
	for i := range n {
		next := "end"
		if i+1 < n {
			next = name(i + 1)
		}
		lines = append(lines, "l "+name(i)+" "+next)
	}
	return lines
}

// TestChainedLinksCannotEscape: each link's target was checked as text,
// from where the link sits, so a link through another link (or through a
// directory link) could reach the root's parent while every target looked
// harmless. Links are now resolved against the tree, hop by hop.
func TestChainedLinksCannotEscape(t *testing.T) {
	for name, lines := range map[string][]string{
		"up-chain":                   {"d d/e", "l d/e/up ../..", "l x d/e/up/.."},
		"link to a link that climbs": {"d a/b/c", "l a/b/c/up ../../..", "l top a/b/c/up", "d x", "l x/y ../top/.."},
		"through a directory link":   {"l top .", "l y top/.."},
		"deep through a dir link":    {"d deep", "l top .", "l deep/x ../top/top/top/.."},
		"loop":                       {"l a b", "l b a"},
		"self":                       {"l s s"},
		"loop through a directory":   {"d d", "l d/l ../d/l/x"},
		"41 links":                   chain(41, true),
		"41 links, named backwards":  chain(41, false),
		"dangling, then up":          {"l x missing/../../y"},
		"escaping link":              {"d a", "l a/l ../../x"},
	} {
		if _, err := Open(linkTarball(t, lines...), "rt"); !errors.Is(err, ErrArtifact) {
			t.Errorf("%s: want ErrArtifact, got %v", name, err)
		}
	}
	for name, lines := range map[string][]string{
		"up to the root":            {"d d/e", "l d/e/up ../..", "l x d/e/up"},
		"into a directory link":     {"d real/lib", "f real/lib/tool", "l lib real/lib", "d bin", "l bin/tool ../lib/tool"},
		"deep through a dir link":   {"d deep", "f f", "l top .", "l deep/x ../top/top/top/f"},
		"dangling inside":           {"l x missing/file", "l y x/../z"},
		"40 links":                  chain(40, true),
		"40 links, named backwards": chain(40, false),
	} {
		if _, err := Open(linkTarball(t, lines...), "rt"); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// TestLinkTargetWithControlCharacterIsRefused: names with control
// characters were refused, link targets were not.
func TestLinkTargetWithControlCharacterIsRefused(t *testing.T) {
	for _, target := range []string{"x\nd 755 y", "x\x7f", "a\tb"} {
		p := tarball(t, &tar.Header{Name: "l", Typeflag: tar.TypeSymlink, Linkname: target})
		if _, err := Open(p, "rt"); !errors.Is(err, ErrArtifact) {
			t.Errorf("%q: want ErrArtifact, got %v", target, err)
		}
	}
}
