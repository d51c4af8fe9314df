package object

import (
	"bytes"
	"context"
	"errors"
	"io"
	"testing"

	"tessera/checksum"
)

// summedReader is a body that declares a checksum, as the gateway's does
// once the verifier has checked it.
type summedReader struct {
	io.Reader
	alg checksum.Algorithm
	sum string
}

func (s summedReader) DeclaredChecksum() checksum.Algorithm { return s.alg }
func (s summedReader) Checksums() map[string]string {
	return map[string]string{s.alg.Lower(): s.sum}
}

func declared(alg checksum.Algorithm, data []byte) io.Reader {
	return summedReader{Reader: bytes.NewReader(data), alg: alg, sum: alg.Sum(data)}
}

func TestPutChecksums(t *testing.T) {
	l, _ := newTestLayer(t)
	ctx := context.Background()
	small, large := randBytes(1, 100), randBytes(2, 600<<10) // inlined, staged
	for _, c := range []struct {
		name string
		body func([]byte) io.Reader
		want checksum.Algorithm
	}{
		{"none declared: default", func(b []byte) io.Reader { return bytes.NewReader(b) }, checksum.CRC64NVME},
		{"declared sha256", func(b []byte) io.Reader { return declared(checksum.SHA256, b) }, checksum.SHA256},
		{"declared xxhash128", func(b []byte) io.Reader { return declared(checksum.XXHASH128, b) }, checksum.XXHASH128},
	} {
		for _, data := range [][]byte{small, large} {
			if _, err := l.PutObject(ctx, testBucket, "k", c.body(data), int64(len(data)), PutOptions{}); err != nil {
				t.Fatal(err)
			}
			info, err := l.HeadObject(ctx, testBucket, "k")
			if err != nil {
				t.Fatal(err)
			}
			want := ChecksumInfo{Algorithm: c.want, Type: checksum.FullObject, Value: c.want.Sum(data)}
			if info.Checksum != want || len(info.PartChecksums) != 1 || info.PartChecksums[0] != want.Value {
				t.Fatalf("%s, %d bytes: %+v %v, want %+v", c.name, len(data), info.Checksum, info.PartChecksums, want)
			}
		}
	}
}

// mpUpload uploads parts to a new upload and returns its id and the
// CompleteParts listing each part's checksum of alg ("" none).
func mpUpload(t *testing.T, l *Layer, key string, opts PutOptions, bodies []io.Reader, parts [][]byte, list checksum.Algorithm) (string, []CompletePart) {
	t.Helper()
	ctx := context.Background()
	id, err := l.NewMultipart(ctx, testBucket, key, opts)
	if err != nil {
		t.Fatal(err)
	}
	var cps []CompletePart
	for i, p := range parts {
		info, err := l.PutPart(ctx, testBucket, key, id, i+1, bodies[i], int64(len(p)), nil)
		if err != nil {
			t.Fatalf("part %d: %v", i+1, err)
		}
		cp := CompletePart{Number: i + 1, ETag: md5hex(p)}
		if list != "" {
			cp.Checksums = map[string]string{list.Lower(): info.Checksums[list.Lower()]}
		}
		cps = append(cps, cp)
	}
	return id, cps
}

func TestMultipartFullObjectChecksum(t *testing.T) {
	l, _ := newTestLayer(t)
	ctx := context.Background()
	parts := [][]byte{randBytes(3, testMinPart), randBytes(4, testMinPart+7), randBytes(5, 999)}
	whole := bytes.Join(parts, nil)
	plain := func() []io.Reader {
		return []io.Reader{bytes.NewReader(parts[0]), declared(checksum.CRC32C, parts[1]), bytes.NewReader(parts[2])}
	}
	opts := PutOptions{ChecksumAlgorithm: checksum.CRC32C, ChecksumType: checksum.FullObject}
	id, cps := mpUpload(t, l, "full", opts, plain(), parts, checksum.CRC32C)
	want := checksum.CRC32C.Sum(whole)
	wrongType := CompleteOptions{Type: checksum.Composite}
	if _, err := l.CompleteMultipart(ctx, testBucket, "full", id, cps, wrongType); !isChecksumErr(err, ChecksumTypeMismatch) {
		t.Fatalf("composite complete of a full-object upload: %v", err)
	}
	wrongSum := CompleteOptions{Checksum: ChecksumInfo{Algorithm: checksum.CRC32C, Value: checksum.CRC32C.Sum(parts[0])}}
	if _, err := l.CompleteMultipart(ctx, testBucket, "full", id, cps, wrongSum); !isChecksumErr(err, ObjectChecksumMismatch) {
		t.Fatalf("wrong object checksum: %v", err)
	}
	right := CompleteOptions{Checksum: ChecksumInfo{Algorithm: checksum.CRC32C, Value: want}, Type: checksum.FullObject}
	info, err := l.CompleteMultipart(ctx, testBucket, "full", id, cps, right)
	if err != nil {
		t.Fatal(err)
	}
	if info.Checksum != (ChecksumInfo{Algorithm: checksum.CRC32C, Type: checksum.FullObject, Value: want}) {
		t.Fatalf("object checksum %+v, want crc32c %s of the whole", info.Checksum, want)
	}
}

