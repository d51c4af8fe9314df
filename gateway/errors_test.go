package gateway

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"tessera/gateway/sigv4"
	"tessera/object"
)

// TestBackendErrorMapping injects each object-layer sentinel (wrapped, as
// the layer returns them) and checks the S3 status and code.
func TestBackendErrorMapping(t *testing.T) {
	cases := []struct {
		err    error
		status int
		code   string
	}{
		{object.ErrBucketNotFound, 404, "NoSuchBucket"},
		{object.ErrObjectNotFound, 404, "NoSuchKey"},
		{object.ErrBucketExists, 409, "BucketAlreadyOwnedByYou"},
		{object.ErrBucketNotEmpty, 409, "BucketNotEmpty"},
		{object.ErrUploadNotFound, 404, "NoSuchUpload"},
		{object.ErrInvalidPart, 400, "InvalidPart"},
		{object.ErrInvalidPartOrder, 400, "InvalidPartOrder"},
		{object.ErrEntityTooSmall, 400, "EntityTooSmall"},
		{object.ErrEntityTooLarge, 400, "EntityTooLarge"},
		{object.ErrInvalidStorageClass, 400, "InvalidStorageClass"},
		{object.ErrCodeTooWide, 400, "InvalidStorageClass"},
		{object.ErrIncompleteBody, 400, "IncompleteBody"},
		{object.ErrBadDigest, 400, "BadDigest"},
		{object.ErrInvalidRange, 416, "InvalidRange"},
		{object.ErrQuorum, 503, "ServiceUnavailable"},
		{object.ErrInvalidArgument, 400, "InvalidArgument"},
		{&object.QuorumError{Op: "read", Need: 3}, 503, "ServiceUnavailable"},
		{context.DeadlineExceeded, 503, "ServiceUnavailable"},
		{context.Canceled, 400, "RequestTimeout"},
		{errors.New("disk on fire"), 500, "InternalError"},
	}
	for _, c := range cases {
		be, h := newTestGateway(t, allowAll{})
		setup(t, h, "bkt", map[string]string{"k": "v"})
		be.fail = func(op string) error {
			return fmt.Errorf("%s shard 3: %w", op, c.err)
		}
		expect(t, do(h, req{method: http.MethodPut, target: "/bkt/k2", body: "x"}), c.status, c.code)
		expect(t, do(h, req{method: http.MethodGet, target: "/bkt/k"}), c.status, c.code)
		rec := do(h, req{method: http.MethodHead, target: "/bkt/k"})
		if rec.Code != c.status || rec.Body.Len() != 0 {
			t.Errorf("HEAD with %v: %d body %q", c.err, rec.Code, rec.Body.String())
		}
	}
}

func TestCodeTooWideMessage(t *testing.T) {
	_, h := newTestGateway(t, allowAll{})
	setup(t, h, "bkt", nil)
	rec := do(h, req{method: http.MethodPut, target: "/bkt/k", body: "x", header: map[string]string{"X-Amz-Storage-Class": "WIDE"}})
	expect(t, rec, http.StatusBadRequest, "InvalidStorageClass")
	if !strings.Contains(rec.Body.String(), "more storage peers than the cluster has") {
		t.Errorf("message does not explain the code width: %s", rec.Body.String())
	}
	expect(t, do(h, req{method: http.MethodPut, target: "/bkt/k", body: "x", header: map[string]string{"X-Amz-Storage-Class": "GLACIERISH"}}),
		http.StatusBadRequest, "InvalidStorageClass")
}

