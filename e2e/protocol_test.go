package e2e

import (
	"bufio"
	"bytes"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
)

// TestPlainChunkedUpload: a PUT and an UploadPart whose length the client
// does not know (plain Transfer-Encoding: chunked, no Content-Length),
// signed with the payload's hash, store exactly the bytes sent.
func TestPlainChunkedUpload(t *testing.T) {
	c := startServer(t)
	mustMakeBucket(t, c, "chunked")
	rc := newRaw(t, c)
	data := payload(61, 300<<10)
	if st, body, _ := rc.do(rawReq{method: http.MethodPut, path: "/chunked/obj", body: data, chunked: true}); st != http.StatusOK {
		t.Fatalf("chunked PUT: %d %s", st, body)
	}
	if got := mustGet(t, c, "chunked", "obj", minio.GetObjectOptions{}); !bytes.Equal(got, data) {
		t.Fatalf("read back %d bytes, want %d", len(got), len(data))
	}
	_, core := newMinio(t, c.srv.S3Addr(), rc.ak, rc.sk)
	id, err := core.NewMultipartUpload(t.Context(), "chunked", "mp", minio.PutObjectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if st, body, _ := rc.do(rawReq{method: http.MethodPut, path: "/chunked/mp?partNumber=1&uploadId=" + id, body: data, chunked: true}); st != http.StatusOK {
		t.Fatalf("chunked UploadPart: %d %s", st, body)
	}
}

// TestHeaderBytesRoundTrip: user metadata and Content-Encoding come back
// byte for byte as sent, UTF-8 or not.
func TestHeaderBytesRoundTrip(t *testing.T) {
	c := startServer(t)
	mustMakeBucket(t, c, "headers")
	rc := newRaw(t, c)
	sent := map[string]string{
		"X-Amz-Meta-Utf8":   "café 日本",
		"X-Amz-Meta-Latin1": "Hello World\xe9",
		"Content-Encoding":  "zstd, caf\xe9",
	}
	if st, body, _ := rc.do(rawReq{method: http.MethodPut, path: "/headers/k", body: []byte("x"), headers: sent}); st != http.StatusOK {
		t.Fatalf("PUT: %d %s", st, body)
	}
	for _, method := range []string{http.MethodGet, http.MethodHead} {
		st, _, h := rc.do(rawReq{method: method, path: "/headers/k"})
		if st != http.StatusOK {
			t.Fatalf("%s: %d", method, st)
		}
		for k, v := range sent {
			if got := h.Get(k); got != v {
				t.Errorf("%s %s = %q, want %q", method, k, got, v)
			}
		}
	}
}

func TestEmptyContentMD5(t *testing.T) {
	c := startServer(t)
	mustMakeBucket(t, c, "digest")
	rc := newRaw(t, c)
	rc.expectError("empty Content-MD5", rawReq{method: http.MethodPut, path: "/digest/k", body: []byte("x"),
		headers: map[string]string{"Content-Md5": ""}}, http.StatusBadRequest, "InvalidDigest")
}

// TestExpectContinueRefused: an unsigned PUT with Expect: 100-continue is
// refused without its body being sent; the client must get the answer
// while it waits.
func TestExpectContinueRefused(t *testing.T) {
	c := startServer(t)
	conn, err := net.Dial("tcp", c.srv.S3Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	head := "PUT /bkt/k HTTP/1.1\r\nHost: " + c.srv.S3Addr() + "\r\nContent-Length: 1000\r\nExpect: 100-continue\r\n\r\n"
	if _, err := conn.Write([]byte(head)); err != nil {
		t.Fatal(err)
	}
	if err := conn.SetReadDeadline(time.Now().Add(10 * time.Second)); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(conn).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "HTTP/1.1 403") {
		t.Fatalf("first line %q, %v", line, err)
	}
}
