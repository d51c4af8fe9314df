package e2e

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/minio/minio-go/v7"
	mcreds "github.com/minio/minio-go/v7/pkg/credentials"

	"tessera/checksum"
)

// TestRangedDownloadChecksums is how every current SDK downloads a large
// object: ranged GETs with checksum validation on. S3 sends no checksum
// for a range (it would describe other bytes), the object's for a whole
// GET, and the default CRC64NVME when the writer sent none; the SDK
// verifies every checksum it is given.
func TestRangedDownloadChecksums(t *testing.T) {
	c := startServer(t)
	ctx := context.Background()
	mustMakeBucket(t, c, "downloads")
	ac := awsClient(t, c, "http://"+c.srv.S3Addr(), nil, true)
	data := payload(51, 20<<20)
	bare := s3.New(ac.Options(), func(o *s3.Options) { o.RequestChecksumCalculation = aws.RequestChecksumCalculationWhenRequired })
	for _, put := range []struct {
		name   string
		client *s3.Client
		alg    types.ChecksumAlgorithm
		want   checksum.Algorithm
	}{
		{"crc32", ac, types.ChecksumAlgorithmCrc32, checksum.CRC32},
		{"sha256", ac, types.ChecksumAlgorithmSha256, checksum.SHA256},
		{"none sent", bare, "", checksum.CRC64NVME},
	} {
		t.Run(put.name, func(t *testing.T) {
			out, err := put.client.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("downloads"), Key: aws.String("big"),
				Body: bytes.NewReader(data), ChecksumAlgorithm: put.alg})
			if err != nil {
				t.Fatal(err)
			}
			if out.ChecksumType != types.ChecksumTypeFullObject {
				t.Fatalf("put checksum type %q", out.ChecksumType)
			}
			var got []byte
			for off := 0; off < len(data); off += 8 << 20 {
				end := min(off+8<<20, len(data)) - 1
				g, err := ac.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("downloads"), Key: aws.String("big"),
					Range: aws.String(fmt.Sprintf("bytes=%d-%d", off, end)), ChecksumMode: types.ChecksumModeEnabled})
				if err != nil {
					t.Fatal(err)
				}
				b, err := io.ReadAll(g.Body)
				g.Body.Close()
				if err != nil {
					t.Fatalf("range %d-%d: %v", off, end, err)
				}
				if g.ChecksumType != "" || g.ChecksumCRC32 != nil || g.ChecksumSHA256 != nil || g.ChecksumCRC64NVME != nil {
					t.Fatalf("range %d-%d carries a checksum: %q", off, end, g.ChecksumType)
				}
				got = append(got, b...)
			}
			if !bytes.Equal(got, data) {
				t.Fatal("ranged download differs")
			}
			whole, err := ac.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("downloads"), Key: aws.String("big"), ChecksumMode: types.ChecksumModeEnabled})
			if err != nil {
				t.Fatal(err)
			}
			b, err := io.ReadAll(whole.Body) // the SDK fails this read on a wrong checksum
			whole.Body.Close()
			if err != nil || !bytes.Equal(b, data) {
				t.Fatalf("whole GET: %v", err)
			}
			if v := getChecksum(whole, put.want); v != put.want.Sum(data) {
				t.Fatalf("whole GET %s = %q, want %q", put.want, v, put.want.Sum(data))
			}
		})
	}
}

func getChecksum(g *s3.GetObjectOutput, a checksum.Algorithm) string {
	switch a {
	case checksum.CRC32:
		return aws.ToString(g.ChecksumCRC32)
	case checksum.SHA256:
		return aws.ToString(g.ChecksumSHA256)
	case checksum.CRC64NVME:
		return aws.ToString(g.ChecksumCRC64NVME)
	case checksum.CRC32C:
		return aws.ToString(g.ChecksumCRC32C)
	}
	return ""
}

