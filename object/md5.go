package object

import (
	"crypto/md5"
	"hash"
	"sync"

	md5simd "github.com/minio/md5-simd"
)

// simdMD5Min is the smallest declared body hashed on the shared SIMD
// server. md5-simd computes up to 16 independent sums in one core's
// vector lanes (8 with AVX2), so concurrent large uploads share the cost
// of their ETags; it falls back to the scalar code when only one or two
// streams are active. Small bodies stay on crypto/md5, whose per-hash
// setup is cheaper than a lane's round trip.
const simdMD5Min = 1 << 20

var (
	md5Once   sync.Once
	md5Server md5simd.Server
)

// etagHash is a body's MD5; release returns its lane when the body is
// done with (a no-op for crypto/md5).
type etagHash struct {
	hash.Hash
	release func()
}

// newETagHash returns the MD5 for a body of size bytes (-1: unknown,
// which may be large).
func newETagHash(size int64) etagHash {
	if size >= 0 && size < simdMD5Min {
		return etagHash{Hash: md5.New(), release: func() {}}
	}
	md5Once.Do(func() { md5Server = md5simd.NewServer() })
	h := md5Server.NewHash()
	return etagHash{Hash: h, release: h.Close}
}
