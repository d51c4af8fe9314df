package objectlock

import (
	"errors"
	"testing"
	"time"
)

func code(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	if err != nil {
		return "?"
	}
	return ""
}

func TestParse(t *testing.T) {
	cases := []struct {
		name, body, code string
		days, years      int
	}{
		{"enabled", `<ObjectLockConfiguration><ObjectLockEnabled>Enabled</ObjectLockEnabled></ObjectLockConfiguration>`, "", 0, 0},
		{"days", `<ObjectLockConfiguration><ObjectLockEnabled>Enabled</ObjectLockEnabled><Rule><DefaultRetention><Mode>GOVERNANCE</Mode><Days>3</Days></DefaultRetention></Rule></ObjectLockConfiguration>`, "", 3, 0},
		{"years", `<ObjectLockConfiguration><ObjectLockEnabled>Enabled</ObjectLockEnabled><Rule><DefaultRetention><Mode>COMPLIANCE</Mode><Years>1</Years></DefaultRetention></Rule></ObjectLockConfiguration>`, "", 0, 1},
		{"both", `<ObjectLockConfiguration><ObjectLockEnabled>Enabled</ObjectLockEnabled><Rule><DefaultRetention><Mode>COMPLIANCE</Mode><Days>1</Days><Years>1</Years></DefaultRetention></Rule></ObjectLockConfiguration>`, "MalformedXML", 0, 0},
		{"no period", `<ObjectLockConfiguration><ObjectLockEnabled>Enabled</ObjectLockEnabled><Rule><DefaultRetention><Mode>COMPLIANCE</Mode></DefaultRetention></Rule></ObjectLockConfiguration>`, "InvalidArgument", 0, 0},
		{"too long", `<ObjectLockConfiguration><ObjectLockEnabled>Enabled</ObjectLockEnabled><Rule><DefaultRetention><Mode>COMPLIANCE</Mode><Years>101</Years></DefaultRetention></Rule></ObjectLockConfiguration>`, "InvalidArgument", 0, 0},
		{"negative", `<ObjectLockConfiguration><ObjectLockEnabled>Enabled</ObjectLockEnabled><Rule><DefaultRetention><Mode>COMPLIANCE</Mode><Days>-1</Days></DefaultRetention></Rule></ObjectLockConfiguration>`, "InvalidArgument", 0, 0},
		{"bad mode", `<ObjectLockConfiguration><ObjectLockEnabled>Enabled</ObjectLockEnabled><Rule><DefaultRetention><Mode>x</Mode><Days>1</Days></DefaultRetention></Rule></ObjectLockConfiguration>`, "MalformedXML", 0, 0},
		{"not enabled", `<ObjectLockConfiguration></ObjectLockConfiguration>`, "MalformedXML", 0, 0},
		{"garbage", `<x`, "MalformedXML", 0, 0},
		{"trailing", `<ObjectLockConfiguration><ObjectLockEnabled>Enabled</ObjectLockEnabled></ObjectLockConfiguration><x/>`, "MalformedXML", 0, 0},
	}
	for _, tc := range cases {
		c, err := Parse([]byte(tc.body))
		if code(err) != tc.code {
			t.Errorf("%s: err %v, want %s", tc.name, err, tc.code)
			continue
		}
		if err != nil {
			continue
		}
		now := time.Date(2026, 1, 31, 0, 0, 0, 0, time.UTC)
		r, ok := c.Default(now)
		if ok != (tc.days+tc.years > 0) || (ok && !r.Until.Equal(now.AddDate(tc.years, 0, tc.days))) {
			t.Errorf("%s: default %+v %v", tc.name, r, ok)
		}
	}
}

func TestParseRetentionAndLegalHold(t *testing.T) {
	r, err := ParseRetention([]byte(`<Retention><Mode>COMPLIANCE</Mode><RetainUntilDate>2030-01-02T03:04:05Z</RetainUntilDate></Retention>`))
	if err != nil || r.Mode != Compliance || !r.Until.Equal(time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)) {
		t.Fatalf("retention %+v, %v", r, err)
	}
	for _, bad := range []string{
		`<Retention><Mode>COMPLIANCE</Mode></Retention>`,
		`<Retention><Mode>x</Mode><RetainUntilDate>2030-01-02T03:04:05Z</RetainUntilDate></Retention>`,
		`<Retention><RetainUntilDate>not a date</RetainUntilDate></Retention>`,
		``,
	} {
		if _, err := ParseRetention([]byte(bad)); code(err) != "MalformedXML" {
			t.Errorf("%q: %v", bad, err)
		}
	}
	if r, err := ParseRetention([]byte(`<Retention></Retention>`)); err != nil || r.Mode != "" {
		t.Errorf("empty retention: %+v %v", r, err)
	}
	for body, want := range map[string]bool{`<LegalHold><Status>ON</Status></LegalHold>`: true, `<LegalHold><Status>OFF</Status></LegalHold>`: false} {
		if on, err := ParseLegalHold([]byte(body)); err != nil || on != want {
			t.Errorf("%s: %v %v", body, on, err)
		}
	}
	if _, err := ParseLegalHold([]byte(`<LegalHold><Status>on</Status></LegalHold>`)); code(err) != "MalformedXML" {
		t.Errorf("lower-case status: %v", err)
	}
}

