package model

import "fmt"

// key is a State packed into 358 bits, for the search's visited set: a
// fraction of the memory, and of the hashing, of the State itself. Only the
// three explored clients are packed (the fresh one of the progress check
// never is), so a token index is one of 0..11 or 16..27.
type key [6]uint64

type bitbuf struct {
	k key
	n uint
}

func (b *bitbuf) put(v uint64, width uint) {
	if v >= 1<<width {
		panic(fmt.Sprintf("model: %d does not fit in %d bits", v, width))
	}
	w, o := b.n/64, b.n%64
	b.k[w] |= v << o
	if o+width > 64 {
		b.k[w+1] |= v >> (64 - o)
	}
	b.n += width
}

func (b *bitbuf) get(width uint) uint64 {
	w, o := b.n/64, b.n%64
	v := b.k[w] >> o
	if o+width > 64 {
		v |= b.k[w+1] << (64 - o)
	}
	b.n += width
	return v & (1<<width - 1)
}

// Sets of the explored clients' tokens: the first freshSlot*maxOps*maxTries
// bits of each boot's perGen.
const (
	genTokens           = freshSlot * maxOps * maxTries
	genMask             = 1<<genTokens - 1
	packedTokens    Set = genMask | genMask<<perGen
	packedSetBits       = 2 * genTokens
	packedTokenBits     = 5 // a token of an explored client, plus one (noTok)
)

func (b *bitbuf) putSet(s Set) {
	if s&^packedTokens != 0 {
		panic(fmt.Sprintf("model: set %#x holds a token no explored client has", s))
	}
	b.put(uint64(s&genMask|s>>perGen&genMask<<genTokens), packedSetBits)
}

func (b *bitbuf) getSet() Set {
	v := Set(b.get(packedSetBits))
	return v&genMask | v>>genTokens<<perGen
}

func (b *bitbuf) putBool(v bool) {
	if v {
		b.put(1, 1)
	} else {
		b.put(0, 1)
	}
}

func (b *bitbuf) getBool() bool { return b.get(1) == 1 }

func pack(s *State) key {
	var b bitbuf
	f := &s.FS
	for _, v := range []bool{f.Lock, f.Owner, f.OwnerTmp, f.Initial, f.Rebooted, f.LockOld} {
		b.putBool(v)
	}
	for _, v := range []Set{f.Dir, f.Rec, f.Landed, f.Stage, f.StageRec, f.Moved, f.Expired, f.PrevBoot} {
		b.putSet(v)
	}
	b.put(uint64(s.Gen), 1)
	for c := range freshSlot {
		cl := &s.C[c]
		b.put(uint64(cl.Pc), 2)
		b.put(uint64(cl.Try), 1)
		b.put(uint64(cl.Pos), 5)
		b.put(uint64(cl.Kind), 3)
		b.put(uint64(cl.Judged+1), packedTokenBits)
		b.put(uint64(cl.Why), 3)
		b.put(uint64(cl.Ret), 3)
		for _, v := range []bool{cl.Crashed, cl.Gone, cl.Dead, cl.OL, cl.Into, cl.Publ, cl.Fresh} {
			b.putBool(v)
		}
		b.putSet(cl.Glob)
	}
	if s.C[freshSlot] != (Client{Pos: PDone, Judged: noTok}) {
		panic("model: the fresh client's slot is in use")
	}
	return b.k
}

func unpack(k key) State {
	var s State
	b := bitbuf{k: k}
	f := &s.FS
	for _, v := range []*bool{&f.Lock, &f.Owner, &f.OwnerTmp, &f.Initial, &f.Rebooted, &f.LockOld} {
		*v = b.getBool()
	}
	for _, v := range []*Set{&f.Dir, &f.Rec, &f.Landed, &f.Stage, &f.StageRec, &f.Moved, &f.Expired, &f.PrevBoot} {
		*v = b.getSet()
	}
	s.Gen = uint8(b.get(1))
	for c := range freshSlot {
		cl := &s.C[c]
		cl.Pc = uint8(b.get(2))
		cl.Try = uint8(b.get(1))
		cl.Pos = Pos(b.get(5))
		cl.Kind = Kind(b.get(3))
		cl.Judged = Tok(b.get(packedTokenBits)) - 1
		cl.Why = Why(b.get(3))
		cl.Ret = Ret(b.get(3))
		for _, v := range []*bool{&cl.Crashed, &cl.Gone, &cl.Dead, &cl.OL, &cl.Into, &cl.Publ, &cl.Fresh} {
			*v = b.getBool()
		}
		cl.Glob = b.getSet()
	}
	s.C[freshSlot] = Client{Pos: PDone, Judged: noTok}
	return s
}
