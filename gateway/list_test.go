package gateway

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
)

// listAllV2 pages through ListObjectsV2 with the given query and returns
// keys and common prefixes in order, plus the number of pages.
func listAllV2(t *testing.T, h http.Handler, bucket string, q url.Values) (keys, prefixes []string, pages int) {
	t.Helper()
	q.Set("list-type", "2")
	for {
		var res listBucketResultV2
		decodeXML(t, mustDo(t, h, req{method: http.MethodGet, target: "/" + bucket + "?" + q.Encode()}), &res)
		pages++
		if res.KeyCount != len(res.Contents)+len(res.CommonPrefixes) {
			t.Fatalf("KeyCount %d for %d entries", res.KeyCount, len(res.Contents)+len(res.CommonPrefixes))
		}
		for _, c := range res.Contents {
			keys = append(keys, c.Key)
		}
		for _, p := range res.CommonPrefixes {
			prefixes = append(prefixes, p.Prefix)
		}
		if !res.IsTruncated {
			if res.NextContinuationToken != "" {
				t.Fatal("NextContinuationToken on the last page")
			}
			return keys, prefixes, pages
		}
		if res.NextContinuationToken == "" || pages > 100 {
			t.Fatalf("truncated page without a usable token: %+v", res)
		}
		q.Set("continuation-token", res.NextContinuationToken)
	}
}

func TestListObjectsV2Pagination(t *testing.T) {
	_, h := newTestGateway(t, allowAll{})
	objs := map[string]string{}
	var all []string
	for i := range 7 {
		k := fmt.Sprintf("file%02d", i)
		objs[k] = "x"
		all = append(all, k)
	}
	for _, k := range []string{"dir1/a", "dir1/b", "dir2/c", "dir2/sub/d"} {
		objs[k] = "x"
	}
	setup(t, h, "bkt", objs)

	keys, prefixes, pages := listAllV2(t, h, "bkt", url.Values{"max-keys": {"3"}, "delimiter": {"/"}})
	if !slices.Equal(keys, all) || !slices.Equal(prefixes, []string{"dir1/", "dir2/"}) {
		t.Errorf("delimited listing: keys %v prefixes %v", keys, prefixes)
	}
	if pages != 3 {
		t.Errorf("%d pages for 9 entries at 3 per page", pages)
	}

	keys, _, _ = listAllV2(t, h, "bkt", url.Values{"max-keys": {"2"}, "prefix": {"dir2/"}})
	if !slices.Equal(keys, []string{"dir2/c", "dir2/sub/d"}) {
		t.Errorf("prefix listing %v", keys)
	}
	keys, _, _ = listAllV2(t, h, "bkt", url.Values{"start-after": {"file04"}})
	if !slices.Equal(keys, []string{"file05", "file06"}) {
		t.Errorf("start-after listing %v", keys)
	}

	var res listBucketResultV2
	decodeXML(t, mustDo(t, h, req{method: http.MethodGet, target: "/bkt?list-type=2&max-keys=5000&fetch-owner=true"}), &res)
	if res.MaxKeys != 1000 || len(res.Contents) != 11 || res.Contents[0].Owner == nil || res.Contents[0].StorageClass != "STANDARD" {
		t.Errorf("capped listing: MaxKeys %d, %d entries, first %+v", res.MaxKeys, len(res.Contents), res.Contents[0])
	}
	if res.Contents[0].ETag != `"9dd4e461268c8034f5c8564e155c67a6"` {
		t.Errorf("listing ETag %q", res.Contents[0].ETag)
	}
	res = listBucketResultV2{}
	decodeXML(t, mustDo(t, h, req{method: http.MethodGet, target: "/bkt?list-type=2"}), &res)
	if res.Contents[0].Owner != nil {
		t.Error("Owner without fetch-owner")
	}
	res = listBucketResultV2{}
	decodeXML(t, mustDo(t, h, req{method: http.MethodGet, target: "/bkt?list-type=2&max-keys=0"}), &res)
	if len(res.Contents) != 0 || res.IsTruncated {
		t.Errorf("max-keys=0: %+v", res)
	}
}

