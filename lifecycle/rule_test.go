package lifecycle

import (
	"testing"
	"time"
)

func mustParse(t *testing.T, xml string) *Configuration {
	t.Helper()
	c, err := Parse([]byte(xml))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestExpires(t *testing.T) {
	day := 24 * time.Hour
	written := time.Date(2026, 12, 1, 15, 30, 0, 0, time.UTC)
	c := mustParse(t, rules(
		`<Rule><ID>days</ID><Status>Enabled</Status><Filter><Prefix>logs/</Prefix></Filter><Expiration><Days>2</Days></Expiration></Rule>`,
		`<Rule><ID>off</ID><Status>Disabled</Status><Filter><Prefix>off/</Prefix></Filter><Expiration><Days>1</Days></Expiration></Rule>`,
		`<Rule><ID>date</ID><Status>Enabled</Status><Filter><Prefix>old/</Prefix></Filter><Expiration><Date>2026-12-10T00:00:00Z</Date></Expiration></Rule>`,
		`<Rule><ID>tagged</ID><Status>Enabled</Status><Filter><And><Prefix>t/</Prefix><Tag><Key>tmp</Key><Value>yes</Value></Tag><ObjectSizeGreaterThan>10</ObjectSizeGreaterThan></And></Filter><Expiration><Days>1</Days></Expiration></Rule>`,
	))
	due := func(o Object, now time.Time) bool {
		for i := range c.Rules {
			if c.Rules[i].Expires(o, Clock{Now: now, Day: day}) {
				return true
			}
		}
		return false
	}
	// Two days after 15:30 on the 1st, rounded up to midnight: the 4th.
	midnight := time.Date(2026, 12, 4, 0, 0, 0, 0, time.UTC)
	cases := []struct {
		name string
		o    Object
		now  time.Time
		want bool
	}{
		{"before the rounded day", Object{Key: "logs/a", ModTime: written}, midnight.Add(-time.Second), false},
		{"at the rounded day", Object{Key: "logs/a", ModTime: written}, midnight, true},
		{"other prefix", Object{Key: "keep/a", ModTime: written}, midnight.Add(day * 100), false},
		{"disabled rule", Object{Key: "off/a", ModTime: written}, midnight.Add(day * 100), false},
		{"before the date", Object{Key: "old/a", ModTime: written}, time.Date(2026, 12, 9, 23, 0, 0, 0, time.UTC), false},
		{"on the date", Object{Key: "old/a", ModTime: written}, time.Date(2026, 12, 10, 0, 0, 0, 0, time.UTC), true},
		{"tagged and big enough", Object{Key: "t/a", Size: 11, ModTime: written, Tags: map[string]string{"tmp": "yes"}}, midnight, true},
		{"tag missing", Object{Key: "t/a", Size: 11, ModTime: written}, midnight, false},
		{"tag differs", Object{Key: "t/a", Size: 11, ModTime: written, Tags: map[string]string{"tmp": "no"}}, midnight, false},
		{"too small", Object{Key: "t/a", Size: 10, ModTime: written, Tags: map[string]string{"tmp": "yes"}}, midnight, false},
	}
	for _, tc := range cases {
		if got := due(tc.o, tc.now); got != tc.want {
			t.Errorf("%s: due %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestAborts(t *testing.T) {
	c := mustParse(t, rules(`<Rule><Status>Enabled</Status><Filter><Prefix>up/</Prefix></Filter><AbortIncompleteMultipartUpload><DaysAfterInitiation>1</DaysAfterInitiation></AbortIncompleteMultipartUpload></Rule>`))
	r := &c.Rules[0]
	day := time.Second // a shortened day, as tests use
	began := time.Unix(100, 500e6)
	clk := func(now time.Time) Clock { return Clock{Now: now, Day: day} }
	if r.Aborts("up/x", began, clk(time.Unix(101, 999e6))) {
		t.Error("aborted before a day and its rounding passed")
	}
	if !r.Aborts("up/x", began, clk(time.Unix(102, 0))) {
		t.Error("not aborted once due")
	}
	if r.Aborts("other/x", began, clk(time.Unix(200, 0))) {
		t.Error("aborted an upload outside the prefix")
	}
}
