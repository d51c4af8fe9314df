package versioning

import (
	"errors"
	"testing"
)

func TestParse(t *testing.T) {
	const ns = ` xmlns="http://s3.amazonaws.com/doc/2006-03-01/"`
	tests := []struct {
		name, body string
		status     Status
		code       string
	}{
		{"enabled", `<VersioningConfiguration` + ns + `><Status>Enabled</Status></VersioningConfiguration>`, Enabled, ""},
		{"suspended", `<VersioningConfiguration><Status>Suspended</Status></VersioningConfiguration>` + "\n", Suspended, ""},
		{"mfa disabled", `<VersioningConfiguration><Status>Enabled</Status><MfaDelete>Disabled</MfaDelete></VersioningConfiguration>`, Enabled, ""},
		{"no status", `<VersioningConfiguration></VersioningConfiguration>`, "", "IllegalVersioningConfigurationException"},
		{"lower case", `<VersioningConfiguration><Status>enabled</Status></VersioningConfiguration>`, "", "MalformedXML"},
		{"bad mfa", `<VersioningConfiguration><Status>Enabled</Status><MfaDelete>x</MfaDelete></VersioningConfiguration>`, "", "MalformedXML"},
		{"mfa enabled", `<VersioningConfiguration><Status>Enabled</Status><MfaDelete>Enabled</MfaDelete></VersioningConfiguration>`, "", "NotImplemented"},
		{"other root", `<LifecycleConfiguration><Status>Enabled</Status></LifecycleConfiguration>`, "", "MalformedXML"},
		{"empty", ``, "", "MalformedXML"},
		{"not xml", `Enabled`, "", "MalformedXML"},
		{"cut short", `<VersioningConfiguration><Status>Enabled</Status>`, "", "MalformedXML"},
		{"two roots", `<VersioningConfiguration><Status>Enabled</Status></VersioningConfiguration><VersioningConfiguration/>`, "", "MalformedXML"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Parse([]byte(tc.body))
			var e *Error
			switch {
			case tc.code == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.code == "" && c.Status != tc.status:
				t.Fatalf("status %q, want %q", c.Status, tc.status)
			case tc.code != "" && (!errors.As(err, &e) || e.Code != tc.code):
				t.Fatalf("err = %v, want %s", err, tc.code)
			}
		})
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(`<VersioningConfiguration><Status>Enabled</Status></VersioningConfiguration>`))
	f.Add([]byte(`<VersioningConfiguration><Status>Suspended</Status><MfaDelete>Disabled</MfaDelete></VersioningConfiguration>`))
	f.Fuzz(func(t *testing.T, body []byte) {
		c, err := Parse(body)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) || e.Code == "" {
				t.Fatalf("error %v carries no S3 code", err)
			}
			return
		}
		if c.Status != Enabled && c.Status != Suspended {
			t.Fatalf("accepted status %q", c.Status)
		}
	})
}
