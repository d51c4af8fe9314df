package e2e

import (
	"encoding/xml"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/minio/minio-go/v7"
)

// listXML is a ListObjects (v1 or v2) response; optional elements are
// pointers so a test tells an element sent empty from one left out.
type listXML struct {
	Prefix                *string `xml:"Prefix"`
	Marker                *string `xml:"Marker"`
	NextMarker            *string `xml:"NextMarker"`
	Delimiter             *string `xml:"Delimiter"`
	StartAfter            *string `xml:"StartAfter"`
	ContinuationToken     *string `xml:"ContinuationToken"`
	NextContinuationToken *string `xml:"NextContinuationToken"`
	EncodingType          *string `xml:"EncodingType"`
	MaxKeys               int     `xml:"MaxKeys"`
	KeyCount              *int    `xml:"KeyCount"`
	IsTruncated           bool    `xml:"IsTruncated"`
	Contents              []struct {
		Key   string `xml:"Key"`
		Owner *struct {
			ID string `xml:"ID"`
		} `xml:"Owner"`
	} `xml:"Contents"`
	CommonPrefixes []struct {
		Prefix string `xml:"Prefix"`
	} `xml:"CommonPrefixes"`
}

// summary renders what a listing case checks: the elements that were
// sent (tokens as "<token>", since they are opaque), keys, prefixes.
func (r listXML) summary() string {
	var b strings.Builder
	for _, f := range []struct {
		name string
		v    *string
	}{
		{"Prefix", r.Prefix}, {"Marker", r.Marker}, {"NextMarker", r.NextMarker}, {"Delimiter", r.Delimiter},
		{"StartAfter", r.StartAfter}, {"EncodingType", r.EncodingType},
	} {
		if f.v != nil {
			fmt.Fprintf(&b, "%s=%q ", f.name, *f.v)
		}
	}
	if r.NextContinuationToken != nil {
		b.WriteString("NextContinuationToken ")
	}
	fmt.Fprintf(&b, "MaxKeys=%d truncated=%v keys=", r.MaxKeys, r.IsTruncated)
	var keys, prefixes []string
	for _, c := range r.Contents {
		keys = append(keys, c.Key)
	}
	for _, p := range r.CommonPrefixes {
		prefixes = append(prefixes, p.Prefix)
	}
	return b.String() + strings.Join(keys, ",") + " prefixes=" + strings.Join(prefixes, ",")
}

// query encodes q with spaces as %20, the form every signer agrees on.
func query(kv ...string) string {
	q := url.Values{}
	for i := 0; i+1 < len(kv); i += 2 {
		q.Add(kv[i], kv[i+1])
	}
	return strings.ReplaceAll(q.Encode(), "+", "%20")
}

func (rc *rawClient) list(bucket, q string) listXML {
	rc.t.Helper()
	status, body, _ := rc.do(rawReq{method: "GET", path: "/" + bucket + "?" + q})
	if status != 200 {
		rc.t.Fatalf("GET /%s?%s: %d %s", bucket, q, status, body)
	}
	var r listXML
	if err := xml.Unmarshal(body, &r); err != nil {
		rc.t.Fatalf("GET /%s?%s: %v\n%s", bucket, q, err, body)
	}
	return r
}

