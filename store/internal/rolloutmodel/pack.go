package rolloutmodel

import "fmt"

// key is a State packed into 4 words, for the search's visited set.
type key [4]uint64

type bitbuf struct {
	k key
	n uint
}

func (b *bitbuf) put(v uint64, width uint) {
	if v >= 1<<width {
		panic(fmt.Sprintf("rolloutmodel: %d does not fit in %d bits", v, width))
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

func b2u(v bool) uint64 {
	if v {
		return 1
	}
	return 0
}

func pack(s *State) key {
	var b bitbuf
	for i := range s.H {
		h := &s.H[i]
		b.put(uint64(h.Cur), 1)
		b.put(uint64(h.Serving), 1)
		b.put(uint64(h.Next), 2)
		b.put(uint64(h.Back), 2)
		b.put(uint64(h.Vote), 2)
		b.put(uint64(h.Dec), 2)
		b.put(uint64(h.Done), 2)
		b.put(uint64(h.Holder), 2)
		for _, v := range [4]bool{h.Healthy, h.Passed, h.FromGone, h.Exp} {
			b.put(b2u(v), 1)
		}
	}
	for i := range 7 {
		c := s.slot(i)
		b.put(uint64(c.Pos), 5)
		b.put(uint64(c.In), 3)
		b.put(uint64(c.Out), 4)
		b.put(uint64(c.Side), 1)
		b.put(uint64(c.Told), 2)
		for _, v := range [3]bool{c.Fence, c.Lost, c.Dead} {
			b.put(b2u(v), 1)
		}
	}
	for _, c := range [2]*Coord{&s.C, &s.R} {
		b.put(uint64(c.Pos), 5)
		b.put(uint64(c.I), 2)
		b.put(b2u(c.Crashed), 1)
		b.put(b2u(c.Veto), 1)
	}
	b.put(uint64(s.Cut), 3)
	b.put(uint64(s.Faults), 2)
	b.put(uint64(s.Stalls), 2)
	return b.k
}

func unpack(k key) State {
	var s State
	b := bitbuf{k: k}
	for i := range s.H {
		h := &s.H[i]
		h.Cur = Side(b.get(1))
		h.Serving = Side(b.get(1))
		h.Next = Link(b.get(2))
		h.Back = Link(b.get(2))
		h.Vote = Word(b.get(2))
		h.Dec = Word(b.get(2))
		h.Done = Done(b.get(2))
		h.Holder = Kind(b.get(2))
		for _, v := range []*bool{&h.Healthy, &h.Passed, &h.FromGone, &h.Exp} {
			*v = b.get(1) == 1
		}
	}
	for i := range 7 {
		c := s.slot(i)
		c.Pos = Pos(b.get(5))
		c.In = Msg(b.get(3))
		c.Out = Ack(b.get(4))
		c.Side = Side(b.get(1))
		c.Told = Word(b.get(2))
		for _, v := range []*bool{&c.Fence, &c.Lost, &c.Dead} {
			*v = b.get(1) == 1
		}
	}
	for _, c := range []*Coord{&s.C, &s.R} {
		c.Pos = CPos(b.get(5))
		c.I = uint8(b.get(2))
		c.Crashed = b.get(1) == 1
		c.Veto = b.get(1) == 1
	}
	s.Cut = uint8(b.get(3))
	s.Faults = uint8(b.get(2))
	s.Stalls = uint8(b.get(2))
	return s
}

// slot is host command slot i: P0..P2, Q0..Q2, K.
func (s *State) slot(i int) *Cmd {
	switch {
	case i < maxHosts:
		return &s.P[i]
	case i < 2*maxHosts:
		return &s.Q[i-maxHosts]
	}
	return &s.K
}