func TestAuthErrorMapping(t *testing.T) {
	cases := []struct {
		err    error
		status int
		code   string
		msg    string
	}{
		{sigv4.ErrMissingAuth, 403, "AccessDenied", ""},
		{sigv4.ErrInvalidAccessKeyID, 403, "InvalidAccessKeyId", ""},
		{sigv4.ErrSignatureDoesNotMatch, 403, "SignatureDoesNotMatch", ""},
		{sigv4.ErrRequestTimeTooSkewed, 403, "RequestTimeTooSkewed", ""},
		{sigv4.ErrExpired, 403, "AccessDenied", "Request has expired"},
		{sigv4.ErrMalformed, 400, "AuthorizationHeaderMalformed", ""},
		{sigv4.ErrUnsupported, 501, "NotImplemented", ""},
		{sigv4.ErrContentSHA256Mismatch, 400, "XAmzContentSHA256Mismatch", ""},
		{sigv4.ErrChunk, 400, "IncompleteBody", ""},
		{sigv4.ErrChecksumMismatch, 400, "BadDigest", ""},
		{sigv4.ErrInvalidChecksum, 400, "InvalidRequest", ""},
		{sigv4.ErrInvalidToken, 400, "InvalidToken", "The provided token is malformed or otherwise invalid."},
		{sigv4.ErrMalformedTrailer, 400, "MalformedTrailerError", "The request contained trailing data that was not well-formed"},
		{sigv4.ErrChunkSize, 400, "InvalidChunkSizeError", "Only the last chunk is allowed to have a size less than 8192 bytes"},
		{sigv4.ErrMissingLength, 411, "MissingContentLength", "You must provide the Content-Length HTTP header."},
	}
	for _, c := range cases {
		be, h := newTestGateway(t, denyWith{fmt.Errorf("verify: %w", c.err)})
		rec := do(h, req{method: http.MethodPut, target: "/bkt"})
		expect(t, rec, c.status, c.code)
		if c.msg != "" && !strings.Contains(rec.Body.String(), c.msg) {
			t.Errorf("%v: message lacks %q: %s", c.err, c.msg, rec.Body.String())
		}
		if be.mutations() != 0 {
			t.Errorf("%v: unauthenticated request reached the backend", c.err)
		}
	}
}

// TestBodyVerificationFailure: a verifier that fails the body's final Read
// must fail the upload, and nothing may be stored.
func TestBodyVerificationFailure(t *testing.T) {
	cases := []struct {
		err    error
		status int
		code   string
	}{
		{sigv4.ErrChunk, 400, "IncompleteBody"},
		{sigv4.ErrSignatureDoesNotMatch, 403, "SignatureDoesNotMatch"},
		{sigv4.ErrChecksumMismatch, 400, "BadDigest"},
		{sigv4.ErrContentSHA256Mismatch, 400, "XAmzContentSHA256Mismatch"},
		{sigv4.ErrMalformedTrailer, 400, "MalformedTrailerError"},
		{sigv4.ErrChunkSize, 400, "InvalidChunkSizeError"},
	}
	for _, c := range cases {
		be := newFakeBackend()
		be.buckets["bkt"] = &fakeBucket{objects: map[string]*fakeObject{}}
		be.minPartSize = 1
		uploadID, err := be.NewMultipart(t.Context(), "bkt", "mp", object.PutOptions{})
		if err != nil {
			t.Fatal(err)
		}
		h, err := New(Config{Backend: be, Auth: bodyFailsWith{c.err}})
		if err != nil {
			t.Fatal(err)
		}
		before := be.mutations()
		expect(t, do(h, req{method: http.MethodPut, target: "/bkt/k", body: "some bytes"}), c.status, c.code)
		expect(t, do(h, req{method: http.MethodPut, target: "/bkt/mp?partNumber=1&uploadId=" + uploadID, body: "part"}), c.status, c.code)
		expect(t, do(h, req{method: http.MethodPost, target: "/bkt?delete", body: "<Delete><Object><Key>k</Key></Object></Delete>"}), c.status, c.code)
		if be.mutations() != before {
			t.Errorf("%v: a failed verification changed the backend", c.err)
		}
	}
}

