package sigv4

import (
	"net/http"
	"testing"
	"time"
)

func TestParseHTTPDate(t *testing.T) {
	at := time.Date(2026, 12, 1, 11, 8, 54, 0, time.UTC)
	cases := []struct {
		in   string
		want time.Time // zero: refused
	}{
		{"Tue, 01 Dec 2026 11:08:54 GMT", at},
		{"Tue, 01 Dec 2026 11:08:54 +0000", at}, // s3cmd --signature-v2
		{"Tue, 01 Dec 2026 13:08:54 +0200", at},
		{"Tue, 01 Dec 2026 11:08:54 UTC", at},
		{"Tue, 1 Dec 2026 11:08:54 GMT", at},
		{"Tuesday, 01-Dec-26 11:08:54 GMT", at}, // RFC 850
		{"Tue Dec  1 11:08:54 2026", at},        // ANSI C
		{"20261201T110854Z", at},
		{" Tue, 01 Dec 2026 11:08:54 GMT ", at},
		{"Tue, 07 Jul 9999 21:53:04 GMT", time.Date(9999, 7, 7, 21, 53, 4, 0, time.UTC)},
		{"Tue, 07 Jul 1950 21:53:04 GMT", time.Time{}}, // before the epoch, as S3
		{"Bad Date", time.Time{}},
		{"", time.Time{}},
		{"Tue, 01 Dec 2026 11:08:54 EST", time.Time{}},
		{"2026-12-01T11:08:54Z", time.Time{}},
	}
	for _, c := range cases {
		got, err := parseHTTPDate(c.in)
		if c.want.IsZero() {
			if err == nil {
				t.Errorf("%q accepted as %v", c.in, got)
			}
			continue
		}
		if err != nil || !got.Equal(c.want) || got.Location() != time.UTC {
			t.Errorf("%q: %v, %v; want %v", c.in, got, err, c.want)
		}
	}
}

// FuzzParseHTTPDate: whatever parses is at or after 1970 and survives a
// round trip through the canonical HTTP date form.
func FuzzParseHTTPDate(f *testing.F) {
	for _, s := range []string{"Tue, 01 Dec 2026 11:08:54 +0000", "Tuesday, 01-Dec-26 11:08:54 GMT",
		"Tue Dec  1 11:08:54 2026", "20261201T110854Z", "Mon, 2 Jan 2006 15:04:05 -2359"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := parseHTTPDate(s)
		if err != nil {
			return
		}
		if got.Year() < 1970 {
			t.Fatalf("%q parsed to %v", s, got)
		}
		if got.Year() > 9999 {
			return
		}
		back, err := parseHTTPDate(got.Format(http.TimeFormat))
		if err != nil || !back.Equal(got.Truncate(time.Second)) {
			t.Fatalf("%q → %v → %v, %v", s, got, back, err)
		}
	})
}
