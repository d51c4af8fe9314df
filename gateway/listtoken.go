package gateway

import (
	"encoding/base64"
	"encoding/binary"
	"hash/crc32"
)

// Continuation tokens are opaque to clients, as S3's are ("obfuscated and
// not a real key"): base64url of a kind byte, the listing position and a
// CRC-32C over kind, bucket and position. The checksum is not a secret; it
// makes a token that was not issued here, was cut short or belongs to
// another bucket's listing fail with S3's InvalidArgument instead of
// silently listing from an arbitrary position.
const (
	tokenObjects byte = 'o' // ListObjectsV2 NextContinuationToken
	tokenBuckets byte = 'b' // ListBuckets ContinuationToken
)

// maxTokenLen bounds what decodeToken reads: a position is at most a key
// (1024 bytes), and S3 documents 1024 characters for ListBuckets tokens.
const maxTokenLen = 2048

var tokenTable = crc32.MakeTable(crc32.Castagnoli)

// encodeToken makes the continuation token for position in bucket's
// listing of the given kind ("" for the bucket list).
func encodeToken(kind byte, bucket, position string) string {
	b := make([]byte, 0, 1+len(position)+4)
	b = append(b, kind)
	b = append(b, position...)
	b = binary.BigEndian.AppendUint32(b, tokenSum(kind, bucket, position))
	return base64.RawURLEncoding.EncodeToString(b)
}

// decodeToken returns the position a token encodes. An empty, malformed,
// foreign or damaged token is S3's InvalidArgument.
func decodeToken(kind byte, bucket, tok string) (string, error) {
	if len(tok) == 0 || len(tok) > maxTokenLen {
		return "", apiErr(errInvalidContinuationToken)
	}
	b, err := base64.RawURLEncoding.DecodeString(tok)
	if err != nil || len(b) < 5 || b[0] != kind {
		return "", apiErr(errInvalidContinuationToken)
	}
	position := string(b[1 : len(b)-4])
	if binary.BigEndian.Uint32(b[len(b)-4:]) != tokenSum(kind, bucket, position) {
		return "", apiErr(errInvalidContinuationToken)
	}
	return position, nil
}

func tokenSum(kind byte, bucket, position string) uint32 {
	h := crc32.New(tokenTable)
	h.Write([]byte{kind})
	h.Write([]byte(bucket))
	h.Write([]byte{0}) // bucket names hold no NUL: "ab"+"c" ≠ "a"+"bc"
	h.Write([]byte(position))
	return h.Sum32()
}
