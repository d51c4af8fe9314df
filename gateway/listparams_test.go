package gateway

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"tessera/object"
)

// argMessage returns the message of an InvalidArgument handler error, or
// fails the test when err is anything else.
func argMessage(t *testing.T, name string, err error) string {
	t.Helper()
	a, msg, _ := classify(err)
	if a.Code != "InvalidArgument" || a.Status != 400 {
		t.Fatalf("%s: %v is %s %d, want InvalidArgument 400", name, err, a.Code, a.Status)
	}
	return msg
}

// argElements renders an error's extra body elements as "Name=value ...".
func argElements(err error) string {
	_, _, extra := classify(err)
	var parts []string
	for _, e := range extra {
		parts = append(parts, e.Name+"="+e.Value)
	}
	return strings.Join(parts, " ")
}

func mustQuery(t *testing.T, raw string) url.Values {
	t.Helper()
	q, err := url.ParseQuery(raw)
	if err != nil {
		t.Fatalf("query %q: %v", raw, err)
	}
	return q
}

func TestParseObjectList(t *testing.T) {
	const notInt, negative = "Provided %s not an integer or within integer range", "Argument %s must be an integer between 0 and 2147483647"
	cases := []struct {
		name  string
		query string
		v2    bool
		want  listRequest // bucket and token fields are not compared
		err   string      // InvalidArgument message, "" for success
	}{
		{"defaults", "", true, listRequest{maxKeys: 1000}, ""},
		{"max-keys 0", "max-keys=0", true, listRequest{maxKeys: 0}, ""},
		{"max-keys capped", "max-keys=5000", false, listRequest{maxKeys: 1000}, ""},
		{"max-keys at int32 max", "max-keys=2147483647", true, listRequest{maxKeys: 1000}, ""},
		{"max-keys negative", "max-keys=-5", true, listRequest{}, fmt.Sprintf(negative, "-5")},
		{"max-keys words", "max-keys=ten", false, listRequest{}, fmt.Sprintf(notInt, "ten")},
		{"max-keys empty", "max-keys=", true, listRequest{}, fmt.Sprintf(notInt, "")},
		{"max-keys past int32", "max-keys=2147483648", true, listRequest{}, fmt.Sprintf(notInt, "2147483648")},
		{"encoding url", "encoding-type=url", true, listRequest{maxKeys: 1000, encodeURL: true}, ""},
		{"encoding other", "encoding-type=base64", true, listRequest{}, "Invalid Encoding Method specified in Request."},
		{"encoding case", "encoding-type=URL", false, listRequest{}, "Invalid Encoding Method specified in Request."},
		{"v1 marker", "marker=m&prefix=p&delimiter=/", false,
			listRequest{maxKeys: 1000, marker: "m", hasMarker: true, after: "m", prefix: "p", hasPrefix: true, delimiter: "/"}, ""},
		{"v1 empty marker and prefix are sent", "marker=&prefix=", false,
			listRequest{maxKeys: 1000, hasMarker: true, hasPrefix: true}, ""},
		{"v1 start-after", "start-after=x", false, listRequest{}, "startAfter only supported in REST.GET.BUCKET with list-type=2"},
		{"v2 start-after", "start-after=x&fetch-owner=true", true,
			listRequest{maxKeys: 1000, startAfter: "x", after: "x", fetchOwner: true}, ""},
		{"v2 token is the position", "continuation-token=k5", true,
			listRequest{maxKeys: 1000, after: "k5", hasToken: true}, ""},
		{"v2 start-after beyond the token wins", "start-after=zzz&continuation-token=k5", true,
			listRequest{maxKeys: 1000, startAfter: "zzz", after: "zzz", hasToken: true}, ""},
		{"v2 token beyond start-after wins", "start-after=a&continuation-token=k5", true,
			listRequest{maxKeys: 1000, startAfter: "a", after: "k5", hasToken: true}, ""},
		{"v2 escaped token", "continuation-token=" + url.QueryEscape(encodeToken("k\x01")), true,
			listRequest{maxKeys: 1000, after: "k\x01", hasToken: true}, ""},
		{"v2 made-up token is a start point", "continuation-token=%21%21", true,
			listRequest{maxKeys: 1000, after: "!!", hasToken: true}, ""},
		{"v2 empty token", "continuation-token=", true, listRequest{}, "The continuation token provided is incorrect."},
		{"v2 overlong token", "continuation-token=" + strings.Repeat("k", maxTokenLen+1), true,
			listRequest{}, "The continuation token provided is incorrect."},
		{"v1 ignores continuation-token", "continuation-token=", false, listRequest{maxKeys: 1000}, ""},
	}
	for _, c := range cases {
		got, err := parseObjectList("bkt", mustQuery(t, c.query), c.v2)
		if c.err != "" {
			if msg := argMessage(t, c.name, err); msg != c.err {
				t.Errorf("%s: message %q, want %q", c.name, msg, c.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		got.bucket, got.token = "", ""
		if got != c.want {
			t.Errorf("%s: %+v, want %+v", c.name, got, c.want)
		}
	}
}

// TestLimitErrorElements: a refused count or marker names itself and the
// value sent in ArgumentName and ArgumentValue.
func TestLimitErrorElements(t *testing.T) {
	cases := []struct {
		query string
		parse func(url.Values) error
		want  string
	}{
		{"max-keys=-5", func(q url.Values) error { _, err := parseObjectList("b", q, true); return err }, "ArgumentName=max-keys ArgumentValue=-5"},
		{"max-uploads=x", func(q url.Values) error { _, err := parseUploadList(q); return err }, "ArgumentName=max-uploads ArgumentValue=x"},
		{"max-parts=-3", func(q url.Values) error { _, _, err := parsePartList(q); return err }, "ArgumentName=max-parts ArgumentValue=-3"},
		{"part-number-marker=-14", func(q url.Values) error { _, _, err := parsePartList(q); return err },
			"ArgumentName=part-number-marker ArgumentValue=-14"},
	}
	for _, c := range cases {
		if got := argElements(c.parse(mustQuery(t, c.query))); got != c.want {
			t.Errorf("%s: elements %q, want %q", c.query, got, c.want)
		}
	}
}

func TestParseBucketList(t *testing.T) {
	tok := encodeToken("b2")
	cases := []struct {
		name, query string
		want        bucketListRequest
		err         string
	}{
		{"none: whole and unpaginated", "", bucketListRequest{}, ""},
		{"max-buckets", "max-buckets=3", bucketListRequest{max: 3}, ""},
		{"max-buckets largest", "max-buckets=10000", bucketListRequest{max: 10000}, ""},
		{"prefix pages at 10000", "prefix=a", bucketListRequest{prefix: "a", hasPrefix: true, max: 10000}, ""},
		{"empty prefix still echoed", "prefix=", bucketListRequest{hasPrefix: true, max: 10000}, ""},
		{"region", "bucket-region=us-east-1", bucketListRequest{region: "us-east-1", max: 10000}, ""},
		{"token", "continuation-token=" + tok + "&max-buckets=2", bucketListRequest{after: "b2", max: 2}, ""},
		{"empty token starts over", "continuation-token=", bucketListRequest{max: 10000}, ""},
		{"max-buckets 0", "max-buckets=0", bucketListRequest{}, "Argument max-buckets must be an integer between 1 and 10000."},
		{"max-buckets negative", "max-buckets=-3", bucketListRequest{}, "Argument max-buckets must be an integer between 1 and 10000."},
		{"max-buckets too many", "max-buckets=2000000", bucketListRequest{}, "Argument max-buckets must be an integer between 1 and 10000."},
		{"max-buckets words", "max-buckets=x", bucketListRequest{}, "Argument max-buckets must be an integer between 1 and 10000."},
		{"made-up token is a start point", "continuation-token=zzzz", bucketListRequest{after: "zzzz", max: 10000}, ""},
		{"overlong token", "continuation-token=" + strings.Repeat("b", maxTokenLen+1), bucketListRequest{},
			"The continuation token provided is incorrect."},
	}
	for _, c := range cases {
		got, err := parseBucketList(mustQuery(t, c.query))
		if c.err != "" {
			if msg := argMessage(t, c.name, err); msg != c.err {
				t.Errorf("%s: message %q, want %q", c.name, msg, c.err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("%s: %+v (%v), want %+v", c.name, got, err, c.want)
		}
	}
}

func TestParseUploadList(t *testing.T) {
	cases := []struct {
		name, query string
		max         int
		encode      bool
		err         string
	}{
		{"defaults", "", 1000, false, ""},
		{"zero", "max-uploads=0", 0, false, ""},
		{"capped", "max-uploads=1343235", 1000, false, ""},
		{"negative", "max-uploads=-3", 0, false, "Argument -3 must be an integer between 0 and 2147483647"},
		{"words", "max-uploads=many", 0, false, "Provided many not an integer or within integer range"},
		{"url encoding", "encoding-type=url", 1000, true, ""},
		{"bad encoding", "encoding-type=abc", 0, false, "Invalid Encoding Method specified in Request."},
	}
	for _, c := range cases {
		got, err := parseUploadList(mustQuery(t, c.query))
		if c.err != "" {
			if msg := argMessage(t, c.name, err); msg != c.err {
				t.Errorf("%s: message %q, want %q", c.name, msg, c.err)
			}
			continue
		}
		if err != nil || got.opts.MaxUploads != c.max || got.encodeURL != c.encode {
			t.Errorf("%s: %+v (%v)", c.name, got, err)
		}
	}
	got, err := parseUploadList(mustQuery(t, "key-marker=k&upload-id-marker=u&prefix=p&delimiter=/"))
	if err != nil || got.opts.KeyMarker != "k" || got.opts.UploadIDMarker != "u" || got.opts.Prefix != "p" || got.opts.Delimiter != "/" {
		t.Errorf("markers: %+v (%v)", got, err)
	}
}

func TestParsePartList(t *testing.T) {
	cases := []struct {
		name, query string
		marker, max int
		err         string
	}{
		{"defaults", "", 0, 1000, ""},
		{"both", "part-number-marker=3&max-parts=2", 3, 2, ""},
		{"max-parts 0", "max-parts=0", 0, 0, ""},
		{"max-parts capped", "max-parts=20000", 0, 1000, ""},
		{"max-parts negative", "max-parts=-3", 0, 0, "Argument -3 must be an integer between 0 and 2147483647"},
		{"max-parts words", "max-parts=x", 0, 0, "Provided x not an integer or within integer range"},
		{"marker words", "part-number-marker=invalid", 0, 0, "Provided invalid not an integer or within integer range"},
		{"marker past int32", "part-number-marker=2736457823532448723", 0, 0,
			"Provided 2736457823532448723 not an integer or within integer range"},
		{"marker negative", "part-number-marker=-14", 0, 0, "Argument -14 must be an integer between 0 and 2147483647"},
	}
	for _, c := range cases {
		marker, max, err := parsePartList(mustQuery(t, c.query))
		if c.err != "" {
			if msg := argMessage(t, c.name, err); msg != c.err {
				t.Errorf("%s: message %q, want %q", c.name, msg, c.err)
			}
			continue
		}
		if err != nil || marker != c.marker || max != c.max {
			t.Errorf("%s: marker %d max %d (%v), want %d %d", c.name, marker, max, err, c.marker, c.max)
		}
	}
}

func TestContinuationToken(t *testing.T) {
	cases := []struct {
		position string
		plain    bool // the token is the position itself
	}{
		{"a", true}, {"dir/", true}, {"日本/x y+z", true}, {"amp&<>\"'", true}, {"tab\tcr\rlf\n", true},
		{strings.Repeat("k", 1024), true},
		{"bad\x01key", false}, {"\x00", false}, {"\xff", false}, {"~~starts like an escape", false},
		{strings.Repeat("\x01", 1024), false},
	}
	for _, c := range cases {
		tok := encodeToken(c.position)
		if (tok == c.position) != c.plain {
			t.Errorf("token for %.40q is %.40q", c.position, tok)
		}
		if !xmlSafe(tok) || len(tok) > maxTokenLen {
			t.Errorf("token %.40q for %.40q cannot travel in XML or be read back", tok, c.position)
		}
		if got, err := decodeToken(tok); err != nil || got != c.position {
			t.Errorf("round trip of %.40q: %.40q, %v", c.position, got, err)
		}
	}
	for _, bad := range []string{"", strings.Repeat("A", maxTokenLen+1)} {
		if _, err := decodeToken(bad); err == nil {
			t.Errorf("token %.40q accepted", bad)
		}
	}
	// An escape whose base64 does not decode was not issued here: a start
	// point like any other string.
	if got, err := decodeToken("~~!!"); err != nil || got != "~~!!" {
		t.Errorf("made-up escaped token: %.40q, %v", got, err)
	}
}

// TestS3URLEncode pins encoding-type=url to S3's form encoding: space as
// "+", "/" kept, "~" kept, everything outside A-Z a-z 0-9 - _ . as %XX.
func TestS3URLEncode(t *testing.T) {
	cases := []struct{ in, want string }{
		{"plain", "plain"},
		{"a b/c", "a+b/c"},
		{"a+ b.txt", "a%2B+b.txt"},
		{"test_file(3).png", "test_file%283%29.png"},
		{"~-_.*", "~-_.%2A"},
		{"xml<>&\"key", "xml%3C%3E%26%22key"},
		{"bad\x01key", "bad%01key"},
		{"bad\x7fkey", "bad%7Fkey"},
		{"bad\u0080key", "bad%C2%80key"},
		{"日本", "%E6%97%A5%E6%9C%AC"},
		{"pct%41", "pct%2541"},
		{"echo\x01<>&\"+", "echo%01%3C%3E%26%22%2B"},
	}
	for _, c := range cases {
		if got := s3URLEncode(c.in); got != c.want {
			t.Errorf("s3URLEncode(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestPageBuckets(t *testing.T) {
	var all []object.BucketInfo
	for _, n := range []string{"a1", "a2", "b1", "b2", "b3"} {
		all = append(all, object.BucketInfo{Name: n})
	}
	cases := []struct {
		name string
		p    bucketListRequest
		want string // names, then "+" when more follow
	}{
		{"all", bucketListRequest{}, "a1,a2,b1,b2,b3"},
		{"exactly a page", bucketListRequest{max: 5}, "a1,a2,b1,b2,b3"},
		{"first page", bucketListRequest{max: 2}, "a1,a2+"},
		{"after a token", bucketListRequest{max: 2, after: "a2"}, "b1,b2+"},
		{"last page", bucketListRequest{max: 2, after: "b2"}, "b3"},
		{"prefix", bucketListRequest{prefix: "b", max: 2}, "b1,b2+"},
		{"prefix after token", bucketListRequest{prefix: "b", max: 2, after: "b2"}, "b3"},
		{"no match", bucketListRequest{prefix: "c"}, ""},
		{"own region", bucketListRequest{region: "us-east-1"}, "a1,a2,b1,b2,b3"},
		{"other region", bucketListRequest{region: "eu-west-1"}, ""},
	}
	for _, c := range cases {
		page, more := pageBuckets(all, c.p, "us-east-1")
		var names []string
		for _, b := range page {
			names = append(names, b.Name)
		}
		got := strings.Join(names, ",")
		if more {
			got += "+"
		}
		if got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

// TestListBucketsEmpty: an account without buckets still gets <Buckets>.
func TestListBucketsEmpty(t *testing.T) {
	_, h := newTestGateway(t, allowAll{})
	body := mustDo(t, h, req{method: http.MethodGet, target: "/"}).Body.String()
	if !strings.Contains(body, "<Buckets></Buckets>") || strings.Contains(body, "<Prefix>") {
		t.Fatalf("empty ListBuckets: %s", body)
	}
	body = mustDo(t, h, req{method: http.MethodGet, target: "/?prefix="}).Body.String()
	if !strings.Contains(body, "<Prefix></Prefix>") {
		t.Fatalf("ListBuckets with an empty prefix does not echo it: %s", body)
	}
}
