package store

import (
	"errors"
	"fmt"
	"path"
	"strings"
)

// A symlink in a runtime must lead somewhere inside it, however it gets
// there. Checking its target as text is not enough: "d/e/up -> ../.." is
// harmless alone, and "x -> d/e/up/.." climbs out through it. So every link
// is resolved the way the kernel would, component by component, following
// the links it meets in the tree's own entries, and refused if the walk
// ever leaves the runtime root, loops, or follows more than maxLinkHops
// links. A path the tree does not hold is walked as text, as if it were a
// directory: a dangling link is allowed as long as it stays inside.

// maxLinkHops is Linux's MAXSYMLINKS: a lookup that follows more links
// fails there with ELOOP.
const maxLinkHops = 40

// maxTarget is the longest target a Linux symlink holds (PATH_MAX less the
// terminating NUL).
const maxTarget = 4095

var (
	errEscape = errors.New("leads out of the runtime directory")
	errLoop   = fmt.Errorf("loops, or goes through more than %d links", maxLinkHops)
	// errDeep is errLoop found by nesting too deep: it depends on where the
	// walk started, so it is not remembered as the answer for a link.
	errDeep = fmt.Errorf("goes through more than %d links", maxLinkHops)
)

// checkLinks refuses a symlink whose target is empty, absolute, too long
// or holds a control character, or that resolves out of the runtime.
// entries must hold every directory (implied ones included).
func checkLinks(entries []Entry) error {
	r := &resolver{links: map[string]string{}, done: map[string]resolved{}, active: map[string]bool{}}
	for _, e := range entries {
		if e.Type != 'l' {
			continue
		}
		switch {
		case e.Target == "" || strings.HasPrefix(e.Target, "/"):
			return fmt.Errorf("%w: symlink %s points to %q, outside the runtime directory", ErrArtifact, e.Path, e.Target)
		case len(e.Target) > maxTarget:
			return fmt.Errorf("%w: symlink %s has a target longer than %d bytes", ErrArtifact, e.Path, maxTarget)
		case strings.ContainsFunc(e.Target, isControl):
			return fmt.Errorf("%w: symlink %s has a control character in its target %q", ErrArtifact, e.Path, e.Target)
		}
		r.links[e.Path] = e.Target
	}
	for _, e := range entries {
		if e.Type != 'l' {
			continue
		}
		if _, _, err := r.link(e.Path); err != nil {
			return fmt.Errorf("%w: symlink %s points to %q, which %v", ErrArtifact, e.Path, e.Target, err)
		}
	}
	return nil
}

// resolver resolves links against the tree, remembering each link's answer:
// a link's target is read from the link's own directory, so where it leads
// and how many links that takes do not depend on who asks.
type resolver struct {
	links  map[string]string   // link path: target
	done   map[string]resolved // answers so far
	active map[string]bool     // links being resolved, outermost first
}

type resolved struct {
	at   string // where the link leads, "." for the root
	hops int    // links followed to get there, this one included
	err  error
}

// link resolves the symlink at p.
func (r *resolver) link(p string) (string, int, error) {
	if d, ok := r.done[p]; ok {
		return d.at, d.hops, d.err
	}
	if r.active[p] {
		return "", 0, errLoop
	}
	if len(r.active) >= maxLinkHops {
		return "", 0, errDeep
	}
	r.active[p] = true
	at, hops, err := r.walk(path.Dir(p), r.links[p])
	delete(r.active, p)
	if hops++; err == nil && hops > maxLinkHops {
		err = errLoop
	}
	if err != errDeep {
		r.done[p] = resolved{at, hops, err}
	}
	return at, hops, err
}

// walk resolves target from the directory dir ("." for the root).
func (r *resolver) walk(dir, target string) (string, int, error) {
	if strings.HasPrefix(target, "/") {
		return "", 0, errEscape
	}
	cur, hops := dir, 0
	for _, part := range strings.Split(target, "/") {
		switch part {
		case "", ".":
			continue
		case "..":
			if cur == "." {
				return "", 0, errEscape
			}
			cur = path.Dir(cur)
			continue
		}
		next := path.Join(cur, part)
		if _, ok := r.links[next]; ok {
			at, n, err := r.link(next)
			if err != nil {
				return "", 0, err
			}
			if hops += n; hops > maxLinkHops {
				return "", 0, errLoop
			}
			next = at
		}
		cur = next
	}
	return cur, hops, nil
}
