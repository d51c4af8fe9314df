package gateway

import (
	"crypto/md5"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

func deleteBody(quiet bool, keys ...string) string {
	var b strings.Builder
	b.WriteString(`<Delete xmlns="http://s3.amazonaws.com/doc/2006-03-01/">`)
	if quiet {
		b.WriteString("<Quiet>true</Quiet>")
	}
	for _, k := range keys {
		fmt.Fprintf(&b, "<Object><Key>%s</Key></Object>", k)
	}
	b.WriteString("</Delete>")
	return b.String()
}

func TestDeleteObjects(t *testing.T) {
	for _, quiet := range []bool{false, true} {
		be, h := newTestGateway(t, allowAll{})
		setup(t, h, "bkt", map[string]string{"a": "1", "b": "2", "c": "3", "keep": "4"})
		be.fail = func(op string) error {
			if op == "DeleteObject:c" {
				return errors.New("peer exploded")
			}
			return nil
		}
		body := deleteBody(quiet, "a", "b", "c", "never-existed", strings.Repeat("x", 1025), "")
		var res deleteResult
		decodeXML(t, mustDo(t, h, req{method: http.MethodPost, target: "/bkt?delete", body: body}), &res)

		var deleted []string
		for _, d := range res.Deleted {
			deleted = append(deleted, d.Key)
		}
		wantDeleted := "a,b,never-existed"
		if quiet {
			wantDeleted = ""
		}
		if strings.Join(deleted, ",") != wantDeleted {
			t.Errorf("quiet=%v: deleted %v, want %s", quiet, deleted, wantDeleted)
		}
		codes := map[string]string{}
		for _, e := range res.Errors {
			codes[e.Key] = e.Code
		}
		want := map[string]string{"c": "InternalError", strings.Repeat("x", 1025): "KeyTooLongError", "": "InvalidArgument"}
		if len(codes) != len(want) {
			t.Errorf("quiet=%v: errors %v", quiet, codes)
		}
		for k, c := range want {
			if codes[k] != c {
				t.Errorf("quiet=%v: key %.10q error %q, want %q", quiet, k, codes[k], c)
			}
		}
		for key, exists := range map[string]bool{"a": false, "b": false, "c": true, "keep": true} {
			if _, _, ok := be.object("bkt", key); ok != exists {
				t.Errorf("quiet=%v: %s exists=%v", quiet, key, ok)
			}
		}
	}
}

// The plain deletes of a request go to the backend as one batch, each key
// once; a conditional delete and a repeated key go on their own.
func TestDeleteObjectsBatched(t *testing.T) {
	be, h := newTestGateway(t, allowAll{})
	setup(t, h, "bkt", map[string]string{"a": "1", "b": "2", "c": "3", "keep": "4"})
	info, _, _ := be.object("bkt", "c")
	body := fmt.Sprintf(`<Delete><Object><Key>a</Key></Object><Object><Key>b</Key></Object><Object><Key>a</Key></Object>`+
		`<Object><Key>c</Key><ETag>%s</ETag></Object><Object><Key>gone</Key></Object></Delete>`, quoteETag(info.ETag))
	var res deleteResult
	decodeXML(t, mustDo(t, h, req{method: http.MethodPost, target: "/bkt?delete", body: body}), &res)
	if len(res.Deleted) != 5 || len(res.Errors) != 0 {
		t.Fatalf("result %+v", res)
	}
	if len(be.batched) != 1 || strings.Join(be.batched[0], ",") != "a,b,gone" {
		t.Errorf("batches %q, want one of a, b and gone", be.batched)
	}
	for key, exists := range map[string]bool{"a": false, "b": false, "c": false, "keep": true} {
		if _, _, ok := be.object("bkt", key); ok != exists {
			t.Errorf("%s exists=%v", key, ok)
		}
	}
}

func TestDeleteObjectsMalformed(t *testing.T) {
	be, h := newTestGateway(t, allowAll{})
	setup(t, h, "bkt", map[string]string{"a": "1"})
	before := be.mutations()
	many := make([]string, 1001)
	for i := range many {
		many[i] = "a"
	}
	cases := []struct {
		name, body string
		hdr        map[string]string
		code       string
	}{
		{"empty", "", nil, "MalformedXML"},
		{"garbage", "delete everything", nil, "MalformedXML"},
		{"unclosed", "<Delete><Object><Key>a</Key></Object>", nil, "MalformedXML"},
		{"wrong root", "<Remove><Object><Key>a</Key></Object></Remove>", nil, "MalformedXML"},
		{"bad quiet", "<Delete><Quiet>perhaps</Quiet><Object><Key>a</Key></Object></Delete>", nil, "MalformedXML"},
		{"over 1000 keys", deleteBody(false, many...), nil, "MalformedXML"},
		{"bad md5", deleteBody(false, "a"), map[string]string{"Content-MD5": base64.StdEncoding.EncodeToString(make([]byte, 16))}, "BadDigest"},
		{"invalid md5", deleteBody(false, "a"), map[string]string{"Content-MD5": "zz"}, "InvalidDigest"},
	}
	for _, c := range cases {
		rec := do(h, req{method: http.MethodPost, target: "/bkt?delete", body: c.body, header: c.hdr})
		if rec.Code != http.StatusBadRequest || errorCode(t, rec) != c.code {
			t.Errorf("%s: %d %s, want 400 %s", c.name, rec.Code, errorCode(t, rec), c.code)
		}
	}
	if be.mutations() != before {
		t.Error("malformed DeleteObjects changed the backend")
	}
	expect(t, do(h, req{method: http.MethodPost, target: "/nobkt?delete", body: deleteBody(false, "a")}), http.StatusNotFound, "NoSuchBucket")

	body := deleteBody(true, "a")
	sum := md5.Sum([]byte(body))
	mustDo(t, h, req{method: http.MethodPost, target: "/bkt?delete", body: body,
		header: map[string]string{"Content-MD5": base64.StdEncoding.EncodeToString(sum[:])}})
	if _, _, ok := be.object("bkt", "a"); ok {
		t.Error("a survived a DeleteObjects with a correct Content-MD5")
	}
}