// TestMinioTrailingHeadersMultipart: minio-go with TrailingHeaders sends
// each part's CRC32C in a trailer and, at Complete, the whole object's
// checksum in a header: COMPOSITE by default, FULL_OBJECT when asked.
// Complete used to take that header for the XML body's checksum and fail
// every such upload with BadDigest.
func TestMinioTrailingHeadersMultipart(t *testing.T) {
	c := startServer(t)
	ctx := context.Background()
	mustMakeBucket(t, c, "trail")
	cr := c.srv.Credentials()
	mc, err := minio.New(c.srv.S3Addr(), &minio.Options{Creds: mcreds.NewStaticV4(cr.AccessKey, cr.SecretKey, ""),
		Region: "us-east-1", TrailingHeaders: true})
	if err != nil {
		t.Fatal(err)
	}
	ac := awsClient(t, c, "http://"+c.srv.S3Addr(), nil, true)
	data := payload(52, 17<<20)
	const partSize = 5 << 20
	var raw [][]byte
	for off := 0; off < len(data); off += partSize {
		b, _ := checksum.CRC32C.Decode(checksum.CRC32C.Sum(data[off:min(off+partSize, len(data))]))
		raw = append(raw, b)
	}
	for _, tc := range []struct {
		auto minio.ChecksumType
		typ  types.ChecksumType
		want string
	}{
		{0, types.ChecksumTypeComposite, checksum.CRC32C.CompositeOf(raw)},
		{minio.ChecksumFullObjectCRC32C, types.ChecksumTypeFullObject, checksum.CRC32C.Sum(data)},
	} {
		key := string(tc.typ)
		if _, err := mc.PutObject(ctx, "trail", key, bytes.NewReader(data), int64(len(data)),
			minio.PutObjectOptions{PartSize: partSize, AutoChecksum: tc.auto}); err != nil {
			t.Fatalf("%s multipart put: %v", key, err)
		}
		head, err := ac.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String("trail"), Key: aws.String(key), ChecksumMode: types.ChecksumModeEnabled})
		if err != nil {
			t.Fatal(err)
		}
		if got := aws.ToString(head.ChecksumCRC32C); got != tc.want || head.ChecksumType != tc.typ {
			t.Fatalf("head crc32c %q %q, want %q %s", got, head.ChecksumType, tc.want, tc.typ)
		}
		// A COMPOSITE object's part reads carry the part's checksum, which
		// the SDK verifies; a FULL_OBJECT object's parts have none.
		part, err := ac.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("trail"), Key: aws.String(key), PartNumber: aws.Int32(2), ChecksumMode: types.ChecksumModeEnabled})
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(part.Body)
		part.Body.Close()
		wantPart := ""
		if tc.typ == types.ChecksumTypeComposite {
			wantPart = checksum.Encode(raw[1])
		}
		if err != nil || !bytes.Equal(b, data[partSize:2*partSize]) || aws.ToString(part.ChecksumCRC32C) != wantPart {
			t.Fatalf("%s part 2: %v, %d bytes, checksum %q want %q", key, err, len(b), aws.ToString(part.ChecksumCRC32C), wantPart)
		}
	}
}