// TestListObjectsParameters checks ListObjects v1 and v2 against a real
// server, element by element: what is echoed, what encoding-type=url
// encodes (and how), NextMarker, max-keys bounds, the owner, and which
// requests S3 refuses.
func TestListObjectsParameters(t *testing.T) {
	c := startServer(t)
	rc := newRaw(t, c)
	mustMakeBucket(t, c, "lists")
	for _, k := range []string{"a b/c+d", "a b/e", "dir/1", "dir/2", "plain", "x~*(1)", "zzz"} {
		mustPut(t, c, "lists", k, []byte("x"), minio.PutObjectOptions{})
	}
	cases := []struct {
		name, query, want string
	}{
		{"v1 bare: no Prefix, no Marker", "",
			`MaxKeys=1000 truncated=false keys=a b/c+d,a b/e,dir/1,dir/2,plain,x~*(1),zzz prefixes=`},
		{"v1 empty Prefix and Marker are echoed", query("prefix", "", "marker", ""),
			`Prefix="" Marker="" MaxKeys=1000 truncated=false keys=a b/c+d,a b/e,dir/1,dir/2,plain,x~*(1),zzz prefixes=`},
		{"v1 NextMarker without a delimiter", query("max-keys", "2"),
			`NextMarker="a b/e" MaxKeys=2 truncated=true keys=a b/c+d,a b/e prefixes=`},
		{"v1 NextMarker on a common prefix", query("max-keys", "1", "delimiter", "/"),
			`NextMarker="a b/" Delimiter="/" MaxKeys=1 truncated=true keys= prefixes=a b/`},
		{"v1 continue after a common prefix", query("max-keys", "2", "delimiter", "/", "marker", "a b/"),
			`Marker="a b/" NextMarker="plain" Delimiter="/" MaxKeys=2 truncated=true keys=plain prefixes=dir/`},
		{"v1 echoes as sent", query("prefix", "a b/", "marker", "a b/c+d"),
			`Prefix="a b/" Marker="a b/c+d" MaxKeys=1000 truncated=false keys=a b/e prefixes=`},
		{"v1 url-encodes echoes, keys and NextMarker", query("prefix", "a b/", "marker", "a", "max-keys", "1", "encoding-type", "url"),
			`Prefix="a+b/" Marker="a" NextMarker="a+b/c%2Bd" EncodingType="url" MaxKeys=1 truncated=true keys=a+b/c%2Bd prefixes=`},
		{"v1 url-encodes the delimiter and prefixes", query("delimiter", " ", "encoding-type", "url"),
			`Delimiter="+" EncodingType="url" MaxKeys=1000 truncated=false keys=dir/1,dir/2,plain,x~%2A%281%29,zzz prefixes=a+`},
		{"v1 max-keys capped", query("max-keys", "5000", "prefix", "z"),
			`Prefix="z" MaxKeys=1000 truncated=false keys=zzz prefixes=`},
		{"v1 max-keys 0", query("max-keys", "0"),
			`MaxKeys=0 truncated=false keys= prefixes=`},
		{"v2 bare: no StartAfter, no tokens", query("list-type", "2", "prefix", "dir/"),
			`Prefix="dir/" MaxKeys=1000 truncated=false keys=dir/1,dir/2 prefixes=`},
		{"v2 start-after", query("list-type", "2", "start-after", "plain"),
			`StartAfter="plain" MaxKeys=1000 truncated=false keys=x~*(1),zzz prefixes=`},
		{"v2 url-encodes StartAfter", query("list-type", "2", "start-after", "x~*(0) ", "encoding-type", "url"),
			`StartAfter="x~%2A%280%29+" EncodingType="url" MaxKeys=1000 truncated=false keys=x~%2A%281%29,zzz prefixes=`},
		{"v2 truncated", query("list-type", "2", "max-keys", "3", "delimiter", "/"),
			`Delimiter="/" NextContinuationToken MaxKeys=3 truncated=true keys=plain prefixes=a b/,dir/`},
		{"v2 max-keys 0", query("list-type", "2", "max-keys", "0"),
			`MaxKeys=0 truncated=false keys= prefixes=`},
		{"v2 empty prefix is echoed", query("list-type", "2", "prefix", "", "max-keys", "1"),
			`Prefix="" NextContinuationToken MaxKeys=1 truncated=true keys=a b/c+d prefixes=`},
	}
	for _, tc := range cases {
		if got := rc.list("lists", tc.query).summary(); got != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.name, got, tc.want)
		}
	}

	// A token is the key the page ended on, echoed as sent, never
	// encoded; a start-after beyond it decides where the page starts.
	first := rc.list("lists", query("list-type", "2", "max-keys", "2"))
	if first.NextContinuationToken == nil || *first.NextContinuationToken != "a b/e" {
		t.Fatalf("token after a b/e: %v (%s)", first.NextContinuationToken, first.summary())
	}
	tok := *first.NextContinuationToken
	next := rc.list("lists", query("list-type", "2", "continuation-token", tok, "encoding-type", "url"))
	want := `EncodingType="url" MaxKeys=1000 truncated=false keys=dir/1,dir/2,plain,x~%2A%281%29,zzz prefixes=`
	if next.summary() != want || next.ContinuationToken == nil || *next.ContinuationToken != tok {
		t.Errorf("token:\n got %s (token %v)\nwant %s", next.summary(), next.ContinuationToken, want)
	}
	if n := next.KeyCount; n == nil || *n != 5 {
		t.Errorf("KeyCount %v, want 5", n)
	}
	next = rc.list("lists", query("list-type", "2", "continuation-token", tok, "start-after", "x"))
	if want := `StartAfter="x" MaxKeys=1000 truncated=false keys=x~*(1),zzz prefixes=`; next.summary() != want {
		t.Errorf("start-after beyond the token:\n got %s\nwant %s", next.summary(), want)
	}
	next = rc.list("lists", query("list-type", "2", "continuation-token", "dir/2", "start-after", "a"))
	if want := `StartAfter="a" MaxKeys=1000 truncated=false keys=plain,x~*(1),zzz prefixes=`; next.summary() != want {
		t.Errorf("token beyond start-after:\n got %s\nwant %s", next.summary(), want)
	}

	// Owners: the signing key's, on every v1 entry and with fetch-owner.
	for _, q := range []string{"", query("list-type", "2", "fetch-owner", "true")} {
		for _, e := range rc.list("lists", q).Contents {
			if e.Owner == nil || e.Owner.ID != rc.ak {
				t.Fatalf("%q: owner of %q is %+v, want %q", q, e.Key, e.Owner, rc.ak)
			}
		}
	}
	if e := rc.list("lists", query("list-type", "2")).Contents[0]; e.Owner != nil {
		t.Errorf("v2 without fetch-owner sent an owner")
	}

	bad := []struct{ name, query, message string }{
		{"negative max-keys", query("max-keys", "-1"), "Argument -1 must be an integer between 0 and 2147483647"},
		{"non-numeric max-keys", query("list-type", "2", "max-keys", "ten"), "Provided ten not an integer or within integer range"},
		{"max-keys past 32 bits", query("max-keys", "99999999999"), "Provided 99999999999 not an integer or within integer range"},
		{"unknown encoding-type", query("encoding-type", "base64"), "Invalid Encoding Method specified in Request."},
		{"v2 unknown encoding-type", query("list-type", "2", "encoding-type", "URL"), "Invalid Encoding Method specified in Request."},
		{"empty continuation token", "list-type=2&continuation-token=", "The continuation token provided is incorrect."},
		{"overlong continuation token", query("list-type", "2", "continuation-token", strings.Repeat("k", 2049)),
			"The continuation token provided is incorrect."},
		{"start-after on v1", query("start-after", "a"), "startAfter only supported in REST.GET.BUCKET with list-type=2"},
	}
	before := snapshot(t, c)
	for _, b := range bad {
		rc.expectMessage(b.name, rawReq{method: "GET", path: "/lists?" + b.query}, 400, "InvalidArgument", b.message)
	}
	status, body, _ := rc.do(rawReq{method: "GET", path: "/lists?" + query("max-keys", "-1")})
	if status != 400 || !strings.Contains(string(body), "<ArgumentName>max-keys</ArgumentName><ArgumentValue>-1</ArgumentValue>") {
		t.Errorf("negative max-keys without ArgumentName and ArgumentValue: %d %s", status, body)
	}
	if after := snapshot(t, c); after != before {
		t.Fatalf("refused listings changed the store:\n%s\n%s", before, after)
	}
}

