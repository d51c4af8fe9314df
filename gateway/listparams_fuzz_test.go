package gateway

import (
	"bytes"
	"encoding/xml"
	"net/url"
	"testing"
	"unicode/utf8"

	"tessera/meta"
	"tessera/versioning"
)

var listQuerySeeds = []string{
	"", "max-keys=0", "max-keys=-1", "max-keys=99999999999", "encoding-type=url", "encoding-type=x",
	"list-type=2&continuation-token=", "continuation-token=%21%21", "start-after=a&marker=b",
	"max-buckets=3&prefix=a&bucket-region=us-east-1", "max-buckets=0", "continuation-token=b",
	"list-type=2&continuation-token=" + encodeToken("k\x01") + "&start-after=z", "max-uploads=2&key-marker=k&upload-id-marker=u",
	"max-parts=0&part-number-marker=-1", "part-number-marker=2736457823532448723", "max-keys=%00",
	"versions&key-marker=k&version-id-marker=null", "version-id-marker=null", "key-marker=a&version-id-marker=v1",
}

// listArgCodes are the handler errors a list parameter may raise: all of
// them S3's InvalidArgument.
var listArgCodes = []errCode{errInvalidArgument, errInvalidEncodingType, errInvalidContinuationToken}

// FuzzListQuery runs every list-parameter parser on one query string:
// each either refuses it with InvalidArgument or yields values inside S3's
// bounds.
func FuzzListQuery(f *testing.F) {
	for _, s := range listQuerySeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		q, err := url.ParseQuery(raw)
		if err != nil {
			return
		}
		for _, v2 := range []bool{false, true} {
			p, err := parseObjectList("bkt", q, v2)
			if err != nil {
				requireCode(t, err, listArgCodes...)
				continue
			}
			if p.maxKeys < 0 || p.maxKeys > 1000 {
				t.Fatalf("%q: max-keys %d", raw, p.maxKeys)
			}
			if !v2 && p.after != p.marker {
				t.Fatalf("%q: v1 starts at %q, not the marker %q", raw, p.after, p.marker)
			}
			if v2 && !p.hasToken && p.after != p.startAfter {
				t.Fatalf("%q: v2 starts at %q without a token", raw, p.after)
			}
			if v2 && p.after < p.startAfter {
				t.Fatalf("%q: v2 starts at %q, before start-after %q", raw, p.after, p.startAfter)
			}
		}
		if b, err := parseBucketList(q); err != nil {
			requireCode(t, err, listArgCodes...)
		} else if b.max < 0 || b.max > maxBuckets {
			t.Fatalf("%q: max-buckets %d", raw, b.max)
		}
		if u, err := parseUploadList(q); err != nil {
			requireCode(t, err, listArgCodes...)
		} else if u.opts.MaxUploads < 0 || u.opts.MaxUploads > 1000 {
			t.Fatalf("%q: max-uploads %d", raw, u.opts.MaxUploads)
		}
		if v, err := parseVersionList("bkt", q); err != nil {
			requireCode(t, err, append(listArgCodes, errInvalidVersionID)...)
		} else if v.maxKeys < 0 || v.maxKeys > 1000 || v.after != v.keyMarker ||
			(v.versionIDMarker != "" && (v.keyMarker == "" || (v.versionIDMarker != versioning.NullVersionID && !meta.ValidVersionID(v.versionIDMarker)))) {
			t.Fatalf("%q: version listing %+v", raw, v)
		}
		if marker, maxParts, err := parsePartList(q); err != nil {
			requireCode(t, err, listArgCodes...)
		} else if marker < 0 || maxParts < 0 || maxParts > 1000 {
			t.Fatalf("%q: part-number-marker %d max-parts %d", raw, marker, maxParts)
		}
	})
}

// FuzzContinuationToken feeds arbitrary tokens to decodeToken, and checks
// that every position survives a round trip through a token, and through
// the XML document that carries it.
func FuzzContinuationToken(f *testing.F) {
	f.Add(encodeToken("key"), "key")
	f.Add(encodeToken("bad\x01key"), "~~x")
	f.Add("", "")
	f.Add("~~!!", "a b/c")
	f.Add("~~", "\xff")
	f.Fuzz(func(t *testing.T, tok, position string) {
		if _, err := decodeToken(tok); err != nil {
			requireCode(t, err, errInvalidContinuationToken)
		}
		if position == "" || len(position) > 1024 {
			return
		}
		enc := encodeToken(position)
		got, err := decodeToken(enc)
		if err != nil || got != position {
			t.Fatalf("position %q came back as %q, %v", position, got, err)
		}
		var b bytes.Buffer
		if err := xml.EscapeText(&b, []byte(enc)); err != nil {
			t.Fatal(err)
		}
		var back struct {
			V string `xml:",chardata"`
		}
		if err := xml.Unmarshal([]byte("<a>"+b.String()+"</a>"), &back); err != nil || back.V != enc {
			t.Fatalf("token %q for %q reads back from XML as %q, %v", enc, position, back.V, err)
		}
	})
}

// FuzzS3URLEncode checks that encoding-type=url output is plain printable
// ASCII that a form decode turns back into the key.
func FuzzS3URLEncode(f *testing.F) {
	for _, s := range []string{"a b/c+d", "日本", "\x01<>&", "%41", "~*"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !utf8.ValidString(s) {
			return
		}
		enc := s3URLEncode(s)
		for i := 0; i < len(enc); i++ {
			if c := enc[i]; c <= ' ' || c >= 0x7f {
				t.Fatalf("%q encodes to %q with byte %#x", s, enc, c)
			}
		}
		if dec, err := url.QueryUnescape(enc); err != nil || dec != s {
			t.Fatalf("%q encodes to %q, which decodes to %q, %v", s, enc, dec, err)
		}
	})
}