// TestMultipartDefaultChecksum: an upload created without an algorithm
// gets S3's default, whatever its parts declared and Complete states.
func TestMultipartDefaultChecksum(t *testing.T) {
	l, _ := newTestLayer(t)
	parts := [][]byte{randBytes(6, testMinPart), randBytes(7, 10)}
	bodies := []io.Reader{declared(checksum.CRC32, parts[0]), declared(checksum.CRC32, parts[1])}
	id, cps := mpUpload(t, l, "dflt", PutOptions{}, bodies, parts, checksum.CRC32)
	ignored := CompleteOptions{Checksum: ChecksumInfo{Algorithm: checksum.CRC64NVME, Value: "vqf3hRLTlJw="}}
	info, err := l.CompleteMultipart(context.Background(), testBucket, "dflt", id, cps, ignored)
	if err != nil {
		t.Fatal(err)
	}
	want := ChecksumInfo{Algorithm: checksum.CRC64NVME, Type: checksum.FullObject, Value: checksum.CRC64NVME.Sum(bytes.Join(parts, nil))}
	if info.Checksum != want {
		t.Fatalf("%+v, want %+v", info.Checksum, want)
	}
}

func TestMultipartCompositeChecksum(t *testing.T) {
	l, _ := newTestLayer(t)
	ctx := context.Background()
	opts := PutOptions{ChecksumAlgorithm: checksum.SHA256}
	id, err := l.NewMultipart(ctx, testBucket, "comp", opts)
	if err != nil {
		t.Fatal(err)
	}
	p := randBytes(8, 10)
	for _, body := range []io.Reader{bytes.NewReader(p), declared(checksum.CRC32, p)} {
		if _, err := l.PutPart(ctx, testBucket, "comp", id, 1, body, 10, nil); !isChecksumErr(err, ChecksumAlgorithmMismatch) {
			t.Fatalf("part without the upload's algorithm: %v", err)
		}
	}
	parts := [][]byte{randBytes(9, testMinPart), randBytes(10, 20)}
	id, cps := mpUpload(t, l, "comp", opts, []io.Reader{declared(checksum.SHA256, parts[0]), declared(checksum.SHA256, parts[1])}, parts, checksum.SHA256)
	edits := []struct {
		name string
		edit func([]CompletePart)
		ok   func(error) bool
	}{
		{"part checksum missing", func(c []CompletePart) { c[0].Checksums = nil }, func(err error) bool { return isChecksumErr(err, PartChecksumMissing) }},
		{"part checksum wrong", func(c []CompletePart) { c[1].Checksums["sha256"] = c[0].Checksums["sha256"] }, func(err error) bool { return errors.Is(err, ErrInvalidPart) }},
		{"part checksum of another algorithm", func(c []CompletePart) { c[0].Checksums["crc32"] = "AAAAAA==" }, func(err error) bool { return isChecksumErr(err, PartChecksumUnknown) }},
	}
	for _, e := range edits {
		c := cloneParts(cps)
		e.edit(c)
		if _, err := l.CompleteMultipart(ctx, testBucket, "comp", id, c, CompleteOptions{}); !e.ok(err) {
			t.Fatalf("%s: %v", e.name, err)
		}
	}
	r0, _ := checksum.SHA256.Decode(checksum.SHA256.Sum(parts[0]))
	r1, _ := checksum.SHA256.Decode(checksum.SHA256.Sum(parts[1]))
	want := checksum.SHA256.CompositeOf([][]byte{r0, r1})
	stated := CompleteOptions{Checksum: ChecksumInfo{Algorithm: checksum.SHA256, Value: want}}
	info, err := l.CompleteMultipart(ctx, testBucket, "comp", id, cps, stated)
	if err != nil {
		t.Fatal(err)
	}
	if info.Checksum.Value != want || info.Checksum.Type != checksum.Composite || info.PartChecksums[1] != checksum.SHA256.Sum(parts[1]) {
		t.Fatalf("%+v %v, want composite %s", info.Checksum, info.PartChecksums, want)
	}
}

func TestCopyComputesChecksum(t *testing.T) {
	l, _ := newTestLayer(t)
	ctx := context.Background()
	data := randBytes(11, 300<<10)
	if _, err := l.PutObject(ctx, testBucket, "src", declared(checksum.SHA1, data), int64(len(data)), PutOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		ask, want checksum.Algorithm
	}{{"", checksum.SHA1}, {checksum.CRC32, checksum.CRC32}} {
		info, err := l.CopyObject(ctx, testBucket, "src", testBucket, "dst", CopyOptions{ChecksumAlgorithm: c.ask})
		if err != nil {
			t.Fatal(err)
		}
		if info.Checksum.Algorithm != c.want || info.Checksum.Value != c.want.Sum(data) {
			t.Fatalf("copy asking %q: %+v", c.ask, info.Checksum)
		}
	}
}

func isChecksumErr(err error, kind ChecksumErrorKind) bool {
	var ce *ChecksumError
	return errors.As(err, &ce) && ce.Kind == kind
}

func cloneParts(ps []CompletePart) []CompletePart {
	out := make([]CompletePart, len(ps))
	for i, p := range ps {
		out[i] = p
		out[i].Checksums = map[string]string{}
		for k, v := range p.Checksums {
			out[i].Checksums[k] = v
		}
	}
	return out
}
