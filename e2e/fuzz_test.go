package e2e

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/xml"
	"fmt"
	"io"
	mathrand "math/rand/v2"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/minio/minio-go/v7"
)

// fuzzWorkers send the fuzzed requests side by side.
const fuzzWorkers = 4

// fuzzCount is TESSERA_FUZZ_REQUESTS, else 20,000 (times the soak factor).
func fuzzCount(t testing.TB) int {
	t.Helper()
	if v := os.Getenv("TESSERA_FUZZ_REQUESTS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			t.Fatalf("TESSERA_FUZZ_REQUESTS=%q: want a positive count", v)
		}
		return n
	}
	return 20000 * soakFactor(t)
}

// fuzzSeed is TESSERA_FUZZ_SEED, else 1: each worker draws its requests
// from seed and its index, so a run's requests are the same every time
// (their interleaving is not).
func fuzzSeed(t testing.TB) uint64 {
	t.Helper()
	v := os.Getenv("TESSERA_FUZZ_SEED")
	if v == "" {
		return 1
	}
	n, err := strconv.ParseUint(v, 10, 64)
	if err != nil {
		t.Fatalf("TESSERA_FUZZ_SEED=%q: %v", v, err)
	}
	return n
}

// fuzzSender signs and sends fuzzed requests to one S3 endpoint.
type fuzzSender struct {
	addr, access, secret string
	hc                   *http.Client
}

// fuzzResult is a request's status, 0 if the connection closed without a
// response.
type fuzzResult struct {
	status int
	code   string
	err    error
}

// sign builds r as an *http.Request with a valid SigV4 signature over its
// headers, declared length and payload hash.
func (s *fuzzSender) sign(r fuzzReq) (*http.Request, error) {
	u := "http://" + s.addr + r.path
	if r.query != "" {
		u += "?" + r.query
	}
	req, err := http.NewRequest(r.method, u, bytes.NewReader(r.body))
	if err != nil {
		return nil, fmt.Errorf("build %s: %w", r, err)
	}
	for k, v := range r.header {
		req.Header[k] = v
	}
	if r.declared >= 0 {
		req.ContentLength = int64(r.declared)
	}
	hash := "UNSIGNED-PAYLOAD"
	if !r.unsigned {
		sum := sha256.Sum256(r.body)
		hash = hex.EncodeToString(sum[:])
	}
	req.Header.Set("X-Amz-Content-Sha256", hash)
	creds := aws.Credentials{AccessKeyID: s.access, SecretAccessKey: s.secret}
	if err := v4.NewSigner().SignHTTP(context.Background(), creds, req, hash, "s3", "us-east-1", time.Now()); err != nil {
		return nil, fmt.Errorf("sign %s: %w", r, err)
	}
	return req, nil
}

func (s *fuzzSender) send(r fuzzReq) fuzzResult {
	req, err := s.sign(r)
	if err != nil {
		return fuzzResult{err: err}
	}
	var resp *http.Response
	if r.declared >= 0 {
		resp, err = s.sendRaw(req, r.body)
	} else {
		resp, err = s.hc.Do(req)
	}
	if err != nil {
		return fuzzResult{err: err}
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	var e s3Error
	_ = xml.Unmarshal(b, &e)
	return fuzzResult{status: resp.StatusCode, code: e.Code}
}

// sendRaw writes req on a connection of its own with its declared
// Content-Length but body as it is, longer or shorter. A body shorter
// than declared is followed by a half-close, so the server waiting for
// the missing bytes sees their end (and the client gone).
func (s *fuzzSender) sendRaw(req *http.Request, body []byte) (*http.Response, error) {
	conn, err := net.DialTimeout("tcp", s.addr, 5*time.Second)
	if err != nil {
		return nil, err
	}
	_ = conn.SetDeadline(time.Now().Add(30 * time.Second))
	var buf bytes.Buffer
	fmt.Fprintf(&buf, "%s %s HTTP/1.1\r\nHost: %s\r\n", req.Method, req.URL.RequestURI(), req.Host)
	_ = req.Header.Write(&buf)
	fmt.Fprintf(&buf, "Content-Length: %d\r\nConnection: close\r\n\r\n", req.ContentLength)
	buf.Write(body)
	if _, err := conn.Write(buf.Bytes()); err != nil {
		conn.Close()
		return nil, err
	}
	if req.ContentLength > int64(len(body)) {
		_ = conn.(*net.TCPConn).CloseWrite()
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), req)
	if err != nil {
		conn.Close()
		return nil, err
	}
	resp.Body = struct {
		io.Reader
		io.Closer
	}{resp.Body, conn}
	return resp, nil
}

