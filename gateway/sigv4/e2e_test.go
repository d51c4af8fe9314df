package sigv4

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/xml"
	"hash"
	"hash/crc32"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awscreds "github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/minio/minio-go/v7"
	miniocreds "github.com/minio/minio-go/v7/pkg/credentials"
	"github.com/minio/minio-go/v7/pkg/signer"
)

// seen is what the test server observed of one request.
type seen struct {
	mode      string // x-amz-content-sha256, or "presigned"
	data      []byte
	checksums map[string]string
	err       error
}

// s3Stub verifies every request with a real-clock Verifier, reads the
// whole body, and answers just enough S3 for the clients to succeed.
type s3Stub struct {
	v    *Verifier
	mu   sync.Mutex
	reqs []seen
}

func (s *s3Stub) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	obs := seen{mode: r.Header.Get("X-Amz-Content-Sha256")}
	if obs.mode == "" {
		obs.mode = "presigned"
	}
	res, err := s.v.Verify(r)
	if err == nil {
		obs.data, err = io.ReadAll(res.Body)
		obs.checksums = res.Checksums
	}
	obs.err = err
	s.mu.Lock()
	s.reqs = append(s.reqs, obs)
	s.mu.Unlock()
	if err != nil {
		w.WriteHeader(http.StatusForbidden)
		msg, _ := xml.Marshal(struct {
			XMLName xml.Name `xml:"Error"`
			Code    string
			Message string
		}{Code: "AccessDenied", Message: err.Error()})
		w.Write(msg)
		return
	}
	switch {
	case r.Method == http.MethodGet && r.URL.Query().Has("list-type"):
		io.WriteString(w, `<?xml version="1.0" encoding="UTF-8"?><ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Name>bucket</Name><KeyCount>0</KeyCount><IsTruncated>false</IsTruncated></ListBucketResult>`)
	case r.Method == http.MethodGet:
		io.WriteString(w, "object body")
	default:
		w.Header().Set("ETag", `"d41d8cd98f00b204e9800998ecf8427e"`)
	}
}

func (s *s3Stub) last(t *testing.T) seen {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.reqs) == 0 {
		t.Fatal("no request reached the server")
	}
	return s.reqs[len(s.reqs)-1]
}

func realVerifier() *Verifier {
	v := newVerifier(time.Time{})
	v.Now = nil
	return v
}

// TestSDKClientEndToEnd drives aws-sdk-go-v2's S3 client over TLS, where
// it sends flexible checksums as aws-chunked trailers.
func TestSDKClientEndToEnd(t *testing.T) {
	stub := &s3Stub{v: realVerifier()}
	srv := httptest.NewTLSServer(stub)
	defer srv.Close()
	client := s3.NewFromConfig(aws.Config{
		Region:      testRegion,
		Credentials: awscreds.NewStaticCredentialsProvider(testAK, testSecret, ""),
		HTTPClient:  srv.Client(),
		Retryer:     func() aws.Retryer { return aws.NopRetryer{} },
	}, func(o *s3.Options) {
		o.BaseEndpoint = aws.String(srv.URL)
		o.UsePathStyle = true
	})
	ctx := context.Background()
	data := bytes.Repeat([]byte("tessera "), 20_000) // 160 000 bytes: several chunks
	key := "dir/a key+with$odd&chars=~!'()*/日本.txt"
	algs := map[types.ChecksumAlgorithm]string{
		types.ChecksumAlgorithmCrc32:     "crc32",
		types.ChecksumAlgorithmCrc32c:    "crc32c",
		types.ChecksumAlgorithmCrc64nvme: "crc64nvme",
		types.ChecksumAlgorithmSha1:      "sha1",
		types.ChecksumAlgorithmSha256:    "sha256",
	}
	for alg, name := range algs {
		t.Run("put "+name, func(t *testing.T) {
			_, err := client.PutObject(ctx, &s3.PutObjectInput{
				Bucket: aws.String("bucket"), Key: aws.String(key),
				Body: bytes.NewReader(data), ChecksumAlgorithm: alg,
				Metadata: map[string]string{"color": "blue"},
			})
			if err != nil {
				t.Fatal(err)
			}
			got := stub.last(t)
			if got.mode != streamingUnsignedTrailer || !bytes.Equal(got.data, data) || got.checksums[name] == "" {
				t.Fatalf("mode %s, %d bytes, checksums %v", got.mode, len(got.data), got.checksums)
			}
		})
	}
	t.Run("put without checksum", func(t *testing.T) {
		if _, err := client.PutObject(ctx, &s3.PutObjectInput{
			Bucket: aws.String("bucket"), Key: aws.String("k"), Body: strings.NewReader("small"),
		}); err != nil {
			t.Fatal(err)
		}
		if got := stub.last(t); string(got.data) != "small" || got.err != nil {
			t.Fatalf("%+v", got)
		}
	})
	t.Run("get and list", func(t *testing.T) {
		out, err := client.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("bucket"), Key: aws.String(key), Range: aws.String("bytes=0-3")})
		if err != nil {
			t.Fatal(err)
		}
		out.Body.Close()
		if _, err := client.ListObjectsV2(ctx, &s3.ListObjectsV2Input{
			Bucket: aws.String("bucket"), Prefix: aws.String("a b/+&=~*"), Delimiter: aws.String("/"),
			StartAfter: aws.String("ü"),
		}); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("presigned get", func(t *testing.T) {
		p, err := s3.NewPresignClient(client).PresignGetObject(ctx, &s3.GetObjectInput{
			Bucket: aws.String("bucket"), Key: aws.String(key),
		}, s3.WithPresignExpires(10*time.Minute))
		if err != nil {
			t.Fatal(err)
		}
		resp, err := srv.Client().Get(p.URL)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("status %d: %v", resp.StatusCode, stub.last(t).err)
		}
	})
	t.Run("wrong secret", func(t *testing.T) {
		bad := s3.NewFromConfig(aws.Config{
			Region:      testRegion,
			Credentials: awscreds.NewStaticCredentialsProvider(testAK, "wrong", ""),
			HTTPClient:  srv.Client(),
			Retryer:     func() aws.Retryer { return aws.NopRetryer{} },
		}, func(o *s3.Options) { o.BaseEndpoint = aws.String(srv.URL); o.UsePathStyle = true })
		_, err := bad.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("bucket"), Key: aws.String("k"), Body: strings.NewReader("x")})
		if err == nil {
			t.Fatal("accepted a wrong secret")
		}
		wantErr(t, stub.last(t).err, ErrSignatureDoesNotMatch)
	})
}

