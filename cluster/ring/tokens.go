package ring

import (
	"encoding/binary"
	"slices"

	"github.com/cespare/xxhash/v2"
)

// tokenPos is the position of token j of a peer. The encoding (ID bytes,
// a zero byte, j as 4 big-endian bytes) is part of the on-disk contract:
// changing it moves every object, which the placement golden test catches.
func tokenPos(id string, j int) uint64 {
	buf := make([]byte, 0, len(id)+5)
	buf = append(buf, id...)
	buf = append(buf, 0)
	buf = binary.BigEndian.AppendUint32(buf, uint32(j))
	return xxhash.Sum64(buf)
}

// KeyHash is the position of a key on the circle.
func KeyHash(key string) uint64 { return xxhash.Sum64String(key) }

// buildTokens lays out every peer's tokens. Ties between equal positions
// (astronomically rare) are broken by peer order, which is by ID, so the
// result never depends on input order.
func buildTokens(peers []Peer) []token {
	total := 0
	for _, p := range peers {
		total += p.Vnodes
	}
	toks := make([]token, 0, total)
	for i, p := range peers {
		for j := range p.Vnodes {
			toks = append(toks, token{pos: tokenPos(string(p.ID), j), peer: i})
		}
	}
	slices.SortFunc(toks, func(a, b token) int {
		if a.pos != b.pos {
			if a.pos < b.pos {
				return -1
			}
			return 1
		}
		return a.peer - b.peer
	})
	return toks
}

// successor is the index of the first token at or after h, wrapping.
func (r *Ring) successor(h uint64) int {
	i, _ := slices.BinarySearchFunc(r.tokens, h, func(t token, h uint64) int {
		switch {
		case t.pos < h:
			return -1
		case t.pos > h:
			return 1
		}
		return 0
	})
	if i == len(r.tokens) {
		return 0
	}
	return i
}
