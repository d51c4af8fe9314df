package gateway

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// taggingXML is a Tagging document of the given key=value pairs.
func taggingXML(pairs ...string) string {
	var b strings.Builder
	b.WriteString("<Tagging><TagSet>")
	for _, p := range pairs {
		k, v, _ := strings.Cut(p, "=")
		fmt.Fprintf(&b, "<Tag><Key>%s</Key><Value>%s</Value></Tag>", k, v)
	}
	b.WriteString("</TagSet></Tagging>")
	return b.String()
}

func TestBucketTagging(t *testing.T) {
	h := newCORSGateway(t, allowAll{})
	setup(t, h, "bkt", map[string]string{"obj": "x"})
	expect(t, do(h, req{method: http.MethodGet, target: "/bkt?tagging"}), http.StatusNotFound, "NoSuchTagSet")
	expect(t, do(h, req{method: http.MethodPut, target: "/bkt?tagging", body: taggingXML("env=prod", "team=a b")}), http.StatusNoContent, "")
	rec := do(h, req{method: http.MethodGet, target: "/bkt?tagging"})
	expect(t, rec, http.StatusOK, "")
	for _, want := range []string{"<Key>env</Key><Value>prod</Value>", "<Key>team</Key><Value>a b</Value>"} {
		if !strings.Contains(rec.Body.String(), want) {
			t.Fatalf("GetBucketTagging body lacks %s: %s", want, rec.Body.String())
		}
	}
	// The object's own tags are another thing.
	expect(t, do(h, req{method: http.MethodGet, target: "/bkt/obj?tagging"}), http.StatusOK, "")
	if body := do(h, req{method: http.MethodGet, target: "/bkt/obj?tagging"}).Body.String(); strings.Contains(body, "env") {
		t.Fatalf("the bucket's tags show on its object: %s", body)
	}
	expect(t, do(h, req{method: http.MethodDelete, target: "/bkt?tagging"}), http.StatusNoContent, "")
	expect(t, do(h, req{method: http.MethodGet, target: "/bkt?tagging"}), http.StatusNotFound, "NoSuchTagSet")
	expect(t, do(h, req{method: http.MethodDelete, target: "/bkt?tagging"}), http.StatusNoContent, "")
}

// Every refused PutBucketTagging leaves the tags as they were.
func TestBucketTaggingRefused(t *testing.T) {
	var many []string
	for i := range 51 {
		many = append(many, fmt.Sprintf("k%d=v", i))
	}
	cases := []struct {
		name, target, body, code, msg string
		status                        int
	}{
		{"no bucket", "/nope?tagging", taggingXML(), "NoSuchBucket", "", http.StatusNotFound},
		{"malformed", "/bkt?tagging", "<Tagging><TagSet>", "MalformedXML", "", http.StatusBadRequest},
		{"51 tags", "/bkt?tagging", taggingXML(many...), "BadRequest", msgBucketTagCount, http.StatusBadRequest},
		{"long key", "/bkt?tagging", taggingXML(strings.Repeat("k", 129) + "=v"), "InvalidTag", msgTagKey, http.StatusBadRequest},
		{"long value", "/bkt?tagging", taggingXML("k=" + strings.Repeat("v", 257)), "InvalidTag", msgTagValue, http.StatusBadRequest},
		{"bad key", "/bkt?tagging", taggingXML("ok=v", "a*b=v"), "InvalidTag", msgTagKey, http.StatusBadRequest},
		{"bad value", "/bkt?tagging", taggingXML("k=comma,separated"), "InvalidTag", msgTagValue, http.StatusBadRequest},
		{"duplicate", "/bkt?tagging", taggingXML("k=1", "k=2"), "InvalidTag", msgTagDuplicate, http.StatusBadRequest},
	}
	h := newCORSGateway(t, allowAll{})
	setup(t, h, "bkt", nil)
	mustDo(t, h, req{method: http.MethodPut, target: "/bkt?tagging", body: taggingXML("keep=me")})
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rec := do(h, req{method: http.MethodPut, target: tc.target, body: tc.body})
			expect(t, rec, tc.status, tc.code)
			if tc.msg != "" && !strings.Contains(rec.Body.String(), "<Message>"+tc.msg+"</Message>") {
				t.Fatalf("message is not %q: %s", tc.msg, rec.Body.String())
			}
			if body := do(h, req{method: http.MethodGet, target: "/bkt?tagging"}).Body.String(); !strings.Contains(body, "<Key>keep</Key>") {
				t.Fatalf("a refused PutBucketTagging changed the tags: %s", body)
			}
		})
	}
	expect(t, do(h, req{method: http.MethodGet, target: "/nope?tagging"}), http.StatusNotFound, "NoSuchBucket")
	expect(t, do(h, req{method: http.MethodDelete, target: "/nope?tagging"}), http.StatusNotFound, "NoSuchBucket")
}

// CreateBucket takes the bucket's tags in its CreateBucketConfiguration,
// refusing bad ones before it creates anything.
func TestCreateBucketWithTags(t *testing.T) {
	h := newCORSGateway(t, allowAll{})
	conf := func(tags string) string {
		return "<CreateBucketConfiguration><Tags>" + strings.TrimSuffix(strings.TrimPrefix(tags, "<Tagging><TagSet>"), "</TagSet></Tagging>") + "</Tags></CreateBucketConfiguration>"
	}
	expect(t, do(h, req{method: http.MethodPut, target: "/bad", body: conf(taggingXML("k=1", "k=2"))}), http.StatusBadRequest, "InvalidTag")
	expect(t, do(h, req{method: http.MethodHead, target: "/bad"}), http.StatusNotFound, "")
	mustDo(t, h, req{method: http.MethodPut, target: "/tagged", body: conf(taggingXML("env=prod"))})
	if body := do(h, req{method: http.MethodGet, target: "/tagged?tagging"}).Body.String(); !strings.Contains(body, "<Key>env</Key><Value>prod</Value>") {
		t.Fatalf("CreateBucket's tags not kept: %s", body)
	}
}