func TestListObjectsV2EncodingURL(t *testing.T) {
	be, h := newTestGateway(t, allowAll{})
	setup(t, h, "bkt", nil)
	keys := []string{"a b/c+d", "a b/日本", "pct%41", "amp&lt", "ctl\x01x", "plain"}
	for _, k := range keys {
		mustDo(t, h, req{method: http.MethodPut, target: "/bkt/" + url.PathEscape(k), body: "x"})
		if _, _, ok := be.object("bkt", k); !ok {
			t.Fatalf("key %q not stored", k)
		}
	}
	q := url.Values{"list-type": {"2"}, "encoding-type": {"url"}, "delimiter": {"/"}, "start-after": {"a b"}}
	var res listBucketResultV2
	decodeXML(t, mustDo(t, h, req{method: http.MethodGet, target: "/bkt?" + q.Encode()}), &res)
	if res.EncodingType != "url" || res.Delimiter != "/" || res.StartAfter != "a+b" {
		t.Errorf("encoded echo: type %q delimiter %q start-after %q", res.EncodingType, res.Delimiter, res.StartAfter)
	}
	var got []string
	for _, c := range res.Contents {
		dec, err := url.QueryUnescape(c.Key)
		if err != nil {
			t.Fatalf("key %q does not decode: %v", c.Key, err)
		}
		got = append(got, dec)
	}
	if !slices.Equal(got, []string{"amp&lt", "ctl\x01x", "pct%41", "plain"}) {
		t.Errorf("decoded keys %q", got)
	}
	if len(res.CommonPrefixes) != 1 || res.CommonPrefixes[0].Prefix != "a+b/" {
		t.Errorf("encoded prefixes %+v", res.CommonPrefixes)
	}
	for _, c := range res.Contents {
		for _, r := range c.Key {
			if r < 0x20 || r > 0x7e || r == ' ' {
				t.Errorf("encoded key %q contains %q", c.Key, r)
			}
		}
	}
}

func TestListObjectsV2BadArguments(t *testing.T) {
	_, h := newTestGateway(t, allowAll{})
	setup(t, h, "bkt", nil)
	for _, q := range []string{
		"list-type=2&max-keys=-1",
		"list-type=2&max-keys=ten",
		"list-type=2&continuation-token=" + strings.Repeat("k", maxTokenLen+1),
		"list-type=2&continuation-token=",
		"list-type=2&encoding-type=base64",
		"max-keys=x",
	} {
		expect(t, do(h, req{method: http.MethodGet, target: "/bkt?" + q}), http.StatusBadRequest, "InvalidArgument")
	}
	expect(t, do(h, req{method: http.MethodGet, target: "/nobkt?list-type=2"}), http.StatusNotFound, "NoSuchBucket")
	expect(t, do(h, req{method: http.MethodGet, target: "/nobkt?list-type=2&max-keys=0"}), http.StatusNotFound, "NoSuchBucket")
	expect(t, do(h, req{method: http.MethodGet, target: "/nobkt"}), http.StatusNotFound, "NoSuchBucket")
}

func TestListObjectsV1(t *testing.T) {
	_, h := newTestGateway(t, allowAll{})
	setup(t, h, "bkt", map[string]string{"a": "x", "b/1": "x", "b/2": "x", "c": "x", "d": "x"})

	var res listBucketResultV1
	decodeXML(t, mustDo(t, h, req{method: http.MethodGet, target: "/bkt?max-keys=2&delimiter=/"}), &res)
	if !res.IsTruncated || res.NextMarker != "b/" || len(res.Contents) != 1 || len(res.CommonPrefixes) != 1 {
		t.Fatalf("page 1: %+v", res)
	}
	if res.Contents[0].Owner == nil {
		t.Error("v1 listing without Owner")
	}
	res = listBucketResultV1{}
	decodeXML(t, mustDo(t, h, req{method: http.MethodGet, target: "/bkt?max-keys=2&delimiter=/&marker=b/"}), &res)
	if res.Marker == nil || *res.Marker != "b/" || len(res.Contents) != 2 || res.Contents[0].Key != "c" || res.Contents[1].Key != "d" || res.IsTruncated {
		t.Fatalf("page 2: %+v", res)
	}

	// Without a delimiter NextMarker is still sent: the last key, where
	// clients that ignore it continue anyway.
	res = listBucketResultV1{}
	decodeXML(t, mustDo(t, h, req{method: http.MethodGet, target: "/bkt?max-keys=2"}), &res)
	if !res.IsTruncated || res.NextMarker != "b/1" || res.Contents[1].Key != "b/1" {
		t.Fatalf("undelimited page: %+v", res)
	}
	res = listBucketResultV1{}
	decodeXML(t, mustDo(t, h, req{method: http.MethodGet, target: "/bkt?marker=b/1&encoding-type=url&prefix=b/"}), &res)
	if len(res.Contents) != 1 || res.Contents[0].Key != "b/2" || res.EncodingType != "url" {
		t.Fatalf("marker page: %+v", res)
	}
}

