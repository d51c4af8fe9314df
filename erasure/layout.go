package erasure

import (
	"errors"
	"fmt"
	"io"
)

// A stripe buffer holds one block as n pieces laid end to end, piece i being
// shard i's [crc][chunk]. Reading the block straight into the data chunks'
// places saves a copy per byte; the price is compact, which re-spaces the
// chunks when the last block turns out shorter than a full one.

// fill reads up to one block from r into the data chunks of buf, laid out
// for a full block. It returns the number of bytes read and whether r ended.
func (c *Coder) fill(r io.Reader, buf []byte) (l int, eof bool, err error) {
	stride := crcLen + c.chunk
	for i := 0; i < c.k && l < c.blockSize; i++ {
		want := min(c.chunk, c.blockSize-l)
		at := i*stride + crcLen
		got, err := io.ReadFull(r, buf[at:at+want])
		l += got
		switch {
		case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
			return l, true, nil
		case err != nil:
			return l, false, err
		}
	}
	return l, false, nil
}

// layout turns buf, filled by fill with l bytes, into a valid stripe for a
// block of l bytes: chunks re-spaced if the block is short and padding
// zeroed. It returns the chunk length.
func (c *Coder) layout(buf []byte, l int) int {
	cs := c.chunk
	if l < c.blockSize {
		if ncs := c.chunkLen(l); ncs != cs {
			c.compact(buf, l, cs, ncs)
			cs = ncs
		}
	}
	for i := range c.k {
		data := min(max(l-i*cs, 0), cs)
		at := i*(crcLen+cs) + crcLen
		clear(buf[at+data : at+cs])
	}
	return cs
}

// compact moves l data bytes laid out with chunk length cs to the layout for
// chunk length ncs < cs. A byte at logical position p sits at
// p + crcLen*(p/cs + 1) and moves to p + crcLen*(p/ncs + 1), never to a lower
// address, so walking segments from the end down never overwrites a byte
// that has yet to move.
func (c *Coder) compact(buf []byte, l, cs, ncs int) {
	for end := l; end > 0; {
		p := end - 1
		seg := min(p%cs, p%ncs) + 1
		start := end - seg
		from := start + crcLen*(start/cs+1)
		to := start + crcLen*(start/ncs+1)
		copy(buf[to:to+seg], buf[from:from+seg])
		end = start
	}
}

// chunks points shards at the n chunks of a stripe with chunk length cs.
func chunks(shards [][]byte, buf []byte, cs int) {
	stride := crcLen + cs
	for i := range shards {
		shards[i] = buf[i*stride+crcLen : (i+1)*stride]
	}
}

// parity computes the parity chunks of shards in place.
func (c *Coder) parity(shards [][]byte) error {
	if c.m == 0 {
		return nil
	}
	if err := c.rs.Encode(shards); err != nil {
		return fmt.Errorf("erasure: encode parity: %w", err)
	}
	return nil
}

// EncodeBytes returns the n shard files of data. It is the synchronous,
// goroutine-free path for objects small enough to hold in memory; its output
// is byte-identical to Encode's.
func (c *Coder) EncodeBytes(data []byte) ([][]byte, error) {
	size := int64(len(data))
	fs := int(c.ShardFileSize(size))
	backing := make([]byte, fs*c.n)
	out := make([][]byte, c.n)
	for i := range out {
		out[i] = backing[i*fs : (i+1)*fs : (i+1)*fs]
	}
	shards := make([][]byte, c.n)
	pos := 0
	for j := range c.blocks(size) {
		blk := data[j*int64(c.blockSize):][:c.blockLen(size, j)]
		cs := c.chunkLen(len(blk))
		for i := range shards {
			shards[i] = out[i][pos+crcLen : pos+crcLen+cs]
		}
		for i := range c.k {
			lo := min(i*cs, len(blk))
			copy(shards[i], blk[lo:min(lo+cs, len(blk))])
		}
		if err := c.parity(shards); err != nil {
			return nil, err
		}
		for i := range out {
			seal(out[i][pos:pos+crcLen+cs], i, j)
		}
		pos += crcLen + cs
	}
	return out, nil
}
