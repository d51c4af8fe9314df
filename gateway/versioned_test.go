package gateway

import (
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
)

func newVersioningGateway(t *testing.T) http.Handler {
	t.Helper()
	h := newCORSGateway(t, allowAll{})
	mustDo(t, h, req{method: http.MethodPut, target: "/bkt"})
	return h
}

func setVersioning(t *testing.T, h http.Handler, status string) {
	t.Helper()
	mustDo(t, h, req{method: http.MethodPut, target: "/bkt?versioning",
		body: `<VersioningConfiguration xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Status>` + status + `</Status></VersioningConfiguration>`})
}

// putVersion writes key and returns the version ID the answer names.
func putVersion(t *testing.T, h http.Handler, key, body string) string {
	t.Helper()
	return mustDo(t, h, req{method: http.MethodPut, target: "/bkt/" + key, body: body}).Header().Get("X-Amz-Version-Id")
}

// getVersion reads key (at version id, "" for the latest) and returns
// the response.
func getVersion(h http.Handler, key, id string) (status int, body string, hdr http.Header) {
	target := "/bkt/" + key
	if id != "" {
		target += "?versionId=" + url.QueryEscape(id)
	}
	rec := do(h, req{method: http.MethodGet, target: target})
	return rec.Code, rec.Body.String(), rec.Header()
}

// versionLines lists every version of the bucket as "key id latest
// marker" lines, following the pages of max-keys each.
func versionLines(t *testing.T, h http.Handler, q url.Values) []string {
	t.Helper()
	var lines []string
	for _, p := range listVersionPages(t, h, "bkt", q) {
		// A page holds versions and markers in order; both are sorted by
		// key, then newest first, so merging by position within a page
		// is checked by the caller's expected order.
		for _, v := range p.Versions {
			lines = append(lines, v.Key+" "+v.VersionID+" "+boolWord(v.IsLatest, "latest")+" version")
		}
		for _, m := range p.DeleteMarkers {
			lines = append(lines, m.Key+" "+m.VersionID+" "+boolWord(m.IsLatest, "latest")+" marker")
		}
	}
	return lines
}

func boolWord(b bool, w string) string {
	if b {
		return w
	}
	return "-"
}

func TestBucketVersioningSetting(t *testing.T) {
	h := newVersioningGateway(t)
	var v versioningConfiguration
	decodeXML(t, mustDo(t, h, req{method: http.MethodGet, target: "/bkt?versioning"}), &v)
	if v.Status != "" {
		t.Fatalf("a new bucket reports %q", v.Status)
	}
	for body, code := range map[string]string{
		"":    "MalformedXML",
		"<x>": "MalformedXML",
		`<VersioningConfiguration><Status>Off</Status></VersioningConfiguration>`:                                   "MalformedXML",
		`<VersioningConfiguration></VersioningConfiguration>`:                                                       "IllegalVersioningConfigurationException",
		`<VersioningConfiguration><Status>Enabled</Status><MfaDelete>Enabled</MfaDelete></VersioningConfiguration>`: "NotImplemented",
	} {
		rec := do(h, req{method: http.MethodPut, target: "/bkt?versioning", body: body})
		if got := errorCode(t, rec); got != code {
			t.Errorf("%q: %d %s, want %s", body, rec.Code, got, code)
		}
	}
	for _, st := range []string{"Enabled", "Suspended", "Enabled"} {
		setVersioning(t, h, st)
		decodeXML(t, mustDo(t, h, req{method: http.MethodGet, target: "/bkt?versioning"}), &v)
		if v.Status != st {
			t.Fatalf("set %s, read %q", st, v.Status)
		}
	}
	expect(t, do(h, req{method: http.MethodGet, target: "/nobkt?versioning"}), http.StatusNotFound, "NoSuchBucket")
	expect(t, do(h, req{method: http.MethodPut, target: "/nobkt?versioning",
		body: `<VersioningConfiguration><Status>Enabled</Status></VersioningConfiguration>`}), http.StatusNotFound, "NoSuchBucket")
}

