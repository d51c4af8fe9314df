package erasure

import (
	"fmt"
	"io"
)

// DecodeVerified writes bytes [off, off+length) of an object of size bytes
// to w from shard ranges already in memory: ranges[i] is shard i's bytes
// [shardOff, shardOff+shardLen) as ShardRange gives them for that object
// range, nil for a shard not at hand. The ranges must have passed
// VerifyRange: they are not checked again. Data shards are copied out
// directly; missing ones are rebuilt from any k present. Reading chunks
// where they lie, rather than through Decode's per-shard readers, spares
// a caller that downloads and verifies whole ranges a second copy and a
// second checksum pass over every byte. Fewer than k ranges wraps
// ErrTooFewShards; a range of the wrong length wraps ErrRange.
func (c *Coder) DecodeVerified(w io.Writer, size, off, length int64, ranges [][]byte) error {
	if off < 0 || off > size || length < -1 || length > size-off || len(ranges) != c.n {
		return fmt.Errorf("erasure: decode [%d,+%d) of %d bytes from %d ranges: %w", off, length, size, len(ranges), ErrRange)
	}
	first, last, ok := c.span(size, off, length)
	if !ok {
		return nil
	}
	if length < 0 {
		length = size - off
	}
	if err := c.checkRanges(size, off, length, ranges); err != nil {
		return err
	}
	var scratch reconScratch
	defer scratch.free()
	shards := make([][]byte, c.n)
	bs := int64(c.blockSize)
	start := c.blockOff(first)
	for j := first; j <= last; j++ {
		at, cs := c.blockOff(j)-start+crcLen, int64(c.blockChunk(size, j))
		for i, r := range ranges {
			shards[i] = nil
			if r != nil {
				shards[i] = r[at : at+cs]
			}
		}
		if err := c.dataChunks(shards, &scratch); err != nil {
			return fmt.Errorf("erasure: decode block %d: %w", j, err)
		}
		lo := max(off-j*bs, 0)
		hi := min(off+length-j*bs, int64(c.blockLen(size, j)))
		if err := writeSpan(w, shards[:c.k], int(lo), int(hi)); err != nil {
			return fmt.Errorf("erasure: decode block %d: write: %w", j, err)
		}
	}
	return nil
}

// checkRanges checks that at least k ranges are present, each as long as
// the shard range of [off, off+length).
func (c *Coder) checkRanges(size, off, length int64, ranges [][]byte) error {
	_, want := c.ShardRange(size, off, length)
	have := 0
	for i, r := range ranges {
		if r == nil {
			continue
		}
		if int64(len(r)) != want {
			return fmt.Errorf("erasure: decode: shard %d range of %d bytes, want %d: %w", i, len(r), want, ErrRange)
		}
		have++
	}
	if have < c.k {
		return fmt.Errorf("erasure: decode: %d shard ranges, need %d: %w", have, c.k, ErrTooFewShards)
	}
	return nil
}