func TestStateRoundTrip(t *testing.T) {
	s := State{Retention: Retention{Mode: Governance, Until: time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)}, LegalHold: true}
	h := map[string]string{"Other": "x", LegalHoldHeader: "OFF"}
	s.Apply(h)
	if got := StateOf(h); got.Retention.Mode != s.Retention.Mode || !got.Retention.Until.Equal(s.Retention.Until) || !got.LegalHold || h["Other"] != "x" {
		t.Fatalf("state %+v from %v", got, h)
	}
	State{}.Apply(h)
	if len(h) != 1 {
		t.Fatalf("cleared state leaves %v", h)
	}
}

func TestCheckDeleteAndRetention(t *testing.T) {
	now := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	later, earlier := now.Add(time.Hour), now.Add(-time.Hour)
	gov := Retention{Mode: Governance, Until: later}
	comp := Retention{Mode: Compliance, Until: later}
	deletes := []struct {
		name   string
		s      State
		bypass bool
		ok     bool
	}{
		{"none", State{}, false, true},
		{"legal hold", State{LegalHold: true}, true, false},
		{"governance", State{Retention: gov}, false, false},
		{"governance bypassed", State{Retention: gov}, true, true},
		{"compliance", State{Retention: comp}, true, false},
		{"compliance expired", State{Retention: Retention{Mode: Compliance, Until: earlier}}, false, true},
	}
	for _, tc := range deletes {
		if err := CheckDelete(tc.s, now, tc.bypass); (err == nil) != tc.ok || (err != nil && code(err) != "AccessDenied") {
			t.Errorf("delete %s: %v", tc.name, err)
		}
	}
	changes := []struct {
		name      string
		old, next Retention
		bypass    bool
		ok        bool
	}{
		{"extend compliance", comp, Retention{Mode: Compliance, Until: later.Add(time.Hour)}, false, true},
		{"shorten compliance", comp, Retention{Mode: Compliance, Until: now.Add(time.Minute)}, true, false},
		{"compliance to governance", comp, Retention{Mode: Governance, Until: later}, true, false},
		{"remove compliance", comp, Retention{}, true, false},
		{"shorten governance", gov, Retention{Mode: Governance, Until: now.Add(time.Minute)}, false, false},
		{"shorten governance bypassed", gov, Retention{Mode: Governance, Until: now.Add(time.Minute)}, true, true},
		{"governance to compliance", gov, Retention{Mode: Compliance, Until: later}, false, false},
		{"remove governance bypassed", gov, Retention{}, true, true},
		{"expired", Retention{Mode: Compliance, Until: earlier}, Retention{}, false, true},
	}
	for _, tc := range changes {
		if err := CheckRetention(tc.old, tc.next, now, tc.bypass); (err == nil) != tc.ok {
			t.Errorf("change %s: %v", tc.name, err)
		}
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(`<ObjectLockConfiguration><ObjectLockEnabled>Enabled</ObjectLockEnabled><Rule><DefaultRetention><Mode>GOVERNANCE</Mode><Days>3</Days></DefaultRetention></Rule></ObjectLockConfiguration>`))
	f.Add([]byte(`<Retention><Mode>COMPLIANCE</Mode><RetainUntilDate>2030-01-02T03:04:05Z</RetainUntilDate></Retention>`))
	f.Add([]byte(`<LegalHold><Status>ON</Status></LegalHold>`))
	f.Fuzz(func(t *testing.T, body []byte) {
		if c, err := Parse(body); err == nil {
			if c.ObjectLockEnabled != "Enabled" {
				t.Fatalf("accepted %+v", c)
			}
			if r, ok := c.Default(time.Unix(0, 0)); ok && (r.Mode == "" || !r.Until.After(time.Unix(0, 0))) {
				t.Fatalf("default %+v from %q", r, body)
			}
		} else if code(err) == "?" {
			t.Fatalf("untyped error %v", err)
		}
		if r, err := ParseRetention(body); err == nil && (r.Mode == "") != r.Until.IsZero() {
			t.Fatalf("retention %+v", r)
		}
		if _, err := ParseLegalHold(body); err != nil && code(err) != "MalformedXML" {
			t.Fatalf("legal hold error %v", err)
		}
	})
}
