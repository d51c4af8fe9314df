package gateway

import (
	"fmt"
	"net/http"
	"testing"
	"time"
)

const notImplementedMsg = "A header you provided implies functionality that is not implemented."

func TestParseWriteConditions(t *testing.T) {
	for _, c := range []struct {
		ifMatch, ifNoneMatch string
		wantMatch, wantNone  string
		refused              bool
	}{
		{"", "", "", "", false},
		{`"abc"`, "", "abc", "", false},
		{"abc", "", "abc", "", false},
		{"", "*", "", "*", false},
		{"", `"abc"`, "", "", true},
		{"", "abc", "", "", true},
		{"abc", "*", "", "", true},
		{"abc", "abc", "", "", true},
	} {
		h := http.Header{}
		if c.ifMatch != "" {
			h.Set("If-Match", c.ifMatch)
		}
		if c.ifNoneMatch != "" {
			h.Set("If-None-Match", c.ifNoneMatch)
		}
		m, n, err := parseWriteConditions(h)
		if c.refused {
			if !isCode(err, errNotImplemented) || err.Error() != "NotImplemented: "+notImplementedMsg {
				t.Errorf("%q/%q: err %v, want NotImplemented", c.ifMatch, c.ifNoneMatch, err)
			}
			continue
		}
		if err != nil || m != c.wantMatch || n != c.wantNone {
			t.Errorf("%q/%q: %q %q %v", c.ifMatch, c.ifNoneMatch, m, n, err)
		}
	}
}

func TestPutConditionalRefusals(t *testing.T) {
	be, h := newTestGateway(t, allowAll{})
	setup(t, h, "bkt", map[string]string{"k": "v"})
	before := be.mutations()
	for _, hdr := range []map[string]string{
		{"If-None-Match": `"etag"`},
		{"If-None-Match": "*", "If-Match": "etag"},
		{"If-None-Match": "etag", "If-Match": "etag"},
	} {
		expectElems(t, do(h, req{method: http.MethodPut, target: "/bkt/k", body: "x", header: hdr}),
			http.StatusNotImplemented, map[string]string{"Code": "NotImplemented", "Message": notImplementedMsg})
	}
	if be.mutations() != before {
		t.Error("a refused PUT changed the backend")
	}
}

func TestCompleteMultipartRefusals(t *testing.T) {
	be, h := newTestGateway(t, allowAll{})
	setup(t, h, "bkt", nil)
	id := createUpload(t, h, "/bkt/k", nil)
	part := func(n int, data string) string {
		return mustDo(t, h, req{method: http.MethodPut, target: fmt.Sprintf("/bkt/k?partNumber=%d&uploadId=%s", n, id), body: data}).Header().Get("ETag")
	}
	e1, e2 := part(1, "tiny"), part(2, "last")
	target := "/bkt/k?uploadId=" + id
	two := completeBody("1", e1, "2", e2)
	before := be.mutations()
	cases := []struct {
		name   string
		body   string
		header map[string]string
		status int
		want   map[string]string
	}{
		{"unknown part", completeBody("5", e1), nil, 400, map[string]string{
			"Code":     "InvalidPart",
			"Message":  "One or more of the specified parts could not be found.  The part may not have been uploaded, or the specified entity tag may not match the part's entity tag.",
			"UploadId": id, "PartNumber": "5", "ETag": e1[1 : len(e1)-1],
		}},
		{"small part", two, nil, 400, map[string]string{
			"Code": "EntityTooSmall", "Message": "Your proposed upload is smaller than the minimum allowed size",
			"ProposedSize": "4", "MinSizeAllowed": "5",
		}},
		{"negative size", completeBody("2", e2), map[string]string{"X-Amz-Mp-Object-Size": "-1"}, 400, map[string]string{
			"Code": "InvalidRequest", "Message": "Value for x-amz-mp-object-size header is less than zero: '-1'",
		}},
		{"invalid size", completeBody("2", e2), map[string]string{"X-Amz-Mp-Object-Size": "4k"}, 400, map[string]string{
			"Code": "InvalidRequest", "Message": "Value for x-amz-mp-object-size header is invalid: '4k'",
		}},
		{"empty size", completeBody("2", e2), map[string]string{"X-Amz-Mp-Object-Size": ""}, 400, map[string]string{
			"Code": "InvalidRequest", "Message": "Value for x-amz-mp-object-size header is invalid: ''",
		}},
		{"wrong size", completeBody("2", e2), map[string]string{"X-Amz-Mp-Object-Size": "213123"}, 400, map[string]string{
			"Code": "InvalidRequest", "Message": "The provided 'x-amz-mp-object-size' header value 4 does not match what was computed: 213123",
		}},
		{"if-none-match etag", completeBody("2", e2), map[string]string{"If-None-Match": e2}, 501, map[string]string{
			"Code": "NotImplemented", "Message": notImplementedMsg,
		}},
		{"both conditions", completeBody("2", e2), map[string]string{"If-None-Match": "*", "If-Match": e2}, 501, map[string]string{
			"Code": "NotImplemented", "Message": notImplementedMsg,
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			expectElems(t, do(h, req{method: http.MethodPost, target: target, body: c.body, header: c.header}), c.status, c.want)
		})
	}
	if be.mutations() != before {
		t.Fatal("a refused complete changed the backend")
	}
	mustDo(t, h, req{method: http.MethodPost, target: target, body: completeBody("2", e2), header: map[string]string{"X-Amz-Mp-Object-Size": "4"}})
	if _, data, ok := be.object("bkt", "k"); !ok || string(data) != "last" {
		t.Fatalf("completed object %q, %v", data, ok)
	}
}

func TestAbortMultipartIfMatchInitiatedTime(t *testing.T) {
	be, h := newTestGateway(t, allowAll{})
	setup(t, h, "bkt", nil)
	id := createUpload(t, h, "/bkt/k", nil)
	initiated := be.uploads[id].initiated
	abort := func(date string) *httpResult {
		rec := do(h, req{method: http.MethodDelete, target: "/bkt/k?uploadId=" + id,
			header: map[string]string{"X-Amz-If-Match-Initiated-Time": date}})
		return &httpResult{rec.Code, errorCode(t, rec)}
	}
	for _, date := range []string{
		initiated.Add(-time.Second).Format(http.TimeFormat),
		initiated.AddDate(-1, 0, 1).Format(http.TimeFormat),
	} {
		if got := abort(date); *got != (httpResult{412, "PreconditionFailed"}) {
			t.Errorf("%s: %+v, want 412", date, got)
		}
	}
	if _, ok := be.uploads[id]; !ok {
		t.Fatal("a refused abort removed the upload")
	}
	// A date in the future, or one that does not parse, is ignored.
	for _, date := range []string{time.Now().AddDate(1, 0, 0).Format(http.TimeFormat), "yesterday"} {
		id = createUpload(t, h, "/bkt/k", nil)
		if got := abort(date); got.status != http.StatusNoContent {
			t.Errorf("%s: %+v, want 204", date, got)
		}
	}
	id = createUpload(t, h, "/bkt/k", nil)
	if got := abort(be.uploads[id].initiated.Format(http.TimeFormat)); got.status != http.StatusNoContent {
		t.Errorf("matching date: %+v, want 204", got)
	}
	if _, ok := be.uploads[id]; ok {
		t.Fatal("the matching abort kept the upload")
	}
}

type httpResult struct {
	status int
	code   string
}
