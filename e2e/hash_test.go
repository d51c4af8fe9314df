package e2e

import (
	"crypto/sha256"
	"hash"
)

type hasher struct{ h hash.Hash }

func newHash() *hasher { return &hasher{sha256.New()} }

func (h *hasher) Write(p []byte) (int, error) { return h.h.Write(p) }

func (h *hasher) sum() [32]byte {
	var out [32]byte
	copy(out[:], h.h.Sum(nil))
	return out
}
