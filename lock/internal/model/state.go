package model

import (
	"fmt"
	"math/bits"
)

// Tok is a token: the index of one attempt of one acquire (or break) of one
// client in one boot. Every command has its own tokens, fresh, and an
// acquire goes on with its next (a spare) after an attempt whose fate it
// cannot tell (h_nexttoken), as hp_me is then.
type Tok int8

const noTok Tok = -1

// Set is a set of tokens, one bit each.
type Set uint32

func bit(t Tok) Set          { return 1 << uint(t) }
func (s Set) has(t Tok) bool { return t >= 0 && s&bit(t) != 0 }
func (s Set) lowest() Tok    { return Tok(bits.TrailingZeros32(uint32(s))) }
func (s Set) highest() Tok   { return Tok(31 - bits.LeadingZeros32(uint32(s))) }
func (s Set) each(f func(Tok)) {
	for r := s; r != 0; r &= r - 1 {
		f(r.lowest())
	}
}

const (
	maxClients = 4 // three explored clients and the fresh one of the progress check
	freshSlot  = 3 // the slot of the fresh client that runs alone (progress)
	maxOps     = 2 // ops per client program
	// maxTries is the most tokens of one op: its first and a spare
	// (Config.Spares).
	maxTries = 2
	perGen   = maxClients * maxOps * maxTries // the tokens of one boot
)

// token is the token of attempt try of op pc of client c in boot
// generation gen.
func token(gen uint8, c, pc, try int) Tok {
	return Tok(int(gen)*perGen + (c*maxOps+pc)*maxTries + try)
}

// genOf is the boot generation token t was made in.
func genOf(t Tok) uint8 { return uint8(t / perGen) }

// creator is the client whose op made token t.
func creator(t Tok) int { return int(t%perGen) / (maxOps * maxTries) }

// tokName names a token for traces: A1 is client A's first op, A1b its
// spare, B2' client B's second after the reboot, F the fresh client of the
// progress check.
func tokName(t Tok) string {
	if t < 0 {
		return "-"
	}
	c, pc, try := creator(t), int(t%perGen)/maxTries%maxOps, int(t%maxTries)
	s := "F"
	if c != freshSlot {
		s = fmt.Sprintf("%c%d", 'A'+c, pc+1)
	}
	if try > 0 {
		s += string(rune('a' + try))
	}
	if genOf(t) > 0 {
		s += "'"
	}
	return s
}

// FS is the part of the host's filesystem the protocol touches: the lock
// path L (<store>/.store-lock) and its siblings. The age of a path (its mtime
// against the stale bound) is a flag: the environment sets it whenever it
// likes (time passing, or a process stalled past the bound); a change to a
// directory's entries makes it young again.
type FS struct {
	Lock     bool // L exists, a directory
	Owner    bool // L/owner: an earlier version's record
	OwnerTmp bool // L/.owner-<tok>: an earlier version's temporary record
	Initial  bool // L is the earlier version's directory the run started with
	Rebooted bool // L is a directory without records that the reboot found
	LockOld  bool // L's mtime is older than the stale bound
	Dir      Set  // L/<t> exists
	Rec      Set  // L/<t>/rec exists: the lock is t's
	Landed   Set  // L/L.new-<t> exists: a prepared directory that mv moved into L
	Stage    Set  // L.new-<t>/<t> exists in the store
	StageRec Set  // L.new-<t>/<t>/rec exists
	Moved    Set  // L.stolen-<t>, L.released-<t> or L.broken-<t> exists (t moved it)
	Expired  Set  // t's lease ran out: its record is older than the lease (its holder stalled), or it was force-broken
	PrevBoot Set  // t's record was written under an earlier boot
}

// empty reports whether L exists with no entry at all.
func (f *FS) empty() bool {
	return f.Lock && !f.Owner && !f.OwnerTmp && f.Dir == 0 && f.Landed == 0
}

// recs is every record that makes L a lock: the token records, and bit 15
// for an earlier version's owner record.
func (f *FS) recs() Set {
	r := f.Rec
	if f.Owner {
		r |= ownerBit
	}
	return r
}

// ownerBit stands for L/owner in recs (the token of the fresh client's
// second op after a reboot, which it never has).
const ownerBit Set = 1 << 31

// withRecord is every token whose record exists somewhere: in L, in a
// prepared directory, or in one that landed inside L.
func (f *FS) withRecord() Set { return f.Rec | f.StageRec | f.Landed }

// Kind is what h_sample makes of L.
type Kind uint8

const (
	Free      Kind = iota // no lock path
	Held                  // a token directory with its rec
	Legacy                // an earlier version's owner record
	Dead                  // token directories without rec
	Ownerless             // a directory without any record
)

var kindNames = [...]string{"free", "held", "legacy", "dead", "ownerless"}

func (k Kind) String() string { return kindNames[k] }

// Why is the rule a judgement used; none means the lock was not judged.
type Why uint8

const (
	None   Why = iota
	Stale      // the age rule (h_stealable: h_age >= the lease)
	Boot       // the boot rule (h_prevboot)
	Forced     // break --force --token with this lock's token
	Exited     // the exited rule (h_exited): the host process the record names is gone
)

var whyNames = [...]string{"-", "stale", "boot", "forced", "exited"}

func (w Why) String() string { return whyNames[w] }

// Client is one client's program counter and the shell variables the model
// needs: what it judged (h_kind, h_tok, h_why), h_ol, what mv saw, and the
// words of a clear's rmdir that are still to go.
type Client struct {
	Pc      uint8 // op in the program; len(program) when done
	Pos     Pos
	Crashed bool
	Kind    Kind  // kind of the lock judged
	Judged  Tok   // token judged
	Why     Why   // rule that made the judgement true; None if none did
	Gone    bool  // the lock judged has left L since: a lock named Judged now is another
	Dead    bool  // the creator of Judged had crashed when it was judged: what makes "exited" true
	OL      bool  // h_ol: the last sample was ownerless
	Into    bool  // mv found L a directory: it moves into it
	Publ    bool  // this attempt's token was published at L once already
	Try     uint8 // the attempt: its token is the op's first, or a spare
	Fresh   bool  // this fence saw its record with its lease unexpired
	Ret     Ret   // where h_clear returns to
	Glob    Set   // token directories still to rmdir (the expansion of L/*)
}

// State is one state of the model: the filesystem and every client.
type State struct {
	FS
	C   [maxClients]Client
	Gen uint8 // reboots so far
}

// me is the token of client c's current op and attempt.
func (s *State) me(c int) Tok { return token(s.Gen, c, int(s.C[c].Pc), int(s.C[c].Try)) }

// exited reports whether the host process named in t's record has gone:
// t is of this boot, and the client that made it crashed in that op (a
// crashed client never comes back; the record names the process by pid and
// start time, so a reused pid is not it).
func (s *State) exited(t Tok) bool {
	if t < 0 || genOf(t) != s.Gen {
		return false
	}
	c := creator(t)
	return s.C[c].Crashed && s.me(c) == t
}
