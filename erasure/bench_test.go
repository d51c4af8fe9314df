package erasure

import (
	"bytes"
	"context"
	"io"
	"math/rand"
	"testing"
)

const (
	benchBlock  = 1 << 20
	benchStream = 64 << 20
)

var benchCodes = []code{{4, 2}, {2, 1}, {6, 3}, {10, 4}}

var benchData = func() func() []byte {
	var data []byte
	return func() []byte {
		if data == nil {
			data = randBytes(rand.New(rand.NewSource(99)), benchStream)
		}
		return data
	}
}()

func BenchmarkEncode(b *testing.B) {
	data := benchData()
	for _, cd := range benchCodes {
		b.Run(cd.String(), func(b *testing.B) {
			c := newCoder(b, cd.k, cd.m, benchBlock)
			w := make([]io.Writer, c.N())
			for i := range w {
				w[i] = io.Discard
			}
			b.SetBytes(benchStream)
			b.ReportAllocs()
			for b.Loop() {
				if _, _, err := c.Encode(context.Background(), bytes.NewReader(data), w, c.N()); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkDecode(b *testing.B) {
	benchDecode(b, func(cd code) []int { return seq(cd.k + cd.m) })
}

// BenchmarkDecodeDegraded decodes with the first m data shards missing, so
// every block needs reconstruction.
func BenchmarkDecodeDegraded(b *testing.B) {
	benchDecode(b, func(cd code) []int { return seq(cd.k + cd.m)[cd.m:] })
}

func benchDecode(b *testing.B, order func(code) []int) {
	data := benchData()
	for _, cd := range benchCodes {
		b.Run(cd.String(), func(b *testing.B) {
			c := newCoder(b, cd.k, cd.m, benchBlock)
			files, err := c.EncodeBytes(data)
			if err != nil {
				b.Fatal(err)
			}
			s := &store{files: files}
			b.SetBytes(benchStream)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := c.Decode(context.Background(), io.Discard, benchStream, 0, -1, order(cd), s.open); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
