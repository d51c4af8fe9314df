package object

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"io"
	"testing"

	"tessera/meta"
)

// summedReader is a part body that reports checksums, as the gateway's
// does once the verifier has checked them.
type summedReader struct {
	io.Reader
	sums map[string]string
}

func (s summedReader) Checksums() map[string]string { return s.sums }

func crc32b64(data []byte) string {
	var b [4]byte
	binary.BigEndian.PutUint32(b[:], crc32.ChecksumIEEE(data))
	return base64.StdEncoding.EncodeToString(b[:])
}

func sha256b64(data []byte) string {
	s := sha256.Sum256(data)
	return base64.StdEncoding.EncodeToString(s[:])
}

func TestCompositeChecksums(t *testing.T) {
	a, b := []byte("first part"), []byte("second part")
	rawA, rawB := crc32.ChecksumIEEE(a), crc32.ChecksumIEEE(b)
	var cat [8]byte
	binary.BigEndian.PutUint32(cat[:4], rawA)
	binary.BigEndian.PutUint32(cat[4:], rawB)
	wantCRC := crc32b64(cat[:]) + "-2"

	cases := []struct {
		name  string
		parts []meta.Part
		want  map[string]string
	}{
		{"crc32 on every part", []meta.Part{
			{Number: 1, Checksums: map[string]string{"crc32": crc32b64(a)}},
			{Number: 2, Checksums: map[string]string{"crc32": crc32b64(b)}},
		}, map[string]string{"X-Amz-Checksum-CRC32": wantCRC, "X-Amz-Checksum-Type": "COMPOSITE"}},
		{"one part lacks it", []meta.Part{
			{Number: 1, Checksums: map[string]string{"crc32": crc32b64(a)}},
			{Number: 2},
		}, nil},
		{"crc64nvme is full-object only", []meta.Part{
			{Number: 1, Checksums: map[string]string{"crc64nvme": "AAAAAAAAAAA="}},
		}, nil},
		{"undecodable value", []meta.Part{{Number: 1, Checksums: map[string]string{"sha256": "!!"}}}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := compositeChecksums(tc.parts)
			if len(got) != len(tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
			for k, v := range tc.want {
				if got[k] != v {
					t.Fatalf("%s = %q, want %q", k, got[k], v)
				}
			}
		})
	}
}

func TestMultipartChecksums(t *testing.T) {
	l, _ := newTestLayer(t)
	ctx := context.Background()
	id, err := l.NewMultipart(ctx, testBucket, "sums", PutOptions{Headers: map[string]string{"Cache-Control": "no-cache"}})
	if err != nil {
		t.Fatal(err)
	}
	p1, p2 := randBytes(21, testMinPart), randBytes(22, 1000)
	for i, p := range [][]byte{p1, p2} {
		body := summedReader{Reader: bytes.NewReader(p), sums: map[string]string{"sha256": sha256b64(p), "bogus": "x"}}
		if _, err := l.PutPart(ctx, testBucket, "sums", id, i+1, body, int64(len(p)), nil); err != nil {
			t.Fatal(err)
		}
	}
	good := func() []CompletePart {
		return []CompletePart{
			{Number: 1, ETag: md5hex(p1), Checksums: map[string]string{"sha256": sha256b64(p1)}},
			{Number: 2, ETag: md5hex(p2)}, // listing a checksum is optional
		}
	}
	bad := []struct {
		name string
		edit func([]CompletePart)
	}{
		{"wrong value", func(ps []CompletePart) { ps[1].Checksums = map[string]string{"sha256": sha256b64(p1)} }},
		{"algorithm not uploaded", func(ps []CompletePart) { ps[0].Checksums = map[string]string{"crc32": crc32b64(p1)} }},
	}
	for _, tc := range bad {
		ps := good()
		tc.edit(ps)
		if _, err := l.CompleteMultipart(ctx, testBucket, "sums", id, ps); !errors.Is(err, ErrInvalidPart) {
			t.Fatalf("%s: %v, want ErrInvalidPart", tc.name, err)
		}
	}
	info, err := l.CompleteMultipart(ctx, testBucket, "sums", id, good())
	if err != nil {
		t.Fatal(err)
	}
	r1, _ := base64.StdEncoding.DecodeString(sha256b64(p1))
	r2, _ := base64.StdEncoding.DecodeString(sha256b64(p2))
	want := sha256b64(append(r1, r2...)) + "-2"
	for _, h := range []map[string]string{info.Headers, headHeaders(t, l, "sums")} {
		if h["X-Amz-Checksum-SHA256"] != want || h["X-Amz-Checksum-Type"] != "COMPOSITE" || h["Cache-Control"] != "no-cache" {
			t.Fatalf("headers %v, want composite %s", h, want)
		}
	}
}

func headHeaders(t *testing.T, l *Layer, key string) map[string]string {
	t.Helper()
	info, err := l.HeadObject(context.Background(), testBucket, key)
	if err != nil {
		t.Fatal(err)
	}
	return info.Headers
}
