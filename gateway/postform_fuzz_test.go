package gateway

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"testing"
)

// FuzzPostForm sends arbitrary form bodies, seeded with valid signed
// forms, through the whole POST handler: no answer is a server error, a
// refusal is an S3 error body and stores nothing, and the rest of a
// refused body is read. (501 stays possible: a field can name a feature
// a PUT refuses too.)
func FuzzPostForm(f *testing.F) {
	for _, s := range []formSpec{
		{file: []byte("data")},
		{file: []byte("0123456789"), conds: []any{[]any{"content-length-range", 0, 5}}},
		{extra: [][2]string{{"success_action_status", "201"}}, conds: []any{[]any{"eq", "$success_action_status", "201"}}},
		{noFile: true},
		{signature: ptr("0000")},
	} {
		body, ct := s.build(f)
		f.Add(body, ct)
	}
	f.Add([]byte("--x\r\n\r\n--x--"), "multipart/form-data; boundary=x")
	f.Fuzz(func(t *testing.T, body []byte, ct string) {
		be, h := postGateway(t)
		br := bytes.NewReader(body)
		r := httptest.NewRequest(http.MethodPost, "/bkt", br)
		r.Header.Set("Content-Type", ct)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		if rec.Code == http.StatusInternalServerError {
			t.Fatalf("status %d: %s", rec.Code, rec.Body.String())
		}
		if rec.Code < 300 {
			return
		}
		_ = errorElems(t, rec.Body.Bytes())
		if n := len(be.buckets["bkt"].objects); n != 0 {
			t.Fatalf("a refused form (%d) stored %d objects", rec.Code, n)
		}
		if br.Len() != 0 {
			t.Fatalf("a refused form left %d bytes unread", br.Len())
		}
	})
}
