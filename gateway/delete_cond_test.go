package gateway

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestConditionalDelete(t *testing.T) {
	be, h := newTestGateway(t, allowAll{})
	setup(t, h, "bkt", nil)
	put := func() (etag, mod string) {
		mustDo(t, h, req{method: http.MethodPut, target: "/bkt/k", body: "dummy"})
		info, _, _ := be.object("bkt", "k")
		return quoteETag(info.ETag), info.ModTime.Format(http.TimeFormat)
	}
	// ETAG and MOD stand for the current version's ETag and Last-Modified,
	// which the object is rewritten with before each case.
	old := time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC).Format(http.TimeFormat)
	cases := []struct {
		name      string
		hdr       map[string]string
		status    int
		condition string
	}{
		{"etag", map[string]string{"If-Match": "ETAG"}, 204, ""},
		{"unquoted etag", map[string]string{"If-Match": "UNQUOTED"}, 204, ""},
		{"star", map[string]string{"If-Match": "*"}, 204, ""},
		{"size", map[string]string{"X-Amz-If-Match-Size": "5"}, 204, ""},
		{"time", map[string]string{"X-Amz-If-Match-Last-Modified-Time": "MOD"}, 204, ""},
		{"all three", map[string]string{"If-Match": "ETAG", "X-Amz-If-Match-Size": "5", "X-Amz-If-Match-Last-Modified-Time": "MOD"}, 204, ""},
		{"wrong etag", map[string]string{"If-Match": `"incorrect_etag"`}, 412, "If-Match"},
		{"wrong size", map[string]string{"X-Amz-If-Match-Size": "23234"}, 412, "x-amz-if-match-size"},
		{"wrong time", map[string]string{"X-Amz-If-Match-Last-Modified-Time": old}, 412, "x-amz-if-match-last-modified-time"},
		{"right etag, wrong size", map[string]string{"If-Match": "ETAG", "X-Amz-If-Match-Size": "1"}, 412, "x-amz-if-match-size"},
		{"bad size", map[string]string{"X-Amz-If-Match-Size": "five"}, 400, ""},
		{"bad time", map[string]string{"X-Amz-If-Match-Last-Modified-Time": "soon"}, 400, ""},
	}
	var etag string
	for _, c := range cases {
		var mod string
		etag, mod = put()
		hdr := map[string]string{}
		for k, v := range c.hdr {
			hdr[k] = strings.NewReplacer("ETAG", etag, "UNQUOTED", strings.Trim(etag, `"`), "MOD", mod).Replace(v)
		}
		before := be.mutations()
		rec := do(h, req{method: http.MethodDelete, target: "/bkt/k", header: hdr})
		_, _, exists := be.object("bkt", "k")
		switch {
		case rec.Code != c.status:
			t.Errorf("%s: %d %s, want %d", c.name, rec.Code, rec.Body.String(), c.status)
		case c.status == 204 && exists:
			t.Errorf("%s: 204 but the object is still there", c.name)
		case c.status != 204 && (!exists || be.mutations() != before):
			t.Errorf("%s: a refused delete changed the backend", c.name)
		case c.condition != "" && !strings.Contains(rec.Body.String(), fmt.Sprintf("<Condition>%s</Condition>", c.condition)):
			t.Errorf("%s: body %s does not name %s", c.name, rec.Body.String(), c.condition)
		}
	}

	// A missing key: If-Match is NoSuchKey; the other conditions alone let
	// the delete succeed, as an unconditional one does.
	expect(t, do(h, req{method: http.MethodDelete, target: "/bkt/missing", header: map[string]string{"If-Match": etag}}), 404, "NoSuchKey")
	expect(t, do(h, req{method: http.MethodDelete, target: "/bkt/missing", header: map[string]string{"If-Match": "*"}}), 404, "NoSuchKey")
	expect(t, do(h, req{method: http.MethodDelete, target: "/bkt/missing", header: map[string]string{"X-Amz-If-Match-Size": "5"}}), 204, "")
}

func TestDeleteObjectsETag(t *testing.T) {
	be, h := newTestGateway(t, allowAll{})
	setup(t, h, "bkt", map[string]string{"a": "1", "b": "2"})
	info, _, _ := be.object("bkt", "a")
	body := fmt.Sprintf(`<Delete><Object><Key>a</Key><ETag>%s</ETag></Object><Object><Key>b</Key><ETag>"nope"</ETag></Object>`+
		`<Object><Key>c</Key><ETag>"nope"</ETag></Object></Delete>`, quoteETag(info.ETag))
	var res deleteResult
	decodeXML(t, mustDo(t, h, req{method: http.MethodPost, target: "/bkt?delete", body: body}), &res)
	if len(res.Deleted) != 1 || res.Deleted[0].Key != "a" || len(res.Errors) != 2 ||
		res.Errors[0].Key != "b" || res.Errors[0].Code != "PreconditionFailed" || res.Errors[1].Code != "NoSuchKey" {
		t.Fatalf("result %+v", res)
	}
	if _, _, ok := be.object("bkt", "b"); !ok {
		t.Fatal("the entry whose ETag did not match was deleted")
	}
}