// TestMultipartChecksumTypes drives both multipart checksum types through
// aws-sdk-go-v2: a FULL_OBJECT CRC64NVME verified at Complete, and a
// COMPOSITE SHA256 whose part reads carry (and the SDK verifies) each
// part's own checksum.
func TestMultipartChecksumTypes(t *testing.T) {
	c := startServer(t)
	ctx := context.Background()
	mustMakeBucket(t, c, "types")
	ac := awsClient(t, c, "http://"+c.srv.S3Addr(), nil, true)
	parts := [][]byte{payload(53, 5<<20), payload(54, 5<<20), payload(55, 123)}
	whole := bytes.Join(parts, nil)
	for _, tc := range []struct {
		alg  types.ChecksumAlgorithm
		typ  types.ChecksumType
		want func() string
	}{
		{types.ChecksumAlgorithmCrc64nvme, types.ChecksumTypeFullObject, func() string { return checksum.CRC64NVME.Sum(whole) }},
		{types.ChecksumAlgorithmSha256, types.ChecksumTypeComposite, func() string {
			var raw [][]byte
			for _, p := range parts {
				s := sha256.Sum256(p)
				raw = append(raw, s[:])
			}
			return checksum.SHA256.CompositeOf(raw)
		}},
	} {
		key := string(tc.alg)
		up, err := ac.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: aws.String("types"), Key: aws.String(key),
			ChecksumAlgorithm: tc.alg, ChecksumType: tc.typ})
		if err != nil {
			t.Fatal(err)
		}
		if up.ChecksumAlgorithm != tc.alg || up.ChecksumType != tc.typ {
			t.Fatalf("create echoed %q %q", up.ChecksumAlgorithm, up.ChecksumType)
		}
		var done []types.CompletedPart
		for i, p := range parts {
			out, err := ac.UploadPart(ctx, &s3.UploadPartInput{Bucket: aws.String("types"), Key: aws.String(key), UploadId: up.UploadId,
				PartNumber: aws.Int32(int32(i + 1)), Body: bytes.NewReader(p), ChecksumAlgorithm: tc.alg})
			if err != nil {
				t.Fatalf("%s part %d: %v", key, i+1, err)
			}
			done = append(done, types.CompletedPart{PartNumber: aws.Int32(int32(i + 1)), ETag: out.ETag,
				ChecksumCRC64NVME: out.ChecksumCRC64NVME, ChecksumSHA256: out.ChecksumSHA256})
		}
		in := &s3.CompleteMultipartUploadInput{Bucket: aws.String("types"), Key: aws.String(key), UploadId: up.UploadId,
			MultipartUpload: &types.CompletedMultipartUpload{Parts: done}, ChecksumType: tc.typ}
		if tc.typ == types.ChecksumTypeFullObject {
			in.ChecksumCRC64NVME = aws.String(checksum.CRC64NVME.Sum(parts[0])) // wrong on purpose
			if _, err := ac.CompleteMultipartUpload(ctx, in); apiCode(err) != "BadDigest" {
				t.Fatalf("complete with a wrong object checksum: %v", err)
			}
			in.ChecksumCRC64NVME = aws.String(tc.want())
		}
		res, err := ac.CompleteMultipartUpload(ctx, in)
		if err != nil {
			t.Fatalf("%s complete: %v", key, err)
		}
		if got := aws.ToString(res.ChecksumCRC64NVME) + aws.ToString(res.ChecksumSHA256); got != tc.want() || res.ChecksumType != tc.typ {
			t.Fatalf("%s complete checksum %q %q, want %q", key, got, res.ChecksumType, tc.want())
		}
		lp, err := ac.ListParts(ctx, &s3.ListPartsInput{Bucket: aws.String("types"), Key: aws.String(key), UploadId: aws.String("nosuch")})
		if apiCode(err) != "NoSuchUpload" {
			t.Fatalf("list parts of a missing upload: %v %v", lp, err)
		}
		checkAttributes(t, ac, key, tc.typ, tc.want(), parts)
		for i, p := range parts {
			g, err := ac.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("types"), Key: aws.String(key),
				PartNumber: aws.Int32(int32(i + 1)), ChecksumMode: types.ChecksumModeEnabled})
			if err != nil {
				t.Fatal(err)
			}
			b, err := io.ReadAll(g.Body)
			g.Body.Close()
			if err != nil || !bytes.Equal(b, p) {
				t.Fatalf("%s part %d: %v", key, i+1, err)
			}
			composite := tc.typ == types.ChecksumTypeComposite
			if (g.ChecksumSHA256 != nil) != composite || g.ChecksumCRC64NVME != nil {
				t.Fatalf("%s part %d checksums: sha256 %v crc64nvme %v", key, i+1, g.ChecksumSHA256, g.ChecksumCRC64NVME)
			}
		}
	}
}

// checkAttributes reads a multipart object's attributes: its checksum
// (a composite without its "-N", as S3 gives it here) and its parts, two
// pages of them, each COMPOSITE part with its own checksum.
func checkAttributes(t *testing.T, ac *s3.Client, key string, typ types.ChecksumType, sum string, parts [][]byte) {
	t.Helper()
	ctx := context.Background()
	in := &s3.GetObjectAttributesInput{Bucket: aws.String("types"), Key: aws.String(key), MaxParts: aws.Int32(2),
		ObjectAttributes: []types.ObjectAttributes{types.ObjectAttributesChecksum, types.ObjectAttributesObjectParts,
			types.ObjectAttributesObjectSize, types.ObjectAttributesEtag}}
	a, err := ac.GetObjectAttributes(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	want, _, _ := strings.Cut(sum, "-")
	got := aws.ToString(a.Checksum.ChecksumCRC64NVME) + aws.ToString(a.Checksum.ChecksumSHA256)
	if got != want || a.Checksum.ChecksumType != typ || aws.ToInt64(a.ObjectSize) != int64(len(bytes.Join(parts, nil))) {
		t.Fatalf("%s attributes: checksum %q %q size %d", key, got, a.Checksum.ChecksumType, aws.ToInt64(a.ObjectSize))
	}
	op := a.ObjectParts
	if aws.ToInt32(op.TotalPartsCount) != int32(len(parts)) || !aws.ToBool(op.IsTruncated) || len(op.Parts) != 2 {
		t.Fatalf("%s first page of parts: %+v", key, op)
	}
	in.PartNumberMarker = op.NextPartNumberMarker
	a, err = ac.GetObjectAttributes(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	last := a.ObjectParts.Parts
	if len(last) != 1 || aws.ToInt32(last[0].PartNumber) != 3 || aws.ToInt64(last[0].Size) != int64(len(parts[2])) {
		t.Fatalf("%s second page of parts: %+v", key, a.ObjectParts)
	}
	if s := aws.ToString(last[0].ChecksumSHA256); (typ == types.ChecksumTypeComposite) != (s == checksum.SHA256.Sum(parts[2])) {
		t.Fatalf("%s part 3 checksum %q", key, s)
	}
}