// TestVersionedObjects walks one key through S3's versioning: the null
// version written before versioning, versions, a delete marker, reads by
// version, the marker's removal, suspension and the null version again.
func TestVersionedObjects(t *testing.T) {
	h := newVersioningGateway(t)
	if id := putVersion(t, h, "k", "v0"); id != "" {
		t.Fatalf("unversioned PUT answers version %q", id)
	}
	setVersioning(t, h, "Enabled")
	id1 := putVersion(t, h, "k", "v1")
	id2 := putVersion(t, h, "k", "v2")
	if id1 == "" || id2 == "" || id1 == id2 {
		t.Fatalf("version IDs %q %q", id1, id2)
	}
	for id, want := range map[string]string{"": "v2", id1: "v1", id2: "v2", "null": "v0"} {
		st, body, hdr := getVersion(h, "k", id)
		wantID := id
		if id == "" {
			wantID = id2
		}
		if st != http.StatusOK || body != want || hdr.Get("X-Amz-Version-Id") != wantID {
			t.Errorf("GET k@%q: %d %q version %q; want %q %q", id, st, body, hdr.Get("X-Amz-Version-Id"), want, wantID)
		}
	}
	rec := mustDo(t, h, req{method: http.MethodHead, target: "/bkt/k?versionId=" + id1})
	if rec.Header().Get("Content-Length") != "2" || rec.Header().Get("X-Amz-Version-Id") != id1 {
		t.Errorf("HEAD k@%s: %v", id1, rec.Header())
	}

	rec = mustDo(t, h, req{method: http.MethodDelete, target: "/bkt/k"})
	marker := rec.Header().Get("X-Amz-Version-Id")
	if rec.Header().Get("X-Amz-Delete-Marker") != "true" || marker == "" || marker == id2 {
		t.Fatalf("DELETE k: %v", rec.Header())
	}
	st, _, hdr := getVersion(h, "k", "")
	if st != http.StatusNotFound || hdr.Get("X-Amz-Delete-Marker") != "true" || hdr.Get("X-Amz-Version-Id") != marker {
		t.Errorf("GET k behind a marker: %d %v", st, hdr)
	}
	expect(t, do(h, req{method: http.MethodHead, target: "/bkt/k"}), http.StatusNotFound, "")
	expect(t, do(h, req{method: http.MethodGet, target: "/bkt/k?versionId=" + marker}), http.StatusMethodNotAllowed, "MethodNotAllowed")
	if st, body, _ := getVersion(h, "k", id1); st != http.StatusOK || body != "v1" {
		t.Errorf("GET k@%s behind a marker: %d %q", id1, st, body)
	}
	var list listBucketResultV2
	decodeXML(t, mustDo(t, h, req{method: http.MethodGet, target: "/bkt?list-type=2"}), &list)
	if len(list.Contents) != 0 {
		t.Errorf("a deleted key lists: %+v", list.Contents)
	}
	want := []string{"k " + id2 + " - version", "k " + id1 + " - version", "k null - version", "k " + marker + " latest marker"}
	if got := versionLines(t, h, url.Values{}); !slices.Equal(got, want) {
		t.Errorf("versions %q, want %q", got, want)
	}

	rec = mustDo(t, h, req{method: http.MethodDelete, target: "/bkt/k?versionId=" + marker})
	if rec.Header().Get("X-Amz-Delete-Marker") != "true" || rec.Header().Get("X-Amz-Version-Id") != marker {
		t.Errorf("DELETE of the marker: %v", rec.Header())
	}
	if st, body, _ := getVersion(h, "k", ""); st != http.StatusOK || body != "v2" {
		t.Errorf("GET k with the marker gone: %d %q", st, body)
	}

	setVersioning(t, h, "Suspended")
	if id := putVersion(t, h, "k", "v3"); id != "" {
		t.Errorf("suspended PUT answers version %q, want none (the null version)", id)
	}
	want = []string{"k null latest version", "k " + id2 + " - version", "k " + id1 + " - version"}
	if got := versionLines(t, h, url.Values{}); !slices.Equal(got, want) {
		t.Errorf("after a suspended PUT: versions %q, want %q", got, want)
	}
	if st, body, _ := getVersion(h, "k", ""); st != http.StatusOK || body != "v3" {
		t.Errorf("GET k: %d %q", st, body)
	}
	mustDo(t, h, req{method: http.MethodDelete, target: "/bkt/k?versionId=" + id2})
	expect(t, do(h, req{method: http.MethodGet, target: "/bkt/k?versionId=" + id2}), http.StatusNotFound, "NoSuchVersion")
	expect(t, do(h, req{method: http.MethodGet, target: "/bkt/k?versionId=bo_gus"}), http.StatusBadRequest, "InvalidArgument")
	expect(t, do(h, req{method: http.MethodGet, target: "/bkt/k?versionId=01BX5ZZKBKACTAV9WEVGEMMVRZ"}), http.StatusNotFound, "NoSuchVersion")
	expectElems(t, do(h, req{method: http.MethodGet, target: "/bkt?versions&max-keys=-3"}), http.StatusBadRequest,
		map[string]string{"Code": "InvalidArgument", "Message": "max-keys cannot be negative", "ArgumentValue": "-3"})
	expect(t, do(h, req{method: http.MethodGet, target: "/bkt?versions&max-keys=-x"}), http.StatusBadRequest, "InvalidArgument")
}

