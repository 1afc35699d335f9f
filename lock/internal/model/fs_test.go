package model

import (
	"math/rand/v2"
	"testing"
)

// TestModelRenameAndRmdirFollowTheKernel pins the filesystem semantics the
// model relies on: rename(2) onto an absent path or an empty directory
// succeeds, onto a non-empty one fails; plain mv onto a directory moves into
// it; rmdir fails on a non-empty directory; mv of a missing file fails.
func TestModelRenameAndRmdirFollowTheKernel(t *testing.T) {
	a, b := token(0, 0, 0, 0), token(0, 1, 0, 0)
	staged := func(f FS) FS { f.Stage |= bit(a); f.StageRec |= bit(a); return f }
	for _, tc := range []struct {
		name string
		f    FS
		op   func(*FS) bool
		ok   bool
	}{
		{"rename onto absent", staged(FS{}), func(f *FS) bool { return f.renameOnto(a) }, true},
		{"rename onto empty", staged(FS{Lock: true}), func(f *FS) bool { return f.renameOnto(a) }, true},
		{"rename onto held", staged(FS{Lock: true, Dir: bit(b), Rec: bit(b)}), func(f *FS) bool { return f.renameOnto(a) }, false},
		{"rename onto dead", staged(FS{Lock: true, Dir: bit(b)}), func(f *FS) bool { return f.renameOnto(a) }, false},
		{"mv into a lock", staged(FS{Lock: true, Dir: bit(b), Rec: bit(b)}), func(f *FS) bool { return f.renameInto(a) }, true},
		{"mv into a lock gone", staged(FS{}), func(f *FS) bool { return f.renameInto(a) }, false},
		{"rmdir a held token", FS{Lock: true, Dir: bit(b), Rec: bit(b)}, func(f *FS) bool { return f.rmdirTok(b) }, false},
		{"rmdir a dead token", FS{Lock: true, Dir: bit(b)}, func(f *FS) bool { return f.rmdirTok(b) }, true},
		{"rmdir a dead lock", FS{Lock: true, Dir: bit(b)}, func(f *FS) bool { return f.rmdirLock() }, false},
		{"rmdir a lock with a landed one", FS{Lock: true, Landed: bit(a)}, func(f *FS) bool { return f.rmdirLock() }, false},
		{"rmdir an earlier version's", FS{Lock: true, OwnerTmp: true}, func(f *FS) bool { return f.rmdirLock() }, false},
		{"rmdir an empty lock", FS{Lock: true}, func(f *FS) bool { return f.rmdirLock() }, true},
		{"mv a missing record", FS{Lock: true, Dir: bit(b)}, func(f *FS) bool { return f.moveRec(b, a) }, false},
		{"mv a record", FS{Lock: true, Dir: bit(b), Rec: bit(b)}, func(f *FS) bool { return f.moveRec(b, a) }, true},
	} {
		f := tc.f
		if got := tc.op(&f); got != tc.ok {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.ok)
		}
		if !tc.ok && f != tc.f {
			t.Errorf("%s failed and changed %v into %v", tc.name, tc.f, f)
		}
	}
}

// TestModelPackRoundTrip walks the model at random and checks that every
// state survives the search's packing.
func TestModelPackRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for walk := range 400 {
		// Crashes as moves of their own, or made just before a sample
		// judges by them, with time passing there too.
		m := New(Config{Programs: threeClients, Reboots: 1, CrashMoves: walk%2 == 0, LazyTime: walk%2 == 1})
		s := m.initial(everyStart[walk%len(everyStart)])
		for range 60 {
			if u := unpack(pack(&s)); u != s {
				t.Fatalf("packed and unpacked:\n%+v\nis\n%+v", s, u)
			}
			var next []State
			for c := range len(m.Programs) {
				for ch := range m.choices(s.C[c].Pos) {
					n := s
					if m.step(&n, c, ch, nil) {
						m.settle(&s, &n)
						next = append(next, n)
					}
				}
			}
			m.envMoves(&s, func(n State, _ Label) { m.canon(&n); next = append(next, n) })
			if len(next) == 0 {
				break
			}
			s = next[rng.IntN(len(next))]
		}
	}
}
