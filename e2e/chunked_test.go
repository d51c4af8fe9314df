package e2e

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/minio/minio-go/v7"
)

// unsignedTrailerBody encodes data as STREAMING-UNSIGNED-PAYLOAD-TRAILER
// chunks (what SDKs send over https by default) with a CRC32 trailer.
func unsignedTrailerBody(data []byte, chunk int, crc string) []byte {
	var b bytes.Buffer
	for off := 0; off < len(data); off += chunk {
		end := min(off+chunk, len(data))
		fmt.Fprintf(&b, "%x\r\n", end-off)
		b.Write(data[off:end])
		b.WriteString("\r\n")
	}
	fmt.Fprintf(&b, "0\r\nx-amz-checksum-crc32:%s\r\n\r\n", crc)
	return b.Bytes()
}

func crc32Base64(data []byte) string {
	var sum [4]byte
	binary.BigEndian.PutUint32(sum[:], crc32.ChecksumIEEE(data))
	return base64.StdEncoding.EncodeToString(sum[:])
}

// TestUnsignedPayloadTrailer sends aws-chunked bodies with a checksum
// trailer to the real server: a good one is stored, a bad checksum is
// refused with BadDigest and changes nothing.
func TestUnsignedPayloadTrailer(t *testing.T) {
	c := startServer(t)
	rc := newRaw(t, c)
	mustMakeBucket(t, c, "trailer")
	data := payload(31, 200<<10+3)

	send := func(key string, body []byte) (int, []byte) {
		req, err := http.NewRequest("PUT", rc.base+"/trailer/"+key, bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("X-Amz-Content-Sha256", "STREAMING-UNSIGNED-PAYLOAD-TRAILER")
		req.Header.Set("Content-Encoding", "aws-chunked")
		req.Header.Set("X-Amz-Decoded-Content-Length", strconv.Itoa(len(data)))
		req.Header.Set("X-Amz-Trailer", "x-amz-checksum-crc32")
		err = v4.NewSigner().SignHTTP(context.Background(), aws.Credentials{AccessKeyID: rc.ak, SecretAccessKey: rc.sk},
			req, "STREAMING-UNSIGNED-PAYLOAD-TRAILER", "s3", "us-east-1", time.Now())
		if err != nil {
			t.Fatal(err)
		}
		resp, err := rc.hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out bytes.Buffer
		_, _ = out.ReadFrom(resp.Body)
		return resp.StatusCode, out.Bytes()
	}

	if code, body := send("good", unsignedTrailerBody(data, 64<<10, crc32Base64(data))); code != 200 {
		t.Fatalf("good trailer: %d %s", code, body)
	}
	if got := mustGet(t, c, "trailer", "good", minio.GetObjectOptions{}); !bytes.Equal(got, data) {
		t.Fatal("object sent with a checksum trailer reads back different")
	}
	wrong := crc32Base64(append([]byte{1}, data...))
	if code, body := send("bad", unsignedTrailerBody(data, 64<<10, wrong)); code != 400 || !bytes.Contains(body, []byte("<Code>BadDigest</Code>")) {
		t.Fatalf("bad trailer checksum: %d %s", code, body)
	}
	if _, err := c.mc.StatObject(context.Background(), "trailer", "bad", minio.StatObjectOptions{}); errCode(err) != "NoSuchKey" {
		t.Fatalf("a body with a bad checksum was stored: %v", err)
	}
	// A body cut short of its declared decoded length is refused too.
	short := unsignedTrailerBody(data[:len(data)/2], 64<<10, crc32Base64(data[:len(data)/2]))
	if code, _ := send("short", short); code/100 != 4 {
		t.Fatalf("short aws-chunked body: status %d", code)
	}
	if _, err := c.mc.StatObject(context.Background(), "trailer", "short", minio.StatObjectOptions{}); errCode(err) != "NoSuchKey" {
		t.Fatalf("a short body was stored: %v", err)
	}
}
