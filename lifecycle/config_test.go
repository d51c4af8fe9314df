package lifecycle

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

func rules(body ...string) string {
	return "<LifecycleConfiguration>" + strings.Join(body, "") + "</LifecycleConfiguration>"
}

func TestParse(t *testing.T) {
	many := make([]string, MaxRules+1)
	for i := range many {
		many[i] = fmt.Sprintf("<Rule><ID>r%d</ID><Status>Enabled</Status><Filter/><Expiration><Days>1</Days></Expiration></Rule>", i)
	}
	cases := []struct {
		name, xml, code string // code "" accepted
	}{
		{"days and prefix filter", rules(`<Rule><ID>logs</ID><Status>Enabled</Status><Filter><Prefix>logs/</Prefix></Filter><Expiration><Days>30</Days></Expiration></Rule>`), ""},
		{"legacy prefix", rules(`<Rule><Status>Enabled</Status><Prefix>tmp/</Prefix><Expiration><Days>1</Days></Expiration></Rule>`), ""},
		{"no filter", rules(`<Rule><Status>Disabled</Status><Expiration><Date>2027-01-01T00:00:00Z</Date></Expiration></Rule>`), ""},
		{"and with tags and sizes", rules(`<Rule><Status>Enabled</Status><Filter><And><Prefix>a/</Prefix><Tag><Key>k</Key><Value>v</Value></Tag><Tag><Key>k2</Key><Value></Value></Tag><ObjectSizeGreaterThan>10</ObjectSizeGreaterThan><ObjectSizeLessThan>100</ObjectSizeLessThan></And></Filter><Expiration><Days>2</Days></Expiration></Rule>`), ""},
		{"abort uploads", rules(`<Rule><Status>Enabled</Status><Filter><Prefix></Prefix></Filter><AbortIncompleteMultipartUpload><DaysAfterInitiation>7</DaysAfterInitiation></AbortIncompleteMultipartUpload></Rule>`), ""},
		{"noncurrent", rules(`<Rule><Status>Enabled</Status><Filter/><NoncurrentVersionExpiration><NoncurrentDays>3</NoncurrentDays><NewerNoncurrentVersions>2</NewerNoncurrentVersions></NoncurrentVersionExpiration></Rule>`), ""},
		{"delete marker", rules(`<Rule><Status>Enabled</Status><Filter/><Expiration><ExpiredObjectDeleteMarker>true</ExpiredObjectDeleteMarker></Expiration></Rule>`), ""},
		{"not xml", "<LifecycleConfiguration><Rule>", "MalformedXML"},
		{"trailing junk", rules(`<Rule><Status>Enabled</Status><Expiration><Days>1</Days></Expiration></Rule>`) + "<x/>", "MalformedXML"},
		{"no rules", rules(), "MalformedXML"},
		{"too many rules", rules(many...), "InvalidRequest"},
		{"bad status", rules(`<Rule><Status>On</Status><Expiration><Days>1</Days></Expiration></Rule>`), "MalformedXML"},
		{"no action", rules(`<Rule><Status>Enabled</Status><Filter/></Rule>`), "InvalidRequest"},
		{"duplicate id", rules(`<Rule><ID>a</ID><Status>Enabled</Status><Expiration><Days>1</Days></Expiration></Rule><Rule><ID>a</ID><Status>Enabled</Status><Expiration><Days>2</Days></Expiration></Rule>`), "InvalidArgument"},
		{"long id", rules(`<Rule><ID>` + strings.Repeat("i", 256) + `</ID><Status>Enabled</Status><Expiration><Days>1</Days></Expiration></Rule>`), "InvalidArgument"},
		{"zero days", rules(`<Rule><Status>Enabled</Status><Expiration><Days>0</Days></Expiration></Rule>`), "InvalidArgument"},
		{"days and date", rules(`<Rule><Status>Enabled</Status><Expiration><Days>1</Days><Date>2027-01-01T00:00:00Z</Date></Expiration></Rule>`), "MalformedXML"},
		{"date not midnight", rules(`<Rule><Status>Enabled</Status><Expiration><Date>2027-01-01T10:00:00Z</Date></Expiration></Rule>`), "InvalidArgument"},
		{"date not a date", rules(`<Rule><Status>Enabled</Status><Expiration><Date>tomorrow</Date></Expiration></Rule>`), "InvalidArgument"},
		{"filter and prefix", rules(`<Rule><Status>Enabled</Status><Prefix>a</Prefix><Filter><Prefix>b</Prefix></Filter><Expiration><Days>1</Days></Expiration></Rule>`), "MalformedXML"},
		{"two filter conditions", rules(`<Rule><Status>Enabled</Status><Filter><Prefix>b</Prefix><Tag><Key>k</Key><Value>v</Value></Tag></Filter><Expiration><Days>1</Days></Expiration></Rule>`), "MalformedXML"},
		{"abort with tags", rules(`<Rule><Status>Enabled</Status><Filter><Tag><Key>k</Key><Value>v</Value></Tag></Filter><AbortIncompleteMultipartUpload><DaysAfterInitiation>1</DaysAfterInitiation></AbortIncompleteMultipartUpload></Rule>`), "InvalidRequest"},
		{"abort zero days", rules(`<Rule><Status>Enabled</Status><AbortIncompleteMultipartUpload><DaysAfterInitiation>0</DaysAfterInitiation></AbortIncompleteMultipartUpload></Rule>`), "InvalidArgument"},
		{"sizes crossed", rules(`<Rule><Status>Enabled</Status><Filter><And><ObjectSizeGreaterThan>100</ObjectSizeGreaterThan><ObjectSizeLessThan>10</ObjectSizeLessThan></And></Filter><Expiration><Days>1</Days></Expiration></Rule>`), "InvalidArgument"},
		{"duplicate tag keys", rules(`<Rule><Status>Enabled</Status><Filter><And><Tag><Key>k</Key><Value>a</Value></Tag><Tag><Key>k</Key><Value>b</Value></Tag></And></Filter><Expiration><Days>1</Days></Expiration></Rule>`), "InvalidArgument"},
		{"transition", rules(`<Rule><Status>Enabled</Status><Filter/><Transition><Days>30</Days><StorageClass>GLACIER</StorageClass></Transition></Rule>`), "NotImplemented"},
		{"noncurrent without days", rules(`<Rule><Status>Enabled</Status><NoncurrentVersionExpiration></NoncurrentVersionExpiration></Rule>`), "InvalidArgument"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg, err := Parse([]byte(c.xml))
			var e *Error
			switch {
			case c.code == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case c.code == "" && len(cfg.Rules) == 0:
				t.Fatal("accepted with no rules")
			case c.code != "" && (!errors.As(err, &e) || e.Code != c.code):
				t.Fatalf("got %v, want %s", err, c.code)
			}
		})
	}
}
