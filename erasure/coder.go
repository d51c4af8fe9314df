package erasure

import (
	"errors"
	"fmt"

	"github.com/klauspost/reedsolomon"
)

var (
	// ErrBitrot means a shard block failed its checksum.
	ErrBitrot = errors.New("erasure: bitrot: shard block checksum mismatch")
	// ErrTooFewShards means fewer than k shards (or fewer writers than the
	// write quorum) were usable.
	ErrTooFewShards = errors.New("erasure: too few usable shards")
	// ErrRange means a requested object byte range lies outside the object.
	ErrRange = errors.New("erasure: range outside the object")
)

// crcLen is the size of the checksum header before every chunk.
const crcLen = 4

// maxBlockSize keeps every per-block quantity comfortably inside an int.
const maxBlockSize = 1 << 30

// Coder encodes and decodes one Reed-Solomon code over one block size. It is
// immutable and safe for concurrent use.
type Coder struct {
	k, m, n   int
	blockSize int
	chunk     int // chunk length of a full block: ceil(blockSize/k)
	rs        reedsolomon.Encoder
}

// New returns a Coder for k data shards, m parity shards and blocks of
// blockSize bytes. It needs k >= 1, m >= 0, k+m <= 256 and
// 1 <= blockSize <= 1 GiB.
func New(k, m, blockSize int) (*Coder, error) {
	if k < 1 || k > 256 || m < 0 || m > 256-k {
		return nil, fmt.Errorf("erasure: code %d+%d: want k>=1, m>=0, k+m<=256", k, m)
	}
	if blockSize < 1 || blockSize > maxBlockSize {
		return nil, fmt.Errorf("erasure: block size %d: want 1..%d", blockSize, maxBlockSize)
	}
	// One goroutine per encode: on a small machine the parallelism comes
	// from concurrent requests, and the library's own fan-out only adds
	// scheduling cost there (measured faster for every code we use).
	rs, err := reedsolomon.New(k, m, reedsolomon.WithMaxGoroutines(1))
	if err != nil {
		return nil, fmt.Errorf("erasure: code %d+%d: %w", k, m, err)
	}
	return &Coder{k: k, m: m, n: k + m, blockSize: blockSize, chunk: ceilDiv(blockSize, k), rs: rs}, nil
}

// K returns the number of data shards.
func (c *Coder) K() int { return c.k }

// M returns the number of parity shards.
func (c *Coder) M() int { return c.m }

// N returns the total number of shards, K()+M().
func (c *Coder) N() int { return c.n }

// BlockSize returns the number of object bytes per block.
func (c *Coder) BlockSize() int { return c.blockSize }

// ShardFileSize returns the length in bytes of every shard file of an object
// of size bytes.
func (c *Coder) ShardFileSize(size int64) int64 {
	nb := c.blocks(size)
	if nb == 0 {
		return 0
	}
	return c.blockEnd(size, nb-1)
}

// ShardRange returns the byte range [shardOff, shardOff+shardLen) of every
// shard file that holds object bytes [off, off+length) of an object of size
// bytes. A negative length, or one running past the end, means "to the end".
// An empty or out-of-bounds request gives (0, 0).
func (c *Coder) ShardRange(size, off, length int64) (shardOff, shardLen int64) {
	first, last, ok := c.span(size, off, length)
	if !ok {
		return 0, 0
	}
	start := c.blockOff(first)
	return start, c.blockEnd(size, last) - start
}

// span returns the first and last block holding object bytes
// [off, off+length), clamping length as ShardRange documents.
func (c *Coder) span(size, off, length int64) (first, last int64, ok bool) {
	if off < 0 || off >= size {
		return 0, 0, false
	}
	if length < 0 || length > size-off {
		length = size - off
	}
	if length == 0 {
		return 0, 0, false
	}
	bs := int64(c.blockSize)
	return off / bs, (off + length - 1) / bs, true
}

// blocks returns the number of blocks of an object of size bytes.
func (c *Coder) blocks(size int64) int64 {
	if size <= 0 {
		return 0
	}
	bs := int64(c.blockSize)
	return (size + bs - 1) / bs
}

// blockLen returns the number of object bytes in block j.
func (c *Coder) blockLen(size, j int64) int {
	bs := int64(c.blockSize)
	return int(min(bs, size-j*bs))
}

// chunkLen returns the chunk length of a block of l bytes.
func (c *Coder) chunkLen(l int) int { return ceilDiv(l, c.k) }

// blockChunk returns the chunk length of block j.
func (c *Coder) blockChunk(size, j int64) int { return c.chunkLen(c.blockLen(size, j)) }

// blockOff returns where block j starts in every shard file. Only the last
// block can be shorter, so the offset is the same for every block that
// exists.
func (c *Coder) blockOff(j int64) int64 { return j * int64(crcLen+c.chunk) }

// blockEnd returns where block j ends in every shard file.
func (c *Coder) blockEnd(size, j int64) int64 {
	return c.blockOff(j) + int64(crcLen+c.blockChunk(size, j))
}

// checkShard validates a shard index.
func (c *Coder) checkShard(i int) error {
	if i < 0 || i >= c.n {
		return fmt.Errorf("erasure: shard %d outside 0..%d", i, c.n-1)
	}
	return nil
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }
