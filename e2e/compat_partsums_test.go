package e2e

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"
)

// TestCompatMultipartChecksums uploads parts with CRC32 checksums through
// aws-sdk-go-v2, checks that CompleteMultipartUpload validates the listed
// part checksums and that the COMPOSITE checksum comes back on Complete
// and on HEAD with ChecksumMode ENABLED.
func TestCompatMultipartChecksums(t *testing.T) {
	c := startServer(t)
	ctx := context.Background()
	mustMakeBucket(t, c, "sums")
	ac := awsClient(t, c, "http://"+c.srv.S3Addr(), nil, true)

	up, err := ac.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{
		Bucket: aws.String("sums"), Key: aws.String("obj"), ChecksumAlgorithm: types.ChecksumAlgorithmCrc32,
	})
	if err != nil {
		t.Fatal(err)
	}
	parts := [][]byte{payload(41, 5<<20), payload(42, 1<<20)}
	var done []types.CompletedPart
	var raw []byte
	for i, p := range parts {
		out, err := ac.UploadPart(ctx, &s3.UploadPartInput{
			Bucket: aws.String("sums"), Key: aws.String("obj"), UploadId: up.UploadId,
			PartNumber: aws.Int32(int32(i + 1)), Body: bytes.NewReader(p), ChecksumAlgorithm: types.ChecksumAlgorithmCrc32,
		})
		if err != nil {
			t.Fatalf("upload part %d: %v", i+1, err)
		}
		var sum [4]byte
		binary.BigEndian.PutUint32(sum[:], crc32.ChecksumIEEE(p))
		if got := aws.ToString(out.ChecksumCRC32); got != base64.StdEncoding.EncodeToString(sum[:]) {
			t.Fatalf("part %d checksum %q", i+1, got)
		}
		raw = append(raw, sum[:]...)
		done = append(done, types.CompletedPart{PartNumber: aws.Int32(int32(i + 1)), ETag: out.ETag, ChecksumCRC32: out.ChecksumCRC32})
	}
	var whole [4]byte
	binary.BigEndian.PutUint32(whole[:], crc32.ChecksumIEEE(raw))
	want := base64.StdEncoding.EncodeToString(whole[:]) + "-2"

	// A wrong listed checksum is InvalidPart and completes nothing.
	wrong := append([]types.CompletedPart(nil), done...)
	wrong[1].ChecksumCRC32 = done[0].ChecksumCRC32
	_, err = ac.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{
		Bucket: aws.String("sums"), Key: aws.String("obj"), UploadId: up.UploadId,
		MultipartUpload: &types.CompletedMultipartUpload{Parts: wrong},
	})
	var ae smithy.APIError
	if !errors.As(err, &ae) || ae.ErrorCode() != "InvalidPart" {
		t.Fatalf("complete with wrong checksum: %v", err)
	}

	res, err := ac.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{
		Bucket: aws.String("sums"), Key: aws.String("obj"), UploadId: up.UploadId,
		MultipartUpload: &types.CompletedMultipartUpload{Parts: done},
	})
	if err != nil {
		t.Fatalf("complete: %v", err)
	}
	if aws.ToString(res.ChecksumCRC32) != want || res.ChecksumType != types.ChecksumTypeComposite {
		t.Fatalf("complete checksum %q type %q, want %q COMPOSITE", aws.ToString(res.ChecksumCRC32), res.ChecksumType, want)
	}
	head, err := ac.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String("sums"), Key: aws.String("obj"), ChecksumMode: types.ChecksumModeEnabled})
	if err != nil {
		t.Fatal(err)
	}
	if aws.ToString(head.ChecksumCRC32) != want || head.ChecksumType != types.ChecksumTypeComposite {
		t.Fatalf("head checksum %q type %q, want %q", aws.ToString(head.ChecksumCRC32), head.ChecksumType, want)
	}
	// The SDK skips validating a composite checksum on GET; the bytes
	// must still come back whole.
	got, err := ac.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("sums"), Key: aws.String("obj"), ChecksumMode: types.ChecksumModeEnabled})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	_, err = buf.ReadFrom(got.Body)
	got.Body.Close()
	if err != nil || !bytes.Equal(buf.Bytes(), append(append([]byte(nil), parts[0]...), parts[1]...)) {
		t.Fatalf("get: %v (%d bytes)", err, buf.Len())
	}
}