// TestListObjectsV2Tokens: a token is the key the page ended on, so it
// also resumes from a key the client names; a start-after beyond it wins;
// keys XML cannot carry travel escaped and lose nothing.
func TestListObjectsV2Tokens(t *testing.T) {
	_, h := newTestGateway(t, allowAll{})
	keys := []string{"bar", "baz", "ctl\x01x", "ctlz", "foo", "quxx", "~~tilde"}
	setup(t, h, "bkt", nil)
	for _, k := range keys {
		mustDo(t, h, req{method: http.MethodPut, target: "/bkt/" + url.PathEscape(k), body: "x"})
	}

	list := func(q string) listBucketResultV2 {
		var res listBucketResultV2
		decodeXML(t, mustDo(t, h, req{method: http.MethodGet, target: "/bkt?list-type=2&" + q}), &res)
		return res
	}
	names := func(res listBucketResultV2) string {
		var out []string
		for _, c := range res.Contents {
			out = append(out, c.Key)
		}
		return strings.Join(out, ",")
	}
	if res := list("max-keys=1"); res.NextContinuationToken != "bar" {
		t.Errorf("token after bar: %q", res.NextContinuationToken)
	}
	cases := []struct{ name, query, want string }{
		{"start-after beyond the token", "continuation-token=bar&start-after=ctlz&max-keys=2", "foo,quxx"},
		{"token beyond start-after", "continuation-token=foo&start-after=bar&max-keys=2", "quxx,~~tilde"},
		{"a key the client names", "continuation-token=bat&max-keys=1", "baz"},
	}
	for _, c := range cases {
		if got := names(list(c.query)); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
	for _, n := range []int{1, 2, 3} {
		got, _, _ := listAllV2(t, h, "bkt", url.Values{"max-keys": {fmt.Sprint(n)}, "encoding-type": {"url"}})
		for i, k := range got {
			got[i], _ = url.QueryUnescape(k)
		}
		if !slices.Equal(got, keys) {
			t.Errorf("max-keys %d pages: %q, want %q", n, got, keys)
		}
	}
}

// TestListEchoes: Prefix and v1's Marker are elements exactly when the
// request sent them.
func TestListEchoes(t *testing.T) {
	_, h := newTestGateway(t, allowAll{})
	setup(t, h, "bkt", map[string]string{"a": "x"})
	cases := []struct {
		query      string
		has, lacks []string
	}{
		{"", nil, []string{"<Prefix>", "<Marker>", "<NextMarker>", "<Delimiter>"}},
		{"prefix=&marker=", []string{"<Prefix></Prefix>", "<Marker></Marker>"}, nil},
		{"prefix=a&marker=0", []string{"<Prefix>a</Prefix>", "<Marker>0</Marker>"}, nil},
		{"list-type=2", nil, []string{"<Prefix>", "<StartAfter>", "<ContinuationToken>", "<NextContinuationToken>"}},
		{"list-type=2&prefix=", []string{"<Prefix></Prefix>"}, nil},
	}
	for _, c := range cases {
		body := mustDo(t, h, req{method: http.MethodGet, target: "/bkt?" + c.query}).Body.String()
		for _, s := range c.has {
			if !strings.Contains(body, s) {
				t.Errorf("%q: no %s in %s", c.query, s, body)
			}
		}
		for _, s := range c.lacks {
			if strings.Contains(body, s) {
				t.Errorf("%q: %s in %s", c.query, s, body)
			}
		}
	}
}
