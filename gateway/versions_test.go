package gateway

import (
	"net/http"
	"net/url"
	"slices"
	"testing"
)

// versionsListing decodes a ListVersionsResult, versions and markers
// apart.
type versionsListing struct {
	IsTruncated         bool              `xml:"IsTruncated"`
	NextKeyMarker       string            `xml:"NextKeyMarker"`
	NextVersionIDMarker string            `xml:"NextVersionIdMarker"`
	Versions            []versionXML      `xml:"Version"`
	DeleteMarkers       []deleteMarkerXML `xml:"DeleteMarker"`
	CommonPrefixes      []prefixXML       `xml:"CommonPrefixes"`
}

// listVersionPages pages through ListObjectVersions with q, following
// NextKeyMarker and NextVersionIdMarker, and returns each page.
func listVersionPages(t *testing.T, h http.Handler, bucket string, q url.Values) []versionsListing {
	t.Helper()
	var pages []versionsListing
	for len(pages) < 100 {
		var res versionsListing
		decodeXML(t, mustDo(t, h, req{method: http.MethodGet, target: "/" + bucket + "?versions&" + q.Encode()}), &res)
		pages = append(pages, res)
		if !res.IsTruncated {
			return pages
		}
		q.Set("key-marker", res.NextKeyMarker)
		q.Del("version-id-marker")
		if res.NextVersionIDMarker != "" {
			q.Set("version-id-marker", res.NextVersionIDMarker)
		}
	}
	t.Fatal("listing never ends")
	return nil
}

func TestListObjectVersions(t *testing.T) {
	_, h := newTestGateway(t, allowAll{})
	setup(t, h, "bkt", map[string]string{"a": "1", "b/1": "22", "b/2": "333", "c": "4444"})
	type line struct {
		keys, prefixes []string
		nextKey        string
		nextVersion    string
	}
	cases := []struct {
		name string
		q    url.Values
		want []line
	}{
		{"all", url.Values{}, []line{{keys: []string{"a", "b/1", "b/2", "c"}}}},
		{"delimiter", url.Values{"delimiter": {"/"}}, []line{{keys: []string{"a", "c"}, prefixes: []string{"b/"}}}},
		{"pages", url.Values{"max-keys": {"2"}}, []line{
			{keys: []string{"a", "b/1"}, nextKey: "b/1", nextVersion: "null"},
			{keys: []string{"b/2", "c"}},
		}},
		{"pages ending on a prefix", url.Values{"max-keys": {"2"}, "delimiter": {"/"}}, []line{
			{keys: []string{"a"}, prefixes: []string{"b/"}, nextKey: "b/"},
			{keys: []string{"c"}},
		}},
		{"prefix", url.Values{"prefix": {"b/"}}, []line{{keys: []string{"b/1", "b/2"}}}},
		{"key marker", url.Values{"key-marker": {"b/1"}}, []line{{keys: []string{"b/2", "c"}}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			pages := listVersionPages(t, h, "bkt", tc.q)
			if len(pages) != len(tc.want) {
				t.Fatalf("%d pages, want %d: %+v", len(pages), len(tc.want), pages)
			}
			for i, p := range pages {
				var keys, prefixes []string
				for _, v := range p.Versions {
					keys = append(keys, v.Key)
					if v.VersionID != "null" || !v.IsLatest || v.ETag == "" || v.LastModified == "" || v.StorageClass == "" || v.Owner == nil {
						t.Errorf("page %d: version %+v", i, v)
					}
				}
				for _, cp := range p.CommonPrefixes {
					prefixes = append(prefixes, cp.Prefix)
				}
				w := tc.want[i]
				if !slices.Equal(keys, w.keys) || !slices.Equal(prefixes, w.prefixes) ||
					p.NextKeyMarker != w.nextKey || p.NextVersionIDMarker != w.nextVersion {
					t.Errorf("page %d: keys %v prefixes %v next %q/%q; want %+v", i, keys, prefixes, p.NextKeyMarker, p.NextVersionIDMarker, w)
				}
			}
		})
	}
	var res versionsListing
	decodeXML(t, mustDo(t, h, req{method: http.MethodGet, target: "/bkt?versions"}), &res)
	if res.Versions[3].Size != 4 {
		t.Errorf("size of c: %d", res.Versions[3].Size)
	}
}

func TestListObjectVersionsBadArguments(t *testing.T) {
	be, h := newTestGateway(t, allowAll{})
	setup(t, h, "bkt", map[string]string{"a": "1"})
	before := be.mutations()
	for _, q := range []string{
		"versions&version-id-marker=null",
		"versions&key-marker=a&version-id-marker=3HL4kqtJlcpXroDTDmJ",
		"versions&max-keys=-1",
		"versions&encoding-type=base64",
	} {
		expect(t, do(h, req{method: http.MethodGet, target: "/bkt?" + q}), http.StatusBadRequest, "InvalidArgument")
	}
	expect(t, do(h, req{method: http.MethodGet, target: "/nobkt?versions"}), http.StatusNotFound, "NoSuchBucket")
	if be.mutations() != before {
		t.Error("bad listings changed the backend")
	}
}