// expectMessage is expectError that also checks the error's message.
func (rc *rawClient) expectMessage(name string, r rawReq, status int, code, message string) {
	rc.t.Helper()
	got, body, _ := rc.do(r)
	var e s3Error
	if err := xml.Unmarshal(body, &e); err != nil {
		rc.t.Errorf("%s: status %d, body not S3 XML: %q", name, got, body)
		return
	}
	if got != status || e.Code != code || e.Message != message {
		rc.t.Errorf("%s: got %d %s %q, want %d %s %q", name, got, e.Code, e.Message, status, code, message)
	}
}

// TestListObjectsMinioKeys lists awkward keys with minio-go, which asks
// for encoding-type=url and form-decodes what comes back, page by page
// through v1 NextMarker and v2 tokens: every key must come back intact.
func TestListObjectsMinioKeys(t *testing.T) {
	c := startServer(t)
	ctx := t.Context()
	mustMakeBucket(t, c, "mkeys")
	// "ctl\x01a" ends a page at 2 and at 3 keys a page: XML cannot carry
	// it, so its token travels escaped, and "ctlz" (which sorts before
	// the U+FFFD it would otherwise become) must still be listed.
	keys := []string{"a b", "a+b", "a%2Bb", "c/ d/e", "c/+", "ctl\x01a", "ctlz", "tab\tkey", "日本/語", "~*()'!", "z&<>\""}
	for _, k := range keys {
		mustPut(t, c, "mkeys", k, []byte("x"), minio.PutObjectOptions{})
	}
	want := slices.Sorted(slices.Values(keys))
	for _, opts := range []minio.ListObjectsOptions{
		{Recursive: true, UseV1: true, MaxKeys: 2},
		{Recursive: true, MaxKeys: 2},
		{Recursive: true, MaxKeys: 3, StartAfter: "a b"},
	} {
		var got []string
		for o := range c.mc.ListObjects(ctx, "mkeys", opts) {
			if o.Err != nil {
				t.Fatalf("%+v: %v", opts, o.Err)
			}
			got = append(got, o.Key)
		}
		exp := want
		if opts.StartAfter != "" {
			exp = want[slices.Index(want, opts.StartAfter)+1:]
		}
		if !slices.Equal(got, exp) {
			t.Errorf("%+v:\n got %q\nwant %q", opts, got, exp)
		}
	}
	var top []string
	for o := range c.mc.ListObjects(ctx, "mkeys", minio.ListObjectsOptions{Prefix: "c/", UseV1: true}) {
		top = append(top, o.Key)
	}
	slices.Sort(top) // minio-go sends a page's keys before its prefixes
	if !slices.Equal(top, []string{"c/ d/", "c/+"}) {
		t.Errorf("delimited under c/: %q", top)
	}
}
