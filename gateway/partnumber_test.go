package gateway

import (
	"encoding/xml"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// GET and HEAD ?partNumber=N answer as S3: 206 with Content-Range for any
// non-empty object, x-amz-mp-parts-count only for a multipart one.
func TestGetPartNumber(t *testing.T) {
	_, h := newTestGateway(t, allowAll{})
	setup(t, h, "bkt", map[string]string{"single": "whole", "empty": ""})
	id := createUpload(t, h, "/bkt/mp", nil)
	var etags []string
	for i, data := range []string{"AAAAAA", "BBBBBBB", "CC"} {
		rec := mustDo(t, h, req{method: http.MethodPut, target: fmt.Sprintf("/bkt/mp?partNumber=%d&uploadId=%s", i+1, id), body: data})
		etags = append(etags, fmt.Sprint(i+1), rec.Header().Get("ETag"))
	}
	mustDo(t, h, req{method: http.MethodPost, target: "/bkt/mp?uploadId=" + id, body: completeBody(etags...)})
	id = createUpload(t, h, "/bkt/mp1", nil)
	etag := mustDo(t, h, req{method: http.MethodPut, target: "/bkt/mp1?partNumber=1&uploadId=" + id, body: "only"}).Header().Get("ETag")
	mustDo(t, h, req{method: http.MethodPost, target: "/bkt/mp1?uploadId=" + id, body: completeBody("1", etag)})

	cases := []struct {
		target, body, contentRange, count string
		status                            int
	}{
		{"/bkt/single?partNumber=1", "whole", "bytes 0-4/5", "", http.StatusPartialContent},
		{"/bkt/empty?partNumber=1", "", "", "", http.StatusOK},
		{"/bkt/mp?partNumber=1", "AAAAAA", "bytes 0-5/15", "3", http.StatusPartialContent},
		{"/bkt/mp?partNumber=2", "BBBBBBB", "bytes 6-12/15", "3", http.StatusPartialContent},
		{"/bkt/mp?partNumber=3", "CC", "bytes 13-14/15", "3", http.StatusPartialContent},
		{"/bkt/mp1?partNumber=1", "only", "bytes 0-3/4", "1", http.StatusPartialContent},
	}
	for _, c := range cases {
		for _, method := range []string{http.MethodGet, http.MethodHead} {
			rec := mustDo(t, h, req{method: method, target: c.target})
			hd := rec.Header()
			if rec.Code != c.status || hd.Get("Content-Range") != c.contentRange || hd.Get("X-Amz-Mp-Parts-Count") != c.count ||
				hd.Get("Content-Length") != fmt.Sprint(len(c.body)) {
				t.Errorf("%s %s: %d Content-Range %q parts %q length %s; want %d %q %q %d", method, c.target, rec.Code,
					hd.Get("Content-Range"), hd.Get("X-Amz-Mp-Parts-Count"), hd.Get("Content-Length"),
					c.status, c.contentRange, c.count, len(c.body))
			}
			if method == http.MethodGet && rec.Body.String() != c.body {
				t.Errorf("GET %s body %q, want %q", c.target, rec.Body.String(), c.body)
			}
		}
	}
}

func TestGetPartNumberErrors(t *testing.T) {
	_, h := newTestGateway(t, allowAll{})
	setup(t, h, "bkt", map[string]string{"single": "whole"})
	for _, pn := range []string{"0", "-1", "10001", "abc", "", "1.5", "99999999999999999999"} {
		for _, method := range []string{http.MethodGet, http.MethodHead} {
			rec := do(h, req{method: method, target: "/bkt/single?partNumber=" + pn})
			code := "InvalidArgument"
			if method == http.MethodHead {
				code = ""
			}
			expect(t, rec, http.StatusBadRequest, code)
		}
		// Checked before the object is looked up, as S3 does.
		expect(t, do(h, req{method: http.MethodGet, target: "/bkt/missing?partNumber=" + pn}), http.StatusBadRequest, "InvalidArgument")
	}

	rec := do(h, req{method: http.MethodGet, target: "/bkt/single?partNumber=2"})
	expect(t, rec, http.StatusRequestedRangeNotSatisfiable, "InvalidPartNumber")
	var body struct {
		ActualPartCount     int
		PartNumberRequested int
	}
	if err := xml.Unmarshal(rec.Body.Bytes(), &body); err != nil || body.ActualPartCount != 1 || body.PartNumberRequested != 2 {
		t.Errorf("InvalidPartNumber body %s: %+v %v", rec.Body.String(), body, err)
	}

	rec = do(h, req{method: http.MethodGet, target: "/bkt/single?partNumber=1", header: map[string]string{"Range": "bytes=0-1"}})
	expect(t, rec, http.StatusBadRequest, "InvalidRequest")
	if !strings.Contains(rec.Body.String(), "<Message>Cannot specify both Range header and partNumber query parameter</Message>") {
		t.Errorf("Range with partNumber: %s", rec.Body.String())
	}
}
