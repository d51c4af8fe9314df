package server

import (
	"fmt"
	"strings"

	"tessera/meta"
)

// codeTooWide is the error for a default code wider than the peers: it
// says what would fit, the same parity on fewer data shards first (as
// many peers may still fail), then one parity shard, and how to get the
// peers the code needs. oneDir: the peers share one DIR (--peers).
func codeTooWide(c meta.Code, have int, oneDir bool) error {
	var opts []string
	for _, fit := range fittingCodes(c, have) {
		opts = append(opts, fmt.Sprintf("--ec %s (%d of %d peers may fail)", fit, fit.M, have))
	}
	more := fmt.Sprintf("--peers %d", c.N())
	if !oneDir {
		more = fmt.Sprintf("%d DIRs", c.N())
	}
	return fmt.Errorf("server: code %s needs %d peers, have %d: use %s, or give %s",
		c, c.N(), have, strings.Join(opts, " or "), more)
}

// fittingCodes are up to two codes as wide as have peers.
func fittingCodes(c meta.Code, have int) []meta.Code {
	if have <= 1 {
		return []meta.Code{{K: 1, M: 0}}
	}
	first := meta.Code{K: have - c.M, M: c.M}
	if first.K < 1 {
		first = meta.Code{K: 1, M: have - 1}
	}
	out := []meta.Code{first}
	if one := (meta.Code{K: have - 1, M: 1}); one != first {
		out = append(out, one)
	}
	return out
}