func TestVersionedCopyAndBatchDelete(t *testing.T) {
	h := newVersioningGateway(t)
	setVersioning(t, h, "Enabled")
	id1 := putVersion(t, h, "src", "first")
	putVersion(t, h, "src", "second")
	rec := mustDo(t, h, req{method: http.MethodPut, target: "/bkt/dst", header: map[string]string{"X-Amz-Copy-Source": "bkt/src?versionId=" + id1}})
	if rec.Header().Get("X-Amz-Copy-Source-Version-Id") != id1 || rec.Header().Get("X-Amz-Version-Id") == "" {
		t.Errorf("copy headers %v", rec.Header())
	}
	if st, body, _ := getVersion(h, "dst", ""); st != http.StatusOK || body != "first" {
		t.Errorf("copy of %s: %d %q", id1, st, body)
	}

	var res deleteResult
	decodeXML(t, mustDo(t, h, req{method: http.MethodPost, target: "/bkt?delete",
		body: `<Delete><Object><Key>src</Key><VersionId>` + id1 + `</VersionId></Object><Object><Key>dst</Key></Object></Delete>`}), &res)
	if len(res.Deleted) != 2 || len(res.Errors) != 0 {
		t.Fatalf("DeleteObjects: %+v", res)
	}
	if d := res.Deleted[0]; d.VersionID != id1 || d.DeleteMarker == nil || *d.DeleteMarker {
		t.Errorf("version delete: %+v", d)
	}
	if d := res.Deleted[1]; d.DeleteMarker == nil || !*d.DeleteMarker || d.DeleteMarkerVersionID == "" {
		t.Errorf("marker write: %+v", d)
	}
	expect(t, do(h, req{method: http.MethodGet, target: "/bkt/src?versionId=" + id1}), http.StatusNotFound, "NoSuchVersion")
	expect(t, do(h, req{method: http.MethodGet, target: "/bkt/dst"}), http.StatusNotFound, "NoSuchKey")
	expect(t, do(h, req{method: http.MethodPut, target: "/bkt/x", header: map[string]string{
		"X-Amz-Copy-Source": "bkt/dst?versionId=" + res.Deleted[1].DeleteMarkerVersionID}}), http.StatusBadRequest, "InvalidRequest")
}

// TestVersionedListings: ListObjects shows each key's latest version and
// hides keys whose latest is a marker, with delimiters the peers cannot
// fold (hex digits) as with those they can; ListObjectVersions pages one
// version at a time through every version in order.
func TestVersionedListings(t *testing.T) {
	h := newVersioningGateway(t)
	setVersioning(t, h, "Enabled")
	ids := map[string][]string{}
	for _, k := range []string{"a/1", "a/1", "a/2", "b", "c0d", "c0e", "c0e"} {
		ids[k] = append([]string{putVersion(t, h, k, k)}, ids[k]...)
	}
	mustDo(t, h, req{method: http.MethodDelete, target: "/bkt/a/2"})
	cases := []struct {
		q              string
		keys, prefixes []string
	}{
		{"", []string{"a/1", "b", "c0d", "c0e"}, nil},
		{"delimiter=/", []string{"b", "c0d", "c0e"}, []string{"a/"}},
		{"delimiter=0", []string{"a/1", "b"}, []string{"c0"}},
		{"delimiter=d", []string{"a/1", "b", "c0e"}, []string{"c0d"}},
		{"prefix=c0&delimiter=e", []string{"c0d"}, []string{"c0e"}},
	}
	for _, tc := range cases {
		for _, max := range []string{"1", "1000"} {
			var keys, prefixes []string
			q, _ := url.ParseQuery(tc.q)
			q.Set("max-keys", max)
			for pages := 0; ; pages++ {
				var res listBucketResultV1
				decodeXML(t, mustDo(t, h, req{method: http.MethodGet, target: "/bkt?" + q.Encode()}), &res)
				for _, o := range res.Contents {
					keys = append(keys, o.Key)
				}
				for _, p := range res.CommonPrefixes {
					prefixes = append(prefixes, p.Prefix)
				}
				if !res.IsTruncated || pages > 20 {
					break
				}
				q.Set("marker", res.NextMarker)
			}
			if !slices.Equal(keys, tc.keys) || !slices.Equal(prefixes, tc.prefixes) {
				t.Errorf("%q max %s: keys %q prefixes %q; want %q %q", tc.q, max, keys, prefixes, tc.keys, tc.prefixes)
			}
		}
	}

	var all []string
	for _, p := range listVersionPages(t, h, "bkt", url.Values{"max-keys": {"1"}}) {
		for _, v := range p.Versions {
			all = append(all, v.Key+"@"+v.VersionID)
		}
		for _, m := range p.DeleteMarkers {
			all = append(all, m.Key+"@"+m.VersionID+"(marker)")
		}
	}
	joined := strings.Join(all, " ")
	for k, vs := range ids {
		for _, id := range vs {
			if strings.Count(joined, k+"@"+id) != 1 {
				t.Errorf("%s@%s listed %d times in %s", k, id, strings.Count(joined, k+"@"+id), joined)
			}
		}
	}
	if len(all) != 8 {
		t.Errorf("%d versions and markers listed, want 8: %s", len(all), joined)
	}
	// One page per entry, newest version of a key first.
	if i, j := strings.Index(joined, "c0e@"+ids["c0e"][0]), strings.Index(joined, "c0e@"+ids["c0e"][1]); i > j {
		t.Errorf("older version first: %s", joined)
	}
}
