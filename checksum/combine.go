package checksum

import (
	"encoding/binary"
	"fmt"
	"math/bits"
)

// crcParams are a CRC's reflected polynomial and width in bits.
type crcParams struct {
	poly  uint64
	width int
}

var crcs = map[Algorithm]crcParams{
	CRC32:     {0xEDB88320, 32},
	CRC32C:    {0x82F63B78, 32},
	CRC64NVME: {bits.Reverse64(0xAD93D23594C93659), 64},
}

// Combine returns the FULL_OBJECT checksum of an object from its parts'
// raw CRCs and sizes, in part order: the CRC the object's bytes would have
// hashed to. Only the CRCs combine this way (Allows(FullObject)).
//
// The method is zlib's crc32_combine: appending len2 bytes to a message
// multiplies its CRC register by x^(8*len2) modulo the polynomial, a
// linear map over GF(2) that repeated squaring builds in O(log len2)
// matrix products; the second CRC is then added (xored) in.
func (a Algorithm) Combine(sums [][]byte, sizes []int64) ([]byte, error) {
	p, ok := crcs[a]
	switch {
	case !ok:
		return nil, fmt.Errorf("checksum: %s does not combine", a)
	case len(sums) != len(sizes) || len(sums) == 0:
		return nil, fmt.Errorf("checksum: %d sums for %d sizes", len(sums), len(sizes))
	}
	var acc uint64
	for i, s := range sums {
		if len(s) != p.width/8 {
			return nil, fmt.Errorf("%w: part %d %s is %d bytes", ErrInvalidValue, i+1, a, len(s))
		}
		v := readCRC(s, p.width)
		if i == 0 {
			acc = v
			continue
		}
		acc = combine(p, acc, v, sizes[i])
	}
	out := make([]byte, p.width/8)
	if p.width == 32 {
		binary.BigEndian.PutUint32(out, uint32(acc))
	} else {
		binary.BigEndian.PutUint64(out, acc)
	}
	return out, nil
}

func readCRC(b []byte, width int) uint64 {
	if width == 32 {
		return uint64(binary.BigEndian.Uint32(b))
	}
	return binary.BigEndian.Uint64(b)
}

// combine is the CRC of A||B from crc(A), crc(B) and len(B).
func combine(p crcParams, crc1, crc2 uint64, len2 int64) uint64 {
	if len2 <= 0 {
		return crc1
	}
	even := make([]uint64, p.width)
	odd := make([]uint64, p.width)
	// odd is the operator for one zero bit.
	odd[0] = p.poly
	row := uint64(1)
	for n := 1; n < p.width; n++ {
		odd[n] = row
		row <<= 1
	}
	square(even, odd) // two zero bits
	square(odd, even) // four
	// Each pass squares again, so the first applies one zero byte.
	for {
		square(even, odd)
		if len2&1 != 0 {
			crc1 = times(even, crc1)
		}
		if len2 >>= 1; len2 == 0 {
			break
		}
		square(odd, even)
		if len2&1 != 0 {
			crc1 = times(odd, crc1)
		}
		if len2 >>= 1; len2 == 0 {
			break
		}
	}
	return crc1 ^ crc2
}

func times(mat []uint64, vec uint64) uint64 {
	var sum uint64
	for i := 0; vec != 0; i, vec = i+1, vec>>1 {
		if vec&1 != 0 {
			sum ^= mat[i]
		}
	}
	return sum
}

func square(dst, mat []uint64) {
	for n := range mat {
		dst[n] = times(mat, mat[n])
	}
}