// fuzzTally is what the fuzzed requests got.
type fuzzTally struct {
	mu        sync.Mutex
	byStatus  map[int]int
	failures  []string
	nFailures int
	cutShort  map[int]int // statuses of requests whose client hung up before the declared body's end
}

func (ft *fuzzTally) add(r fuzzReq, res fuzzResult) {
	ft.mu.Lock()
	defer ft.mu.Unlock()
	if r.declared > len(r.body) {
		// The client is gone: whatever the server answers, nobody reads it.
		ft.cutShort[res.status]++
		return
	}
	ft.byStatus[res.status]++
	switch {
	case res.status == 0, res.status >= 500 && res.status != http.StatusNotImplemented:
		ft.nFailures++
		if len(ft.failures) < 15 {
			ft.failures = append(ft.failures, fmt.Sprintf("%d %s (%v) for %s", res.status, res.code, res.err, r))
		}
	}
}

// statuses formats a count by status, in status order.
func statuses(by map[int]int) string {
	var codes []int
	for c := range by {
		codes = append(codes, c)
	}
	sort.Ints(codes)
	var parts []string
	for _, c := range codes {
		parts = append(parts, fmt.Sprintf("%d×%d", by[c], c))
	}
	return strings.Join(parts, " ")
}

// TestFuzzSignedRequests sends 20,000 requests (TESSERA_FUZZ_REQUESTS)
// with valid SigV4 signatures and random methods, paths, S3
// subresources, upload IDs, part numbers, headers (ranges, conditionals,
// checksums, copy sources), bodies and Content-Lengths that do not match
// them to `tessera server`: none may get a 5xx other than 501 or an
// aborted connection, and the server must stay up with no panic in its
// log. A malformed upload ID must get 404 NoSuchUpload from every
// multipart operation.
//
//	go test ./e2e -run TestFuzzSignedRequests -count=1 -v
//	TESSERA_FUZZ_REQUESTS=100000 TESSERA_FUZZ_SEED=7 go test ./e2e -run TestFuzzSignedRequests -count=1 -v
func TestFuzzSignedRequests(t *testing.T) {
	needFull(t)
	if testing.Short() {
		t.Skip("sends 20,000 requests to a tessera server process; run without -short")
	}
	logPath := filepath.Join(t.TempDir(), "server.log")
	logf, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer logf.Close()
	p := startProcessLog(t, t.TempDir(), logf)
	mc, core := newMinio(t, p.s3, p.access, p.secret)
	ctx := context.Background()
	const bucket = "fuzz"
	makeBucketSoon(t, mc, bucket)
	for i := range 6 {
		if _, err := mc.PutObject(ctx, bucket, fmt.Sprintf("k%d", i), bytes.NewReader(payload(int64(i), 100+i*1000)), int64(100+i*1000), minio.PutObjectOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	uploadID, err := core.NewMultipartUpload(ctx, bucket, "k1", minio.PutObjectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	tr := &http.Transport{MaxIdleConnsPerHost: fuzzWorkers}
	defer tr.CloseIdleConnections()
	s := &fuzzSender{addr: p.s3, access: p.access, secret: p.secret, hc: &http.Client{Transport: tr, Timeout: 30 * time.Second}}

	checkMalformedUploadIDs(t, s, bucket)

	n, seed := fuzzCount(t), fuzzSeed(t)
	ft := &fuzzTally{byStatus: map[int]int{}, cutShort: map[int]int{}}
	start := time.Now()
	var wg sync.WaitGroup
	for w := range fuzzWorkers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			g := &fuzzGen{rnd: mathrand.New(mathrand.NewPCG(seed, uint64(w))), bucket: bucket, uploadID: uploadID}
			for i := w; i < n; i += fuzzWorkers {
				r := g.next()
				ft.add(r, s.send(r))
			}
		}()
	}
	wg.Wait()
	took := time.Since(start)
	t.Logf("%d fuzzed requests (seed %d) in %.1f s (%.0f/s): %s; bodies cut short by the client: %s",
		n, seed, took.Seconds(), float64(n)/took.Seconds(), statuses(ft.byStatus), statuses(ft.cutShort))
	for _, f := range ft.failures {
		t.Log("  " + f)
	}
	if ft.nFailures > 0 {
		t.Errorf("%d requests got a 5xx other than 501, or no response", ft.nFailures)
	}
	checkServerSound(t, p, mc, logPath)
	if t.Failed() {
		t.Logf("---- tail of the server log:\n%s", tail(logPath, 60))
	}
}

// checkMalformedUploadIDs sends each multipart operation with upload IDs
// that name no upload: every one must answer 404 NoSuchUpload.
func checkMalformedUploadIDs(t *testing.T, s *fuzzSender, bucket string) {
	t.Helper()
	complete := []byte(`<CompleteMultipartUpload><Part><PartNumber>1</PartNumber><ETag>"d41d8cd98f00b204e9800998ecf8427e"</ETag></Part></CompleteMultipartUpload>`)
	ops := []struct {
		name, method, extra string
		body                []byte
	}{
		{"ListParts", "GET", "", nil},
		{"UploadPart", "PUT", "&partNumber=1", []byte("part")},
		{"CompleteMultipartUpload", "POST", "", complete},
		{"AbortMultipartUpload", "DELETE", "", nil},
	}
	ids := []string{"x", "..%2F..%2Fetc%2Fpasswd", "%00", strings.Repeat("A", 1500), "ZZZZZZZZZZZZZZZZZZZZZZZZZZ", "-1", "%FF%FE"}
	for _, op := range ops {
		for _, id := range ids {
			r := fuzzReq{method: op.method, path: "/" + bucket + "/k1", query: "uploadId=" + id + op.extra, body: op.body, header: http.Header{}, declared: -1}
			res := s.send(r)
			if res.status != http.StatusNotFound || res.code != "NoSuchUpload" {
				t.Errorf("%s with uploadId %.20q: %d %s (%v), want 404 NoSuchUpload", op.name, id, res.status, res.code, res.err)
			}
		}
	}
}

// checkServerSound requires the server process to be running, to serve
// a plain PUT and GET, and its log to hold no panic.
func checkServerSound(t *testing.T, p *process, mc *minio.Client, logPath string) {
	t.Helper()
	st, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.cmd.Process.Pid))
	if err != nil || bytes.Contains(st, []byte("State:\tZ")) {
		t.Fatalf("the server process is gone after the fuzzed requests")
	}
	ctx := context.Background()
	data := payload(99, 70<<10)
	if _, err := mc.PutObject(ctx, "fuzz", "after", bytes.NewReader(data), int64(len(data)), minio.PutObjectOptions{}); err != nil {
		t.Errorf("PUT after the fuzzed requests: %v", err)
	}
	obj, err := mc.GetObject(ctx, "fuzz", "after", minio.GetObjectOptions{})
	if err == nil {
		got, rerr := io.ReadAll(obj)
		obj.Close()
		if rerr != nil || !bytes.Equal(got, data) {
			t.Errorf("GET after the fuzzed requests: %d bytes, %v", len(got), rerr)
		}
	} else {
		t.Errorf("GET after the fuzzed requests: %v", err)
	}
	log, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(log), "\n") {
		if strings.Contains(strings.ToLower(line), "panic") {
			t.Errorf("server log: %.2000s", line)
		}
	}
}
