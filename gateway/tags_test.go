package gateway

import (
	"encoding/xml"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// tagError is an S3 error body with the tag elements InvalidTag carries.
type tagError struct {
	Code, Message, TagKey, TagValue string
}

// S3's answers to x-amz-tagging, as AWS gives them (and versitygw's suite
// checks them): what the header means, and which error a bad one gets.
func TestParseTagHeader(t *testing.T) {
	cases := []struct {
		in   string
		want map[string]string // nil: an error with code
		code string
	}{
		{"", map[string]string{}, ""},
		{"&", map[string]string{}, ""},
		{"&&&", map[string]string{}, ""},
		{"key", map[string]string{"key": ""}, ""},
		{"key&", map[string]string{"key": ""}, ""},
		{"key=&", map[string]string{"key": ""}, ""},
		{"key=val&", map[string]string{"key": "val"}, ""},
		{"key1&key2", map[string]string{"key1": "", "key2": ""}, ""},
		{"key@=val@", map[string]string{"key@": "val@"}, ""},
		{"k=v=w", map[string]string{"k": "v=w"}, ""},
		{"key-key_key.key/key=value-value_value.value/value", map[string]string{"key-key_key.key/key": "value-value_value.value/value"}, ""},
		{"key%2E=value%2F", map[string]string{"key.": "value/"}, ""},
		{"key%2D=value%2B", map[string]string{"key-": "value+"}, ""},
		{"key++key=value++value", map[string]string{"key  key": "value  value"}, ""},
		{"key%20key=value%20value", map[string]string{"key key": "value value"}, ""},
		{"%C3%A9t%C3%A9=%E6%97%A5:1", map[string]string{"été": "日:1"}, ""},
		{strings.Repeat("k", 128) + "=" + strings.Repeat("v", 256), map[string]string{strings.Repeat("k", 128): strings.Repeat("v", 256)}, ""},

		{"=", nil, "InvalidArgument"},
		{"=v", nil, "InvalidArgument"},
		{"key%", nil, "InvalidArgument"},
		{"k=%zz", nil, "InvalidArgument"},
		{"key=val&key=val", nil, "InvalidArgument"},
		{"key?=val", nil, "InvalidTag"},
		{"key(=val", nil, "InvalidTag"},
		{"key*=val", nil, "InvalidTag"},
		{"key$=val", nil, "InvalidTag"},
		{"key#=val", nil, "InvalidTag"},
		{"key!=val", nil, "InvalidTag"},
		{"key%00=val", nil, "InvalidTag"},
		{"key%FF=val", nil, "InvalidTag"},
		{"key=val?", nil, "InvalidTag"},
		{"key=val(", nil, "InvalidTag"},
		{"key=val*", nil, "InvalidTag"},
		{"key=val,x", nil, "InvalidTag"},
		{"key=val;x", nil, "InvalidTag"},
		{strings.Repeat("k", 129) + "=v", nil, "InvalidTag"},
		{"k=" + strings.Repeat("v", 257), nil, "InvalidTag"},
		{"1=1&2=2&3=3&4=4&5=5&6=6&7=7&8=8&9=9&10=10&11=11", nil, "BadRequest"},
	}
	for _, c := range cases {
		tags, err := parseTagHeader(c.in)
		if c.want == nil {
			a, _, _ := classify(err)
			if err == nil || a.Code != c.code || a.Status != http.StatusBadRequest {
				t.Errorf("%q: %v, want %s", c.in, err, c.code)
			}
			continue
		}
		got := map[string]string{}
		for _, tg := range tags {
			got[tg.Key] = tg.Value
		}
		if err != nil || fmt.Sprint(got) != fmt.Sprint(c.want) {
			t.Errorf("%q: %v, %v; want %v", c.in, got, err, c.want)
		}
	}
}

func TestPutObjectTaggingErrors(t *testing.T) {
	be, h := newTestGateway(t, allowAll{})
	setup(t, h, "bkt", map[string]string{"k": "data"})
	body := func(kv ...string) string {
		var b strings.Builder
		b.WriteString("<Tagging><TagSet>")
		for i := 0; i+1 < len(kv); i += 2 {
			fmt.Fprintf(&b, "<Tag><Key>%s</Key><Value>%s</Value></Tag>", kv[i], kv[i+1])
		}
		b.WriteString("</TagSet></Tagging>")
		return b.String()
	}
	var eleven []string
	for i := range 11 {
		eleven = append(eleven, fmt.Sprintf("key-%d", i), "v")
	}
	cases := []struct {
		name, body            string
		code, msg, key, value string
	}{
		{"key too long", body(strings.Repeat("k", 129), "val"), "InvalidTag", msgTagKey, strings.Repeat("k", 129), ""},
		{"empty key", body("", "val"), "InvalidTag", msgTagKey, "", ""},
		{"value too long", body("key", strings.Repeat("v", 257)), "InvalidTag", msgTagValue, "key", strings.Repeat("v", 257)},
		{"duplicate", body("key-1", "value-1", "same-key", "value-3", "same-key", "value-4"), "InvalidTag", msgTagDuplicate, "same-key", ""},
		{"too many", body(eleven...), "BadRequest", msgTagCount, "", ""},
		{"bad key", body("user!name", "value"), "InvalidTag", msgTagKey, "user!name", ""},
		{"bad key after a good tag", body("validkey", "validvalue", "data%20", "value"), "InvalidTag", msgTagKey, "data%20", ""},
		{"bad value", body("hello", "world", "key", "name?test"), "InvalidTag", msgTagValue, "key", "name?test"},
		{"backquote", body("key", "`path"), "InvalidTag", msgTagValue, "key", "`path"},
		{"parentheses", body("valid", "(parentheses)"), "InvalidTag", msgTagValue, "valid", "(parentheses)"},
		{"not xml", "<Tagging", "MalformedXML", "", "", ""},
	}
	before := be.mutations()
	for _, c := range cases {
		rec := do(h, req{method: http.MethodPut, target: "/bkt/k?tagging", body: c.body})
		var e tagError
		if rec.Code != http.StatusBadRequest || xml.Unmarshal(rec.Body.Bytes(), &e) != nil || e.Code != c.code ||
			(c.msg != "" && e.Message != c.msg) || e.TagKey != c.key || e.TagValue != c.value {
			t.Errorf("%s: %d %s", c.name, rec.Code, rec.Body.String())
		}
	}
	if be.mutations() != before {
		t.Error("refused tag sets changed the object")
	}
	mustDo(t, h, req{method: http.MethodPut, target: "/bkt/k?tagging", body: body("a b", "c:d/e=f+g-h_i.j@k", "ключ", "значение")})
	var tg tagging
	decodeXML(t, mustDo(t, h, req{method: http.MethodGet, target: "/bkt/k?tagging"}), &tg)
	if len(tg.TagSet.Tags) != 2 || tg.TagSet.Tags[0] != (tag{"a b", "c:d/e=f+g-h_i.j@k"}) || tg.TagSet.Tags[1] != (tag{"ключ", "значение"}) {
		t.Errorf("tags %+v", tg.TagSet.Tags)
	}
}

// Tags stored before the character rules existed still read back.
func TestStoredTagsReadLeniently(t *testing.T) {
	tags, err := parseTagQuery("a%2Ab=%28x%29&k=v")
	if err != nil || len(tags) != 2 || tags[0] != (tag{"a*b", "(x)"}) {
		t.Fatalf("%+v %v", tags, err)
	}
}

func FuzzParseTagHeader(f *testing.F) {
	for _, s := range []string{"", "a=1&b=2", "a=1&a=2", "=", "%zz=1", "k=v%20w", "key++key=v", "&&k", "%C3%A9=1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		tags, err := parseTagHeader(s)
		if err != nil {
			a, _, _ := classify(err)
			if a.Status != http.StatusBadRequest {
				t.Fatalf("%q: %v is not a 400", s, err)
			}
			return
		}
		if validateTags(tags) != nil {
			t.Fatalf("%q: accepted tags %v that a Tagging body would refuse", s, tags)
		}
		// What is accepted survives the stored encoding, and the header
		// form, unchanged.
		for _, parse := range []func(string) ([]tag, error){parseTagQuery, parseTagHeader} {
			again, err := parse(encodeTags(tags))
			if err != nil || len(again) != len(tags) {
				t.Fatalf("%q: re-parse gave %v, %v", s, again, err)
			}
			for i := range tags {
				if again[i] != tags[i] {
					t.Fatalf("%q: tag %d %v became %v", s, i, tags[i], again[i])
				}
			}
		}
	})
}
