package erasure

import (
	"context"
	"fmt"
	"io"
	"slices"
)

// Decode writes bytes [off, off+length) of an object of size bytes to w;
// length -1 means to the end of the object, and a range outside the object
// wraps ErrRange.
//
// order lists shard indexes by preference. Decode opens the first k through
// open, with the ranges ShardRange gives, reads them block by block in
// parallel and verifies every chunk's checksum. A shard that fails is closed
// and the next one in order is opened at the current block; once order is
// exhausted, shards dropped for bitrot are retried from a later block. When
// the k shards in use are the data shards, bytes are copied out without
// Reed-Solomon math. A block is written only once all of its k chunks have
// verified, so on error what was written is a correct prefix of the range.
// The error wraps ErrTooFewShards (and ErrBitrot if a checksum failed) when
// fewer than k shards are usable for a block. The stats say which shards were
// bad and which were used, also on error.
func (c *Coder) Decode(ctx context.Context, w io.Writer, size, off, length int64, order []int, open OpenFunc) (DecodeStats, error) {
	stats := DecodeStats{Bad: map[int]error{}}
	if off < 0 || off > size || length < -1 || length > size-off {
		return stats, fmt.Errorf("erasure: decode [%d,+%d) of %d bytes: %w", off, length, size, ErrRange)
	}
	if err := c.checkOrder(order); err != nil {
		return stats, err
	}
	first, last, ok := c.span(size, off, length)
	if !ok {
		return stats, nil
	}
	if length < 0 {
		length = size - off
	}
	if err := c.enough(order); err != nil {
		return stats, err
	}
	src := c.newSource(ctx, size, first, last, order, open, &stats)
	defer src.close()
	var scratch reconScratch
	defer scratch.free()
	bs := int64(c.blockSize)
	for j := first; j <= last; j++ {
		shards, err := src.block(j)
		if err != nil {
			return stats, err
		}
		if err := c.dataChunks(shards, &scratch); err != nil {
			return stats, fmt.Errorf("erasure: decode block %d: %w", j, err)
		}
		lo := max(off-j*bs, 0)
		hi := min(off+length-j*bs, int64(c.blockLen(size, j)))
		if err := writeSpan(w, shards[:c.k], int(lo), int(hi)); err != nil {
			return stats, fmt.Errorf("erasure: decode block %d: write: %w", j, err)
		}
		src.release()
	}
	return stats, nil
}

// reconScratch holds chunk buffers for shards being reconstructed, taken
// from the pool on first need.
type reconScratch struct {
	bufs map[int]*[]byte
}

// slot returns an empty slice with room for a chunk of shard i, with the
// checksum header's room in front of it.
func (r *reconScratch) slot(c *Coder, i int) []byte {
	if r.bufs == nil {
		r.bufs = make(map[int]*[]byte)
	}
	b, ok := r.bufs[i]
	if !ok {
		b = getBuf(crcLen + c.chunk)
		r.bufs[i] = b
	}
	return (*b)[crcLen:crcLen]
}

func (r *reconScratch) piece(i, cs int) []byte { return (*r.bufs[i])[:crcLen+cs] }

func (r *reconScratch) free() {
	for _, b := range r.bufs {
		putBuf(b)
	}
}

// dataChunks fills in shards' missing data chunks, if any.
func (c *Coder) dataChunks(shards [][]byte, scratch *reconScratch) error {
	missing := false
	for i := range c.k {
		if shards[i] == nil {
			shards[i] = scratch.slot(c, i)
			missing = true
		}
	}
	if !missing {
		return nil
	}
	return c.rs.ReconstructData(shards)
}

// writeSpan writes block bytes [lo, hi) from the data chunks.
func writeSpan(w io.Writer, data [][]byte, lo, hi int) error {
	cs := len(data[0])
	for i, chunk := range data {
		a, b := max(lo, i*cs), min(hi, (i+1)*cs)
		if a >= b {
			continue
		}
		if err := writeFull(w, chunk[a-i*cs:b-i*cs]); err != nil {
			return err
		}
	}
	return nil
}

