package gateway

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"
)

// TestAWSSDK drives the gateway with aws-sdk-go-v2's S3 client and the
// SigV4 verifier. The SDK adds flexible checksums (CRC32C on PutObject,
// x-amz-checksum-* on DeleteObjects), covering the verifier-to-handler seam
// that a plain signed request does not.
func TestAWSSDK(t *testing.T) {
	_, srv := signedServer(t)
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	client := s3.New(s3.Options{
		Region:       "us-east-1",
		BaseEndpoint: aws.String(srv.URL),
		UsePathStyle: true,
		Credentials:  credentials.NewStaticCredentialsProvider(testAccessKey, testSecretKey, ""),
		HTTPClient:   &http.Client{Transport: tr},
	})
	ctx := t.Context()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	_, err := client.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("sdk")})
	must(err)
	body := bytes.Repeat([]byte("tessera "), 10000)
	put, err := client.PutObject(ctx, &s3.PutObjectInput{
		Bucket: aws.String("sdk"), Key: aws.String("dir/ü file.bin"), Body: bytes.NewReader(body),
		ContentType: aws.String("application/x-test"), Metadata: map[string]string{"origin": "sdk"},
		ChecksumAlgorithm: types.ChecksumAlgorithmCrc32c,
	})
	must(err)
	if put.ChecksumCRC32C == nil {
		t.Error("PutObject response lacks the validated CRC32C")
	}
	get, err := client.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("sdk"), Key: aws.String("dir/ü file.bin"), Range: aws.String("bytes=8-15")})
	must(err)
	got, err := io.ReadAll(get.Body)
	get.Body.Close()
	must(err)
	if string(got) != "tessera " || aws.ToString(get.ContentRange) != "bytes 8-15/80000" || get.Metadata["origin"] != "sdk" {
		t.Errorf("ranged GET: %q %q %v", got, aws.ToString(get.ContentRange), get.Metadata)
	}

	list, err := client.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String("sdk"), Delimiter: aws.String("/")})
	must(err)
	if len(list.CommonPrefixes) != 1 || aws.ToString(list.CommonPrefixes[0].Prefix) != "dir/" || aws.ToInt32(list.KeyCount) != 1 {
		t.Errorf("ListObjectsV2: %+v", list)
	}
	list, err = client.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String("sdk"), EncodingType: types.EncodingTypeUrl})
	must(err)
	if len(list.Contents) != 1 || !strings.Contains(aws.ToString(list.Contents[0].Key), "%C3%BC+file") {
		t.Errorf("url-encoded listing key %q", aws.ToString(list.Contents[0].Key))
	}

	_, err = client.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String("sdk"), Key: aws.String("nothing")})
	var nf *types.NotFound
	if !errors.As(err, &nf) {
		t.Errorf("HeadObject missing: %v", err)
	}
	_, err = client.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("sdk"), Key: aws.String("nothing")})
	var nsk *types.NoSuchKey
	if !errors.As(err, &nsk) {
		t.Errorf("GetObject missing: %v", err)
	}

	del, err := client.DeleteObjects(ctx, &s3.DeleteObjectsInput{Bucket: aws.String("sdk"), Delete: &types.Delete{
		Objects: []types.ObjectIdentifier{{Key: aws.String("dir/ü file.bin")}, {Key: aws.String("never")}},
	}})
	must(err)
	if len(del.Deleted) != 2 || len(del.Errors) != 0 {
		t.Errorf("DeleteObjects: %+v", del)
	}
	_, err = client.DeleteBucket(ctx, &s3.DeleteBucketInput{Bucket: aws.String("sdk")})
	must(err)
	_, err = client.DeleteBucket(ctx, &s3.DeleteBucketInput{Bucket: aws.String("sdk")})
	var apiErr smithy.APIError
	if !errors.As(err, &apiErr) || apiErr.ErrorCode() != "NoSuchBucket" {
		t.Errorf("second DeleteBucket: %v", err)
	}
}