// TestMinioClientEndToEnd drives minio-go over plain HTTP, where it signs
// every chunk (STREAMING-AWS4-HMAC-SHA256-PAYLOAD).
func TestMinioClientEndToEnd(t *testing.T) {
	stub := &s3Stub{v: realVerifier()}
	srv := httptest.NewServer(stub)
	defer srv.Close()
	mc, err := minio.New(strings.TrimPrefix(srv.URL, "http://"), &minio.Options{
		Creds:  miniocreds.NewStaticV4(testAK, testSecret, ""),
		Region: testRegion,
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	data := bytes.Repeat([]byte("minio "), 30_000)
	if _, err := mc.PutObject(ctx, "bucket", "a b/c+d", bytes.NewReader(data), int64(len(data)), minio.PutObjectOptions{}); err != nil {
		t.Fatalf("%v (server: %v)", err, stub.last(t).err)
	}
	got := stub.last(t)
	if !strings.HasPrefix(got.mode, "STREAMING-AWS4-HMAC-SHA256-PAYLOAD") || !bytes.Equal(got.data, data) {
		t.Fatalf("mode %s, %d bytes, %v", got.mode, len(got.data), got.err)
	}
	u, err := mc.PresignedGetObject(ctx, "bucket", "a b/c+d", time.Minute, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Get(u.String())
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("presigned GET: %d, %v", resp.StatusCode, stub.last(t).err)
	}
}

// TestMinioSignedTrailer uses minio-go's signer for
// STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER, whose trailer layout ("\n"
// then CRLF) differs from the AWS docs'.
func TestMinioSignedTrailer(t *testing.T) {
	data := bytes.Repeat([]byte("q"), 70_000)
	crc := crc32.New(crc32.MakeTable(crc32.Castagnoli))
	crc.Write(data)
	good := base64.StdEncoding.EncodeToString(crc.Sum(nil))
	for _, c := range []struct {
		name, value string
		want        error
	}{
		{"good", good, nil},
		{"checksum mismatch", "AAAAAA==", ErrChecksumMismatch},
	} {
		t.Run(c.name, func(t *testing.T) {
			req, err := http.NewRequest(http.MethodPut, "http://s3.example.com/bucket/obj", io.NopCloser(bytes.NewReader(data)))
			if err != nil {
				t.Fatal(err)
			}
			req.Trailer = http.Header{"X-Amz-Checksum-Crc32c": {c.value}}
			req = signer.StreamingSignV4(req, testAK, testSecret, "", testRegion, int64(len(data)), time.Now().UTC(), sha256Hasher{sha256.New()})
			body, err := io.ReadAll(req.Body)
			if err != nil {
				t.Fatal(err)
			}
			if req.Header.Get("X-Amz-Content-Sha256") != streamingSignedTrailer {
				t.Fatalf("minio-go used %s", req.Header.Get("X-Amz-Content-Sha256"))
			}
			req.Body = io.NopCloser(bytes.NewReader(body))
			res, err := realVerifier().Verify(req)
			if err != nil {
				t.Fatal(err)
			}
			got, err := readBody(res)
			wantErr(t, err, c.want)
			if err == nil && (!bytes.Equal(got, data) || res.Checksums["crc32c"] != good) {
				t.Fatalf("decoded %d bytes, checksums %v", len(got), res.Checksums)
			}
		})
	}
}

// sha256Hasher gives minio-go's signer the SHA-256 it expects behind its
// md5simd.Hasher parameter.
type sha256Hasher struct{ hash.Hash }

func (sha256Hasher) Close() {}