// Rebuild regenerates the whole shard files of the shards in targets (keyed
// by shard index) for an object of size bytes, writing each, checksums
// included, to its writer. It reads k good shards through open with the same
// fallback rules as Decode; target shards are never read, since they are the
// ones being replaced. The output is byte-identical to what Encode wrote. A
// write error aborts the rebuild.
func (c *Coder) Rebuild(ctx context.Context, size int64, order []int, open OpenFunc, targets map[int]io.Writer) (DecodeStats, error) {
	return c.rebuild(ctx, size, order, open, targets, false)
}

// RebuildFrom is Rebuild where the sources are other copies than the ones
// being written (shards moving to other peers): a target shard is read
// like any other, from where it was.
func (c *Coder) RebuildFrom(ctx context.Context, size int64, order []int, open OpenFunc, targets map[int]io.Writer) (DecodeStats, error) {
	return c.rebuild(ctx, size, order, open, targets, true)
}

func (c *Coder) rebuild(ctx context.Context, size int64, order []int, open OpenFunc, targets map[int]io.Writer, readTargets bool) (DecodeStats, error) {
	stats := DecodeStats{Bad: map[int]error{}}
	tidx := make([]int, 0, len(targets))
	for t, w := range targets {
		if err := c.checkShard(t); err != nil {
			return stats, fmt.Errorf("erasure: rebuild: %w", err)
		}
		if w == nil {
			return stats, fmt.Errorf("erasure: rebuild: shard %d: nil writer", t)
		}
		tidx = append(tidx, t)
	}
	slices.Sort(tidx)
	if err := c.checkOrder(order); err != nil {
		return stats, err
	}
	if !readTargets {
		order = slices.DeleteFunc(slices.Clone(order), func(i int) bool { return targets[i] != nil })
	}
	nb := c.blocks(size)
	if nb == 0 || len(tidx) == 0 {
		return stats, nil
	}
	if err := c.enough(order); err != nil {
		return stats, err
	}
	src := c.newSource(ctx, size, 0, nb-1, order, open, &stats)
	defer src.close()
	var scratch reconScratch
	defer scratch.free()
	required := make([]bool, c.n)
	for j := range nb {
		shards, err := src.block(j)
		if err != nil {
			return stats, err
		}
		cs := c.blockChunk(size, j)
		missing := false
		for _, t := range tidx {
			read := shards[t]
			shards[t] = scratch.slot(c, t)
			// A target read from its other copy (readTargets) is written
			// as it was read and verified; the others are reconstructed.
			required[t] = read == nil
			missing = missing || read == nil
			if read != nil {
				shards[t] = append(shards[t], read[:cs]...)
			}
		}
		if missing {
			if err := c.rs.ReconstructSome(shards, required); err != nil {
				return stats, fmt.Errorf("erasure: rebuild block %d: %w", j, err)
			}
		}
		for _, t := range tidx {
			piece := scratch.piece(t, cs)
			seal(piece, t, j)
			if err := writeFull(targets[t], piece); err != nil {
				return stats, fmt.Errorf("erasure: rebuild shard %d block %d: write: %w", t, j, err)
			}
		}
		src.release()
	}
	return stats, nil
}

// checkOrder rejects shard indexes out of range and duplicates.
func (c *Coder) checkOrder(order []int) error {
	seen := make([]bool, c.n)
	for _, i := range order {
		if err := c.checkShard(i); err != nil {
			return fmt.Errorf("erasure: order: %w", err)
		}
		if seen[i] {
			return fmt.Errorf("erasure: order: shard %d listed twice", i)
		}
		seen[i] = true
	}
	return nil
}

// enough fails early, without opening anything, when order cannot yield k
// shards.
func (c *Coder) enough(order []int) error {
	if len(order) < c.k {
		return fmt.Errorf("erasure: %d shards to read, need %d: %w", len(order), c.k, ErrTooFewShards)
	}
	return nil
}
