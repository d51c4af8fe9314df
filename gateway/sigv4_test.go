package gateway

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/xml"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/rs/zerolog"

	"tessera/gateway/sigv4"
)

const (
	testAccessKey = "AKIDTESSERA"
	testSecretKey = "tessera-secret-key"
)

func testVerifier() *sigv4.Verifier {
	return &sigv4.Verifier{
		Region: "us-east-1",
		Lookup: func(ak string) (string, bool) {
			if ak == testAccessKey {
				return testSecretKey, true
			}
			return "", false
		},
	}
}

// signedServer serves a gateway authenticated by the real SigV4 verifier.
func signedServer(t *testing.T) (*fakeBackend, *httptest.Server) {
	t.Helper()
	be := newFakeBackend()
	h, err := New(Config{Backend: be, Auth: testVerifier(), Logger: zerolog.Nop()})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(func() {
		srv.Client().CloseIdleConnections()
		srv.Close()
	})
	return be, srv
}

// sendSigned signs the request as the AWS SDK does for S3 (path not
// re-escaped) and sends it. payloadHash "" means the hex SHA-256 of
// signBody; the body actually sent is body.
func sendSigned(t *testing.T, srv *httptest.Server, method, path, signBody, body, payloadHash, ak, sk string) *http.Response {
	t.Helper()
	r, err := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if payloadHash == "" {
		sum := sha256.Sum256([]byte(signBody))
		payloadHash = hex.EncodeToString(sum[:])
	}
	r.Header.Set("X-Amz-Content-Sha256", payloadHash)
	signer := v4.NewSigner(func(o *v4.SignerOptions) { o.DisableURIPathEscaping = true })
	creds := aws.Credentials{AccessKeyID: ak, SecretAccessKey: sk}
	if err := signer.SignHTTP(t.Context(), creds, r, payloadHash, "s3", "us-east-1", time.Now()); err != nil {
		t.Fatal(err)
	}
	resp, err := srv.Client().Do(r)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

func respCode(t *testing.T, resp *http.Response) string {
	t.Helper()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	var e errorResponse
	if len(data) > 0 {
		if err := xml.Unmarshal(data, &e); err != nil {
			t.Fatalf("error body: %v: %s", err, data)
		}
	}
	return e.Code
}

func TestSignedRequests(t *testing.T) {
	be, srv := signedServer(t)
	const unsigned = "UNSIGNED-PAYLOAD"
	ok := func(resp *http.Response) {
		t.Helper()
		if resp.StatusCode/100 != 2 {
			t.Fatalf("%s %s: %d %s", resp.Request.Method, resp.Request.URL, resp.StatusCode, respCode(t, resp))
		}
	}
	ok(sendSigned(t, srv, http.MethodPut, "/bkt", "", "", "", testAccessKey, testSecretKey))
	const key = "/bkt/a%20b/%E6%97%A5%2Bplus"
	ok(sendSigned(t, srv, http.MethodPut, key, "hello", "hello", "", testAccessKey, testSecretKey))
	ok(sendSigned(t, srv, http.MethodPut, "/bkt/unsigned", "", "body", unsigned, testAccessKey, testSecretKey))

	resp := sendSigned(t, srv, http.MethodGet, key, "", "", unsigned, testAccessKey, testSecretKey)
	ok(resp)
	if data, _ := io.ReadAll(resp.Body); string(data) != "hello" {
		t.Errorf("GET = %q", data)
	}
	if _, _, found := be.object("bkt", "a b/日+plus"); !found {
		t.Error("signed key stored under another name")
	}

	before := be.mutations()
	cases := []struct {
		name                 string
		path, signBody, body string
		hash, ak, sk         string
		status               int
		code                 string
	}{
		{"wrong secret", "/bkt/x", "v", "v", "", testAccessKey, "wrong", 403, "SignatureDoesNotMatch"},
		{"unknown key", "/bkt/x", "v", "v", "", "AKIDUNKNOWN", testSecretKey, 403, "InvalidAccessKeyId"},
		{"tampered body", "/bkt/x", "hello", "hellp", "", testAccessKey, testSecretKey, 400, "XAmzContentSHA256Mismatch"},
	}
	for _, c := range cases {
		resp := sendSigned(t, srv, http.MethodPut, c.path, c.signBody, c.body, c.hash, c.ak, c.sk)
		if resp.StatusCode != c.status || respCode(t, resp) != c.code {
			t.Errorf("%s: %d, want %d %s", c.name, resp.StatusCode, c.status, c.code)
		}
	}
	if be.mutations() != before {
		t.Error("rejected signed requests changed the backend")
	}

	anon, err := srv.Client().Get(srv.URL + "/bkt/unsigned")
	if err != nil {
		t.Fatal(err)
	}
	defer anon.Body.Close()
	if anon.StatusCode != http.StatusForbidden || respCode(t, anon) != "AccessDenied" {
		t.Errorf("anonymous GET: %d", anon.StatusCode)
	}
}
