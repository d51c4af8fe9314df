package lifecycle

import (
	"encoding/xml"
	"testing"
)

// FuzzParse: any body either is refused or is a configuration whose
// stored form (what GET returns and the worker reads) parses again.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		rules(`<Rule><ID>a</ID><Status>Enabled</Status><Filter><Prefix>logs/</Prefix></Filter><Expiration><Days>3</Days></Expiration></Rule>`),
		rules(`<Rule><Status>Enabled</Status><Filter><And><Prefix>p</Prefix><Tag><Key>k</Key><Value>v</Value></Tag><ObjectSizeLessThan>9</ObjectSizeLessThan></And></Filter><AbortIncompleteMultipartUpload><DaysAfterInitiation>1</DaysAfterInitiation></AbortIncompleteMultipartUpload></Rule>`),
		rules(`<Rule><Status>Disabled</Status><Prefix></Prefix><Expiration><Date>2027-01-01T00:00:00.000Z</Date></Expiration><NoncurrentVersionExpiration><NoncurrentDays>1</NoncurrentDays></NoncurrentVersionExpiration></Rule>`),
		"<LifecycleConfiguration><Rule>",
		"",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := Parse(data)
		if err != nil {
			if _, ok := err.(*Error); !ok {
				t.Fatalf("refusal %T is not an *Error: %v", err, err)
			}
			return
		}
		stored, err := xml.Marshal(c)
		if err != nil {
			t.Fatalf("marshal accepted configuration: %v", err)
		}
		if _, err := Parse(stored); err != nil {
			t.Fatalf("stored form %s refused: %v", stored, err)
		}
	})
}