func TestExactReader(t *testing.T) {
	cases := []struct {
		name string
		src  string
		tail error // the source's error after its bytes (nil: io.EOF)
		n    int64
		want error
	}{
		{"exact", "abcd", nil, 4, io.EOF},
		{"short", "ab", nil, 4, io.ErrUnexpectedEOF},
		{"long", "abcdef", nil, 4, errBodyTooLong},
		{"verification fails at end", "abcd", sigv4.ErrChunk, 4, sigv4.ErrChunk},
		{"empty", "", nil, 0, io.EOF},
		{"empty but fails", "", sigv4.ErrChecksumMismatch, 0, sigv4.ErrChecksumMismatch},
	}
	for _, c := range cases {
		var src io.Reader = strings.NewReader(c.src)
		if c.tail != nil {
			src = io.MultiReader(src, errReader{c.tail})
		}
		er := newExactReader(src, c.n)
		buf := make([]byte, 3)
		var got []byte
		var err error
		for err == nil {
			var n int
			n, err = er.Read(buf)
			got = append(got, buf[:n]...)
		}
		if !errors.Is(err, c.want) {
			t.Errorf("%s: err %v, want %v", c.name, err, c.want)
		}
		if int64(len(got)) > c.n {
			t.Errorf("%s: delivered %d bytes past the declared %d", c.name, len(got), c.n)
		}
		// The error is sticky: a consumer reading again must not see EOF.
		if _, again := er.Read(buf); !errors.Is(again, c.want) {
			t.Errorf("%s: second read %v, want %v", c.name, again, c.want)
		}
	}
}

func TestErrorExtraElements(t *testing.T) {
	err := withFields(apiErrf(errAuthorizationHeaderMalformed, "the region 'eu-west-1' is wrong; expecting 'us-east-1'"), errorField{"Region", "us-east-1"})
	r := httptest.NewRequest(http.MethodGet, "/b/k", nil)
	w := httptest.NewRecorder()
	writeError(w, r, err)
	body := w.Body.String()
	for _, want := range []string{"<Code>AuthorizationHeaderMalformed</Code>", "<Region>us-east-1</Region>", "expecting 'us-east-1'"} {
		if !strings.Contains(body, want) {
			t.Errorf("body %s lacks %s", body, want)
		}
	}
	if strings.Index(body, "<Region>") < strings.Index(body, "<Message>") {
		t.Errorf("extra element before <Message>: %s", body)
	}
}

// TestClientGoneIsNoServerFault: when the client goes away mid-request,
// the peer calls it cancels fail the request with a quorum error; that is
// the client's doing, answered and logged as such (debug, not error), so
// an operator's error log holds only the cluster's own failures.
func TestClientGoneIsNoServerFault(t *testing.T) {
	quorum := fmt.Errorf("stage: %w: 0 of 4 needed (peer1: %w)", object.ErrQuorum, context.Canceled)
	for _, c := range []struct {
		name      string
		cancel    bool
		status    int
		errorLogs int
	}{
		{"client still there", false, http.StatusServiceUnavailable, 1},
		{"client gone", true, http.StatusBadRequest, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			var logs strings.Builder
			ctx, cancel := context.WithCancel(zerolog.New(&logs).Level(zerolog.DebugLevel).WithContext(context.Background()))
			defer cancel()
			if c.cancel {
				cancel()
			}
			r := httptest.NewRequest(http.MethodPut, "/bkt/k", nil).WithContext(ctx)
			rec := httptest.NewRecorder()
			writeError(rec, r, quorum)
			if rec.Code != c.status {
				t.Fatalf("status %d, want %d: %s", rec.Code, c.status, rec.Body.String())
			}
			if n := strings.Count(logs.String(), `"level":"error"`); n != c.errorLogs {
				t.Fatalf("%d error lines, want %d: %s", n, c.errorLogs, logs.String())
			}
			if !strings.Contains(logs.String(), "peer1") {
				t.Fatalf("the log lost the error: %s", logs.String())
			}
		})
	}
}
