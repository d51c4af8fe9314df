package checksum

import "testing"

// FuzzDecode: values come from request headers and XML bodies.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{"", "AAAAAA==", "rVWtNbadtsaKXJAcgWPWjifHzJaXde/iV4jaJAOdivc=-3", "x-1", "-", "=-99999999999999999999"} {
		f.Add("SHA256", s)
		f.Add("CRC32", s)
	}
	f.Fuzz(func(t *testing.T, name, v string) {
		a, ok := Parse(name)
		if !ok {
			return
		}
		if b, err := a.Decode(v); err == nil && Encode(b) != v {
			t.Fatalf("%s %q decoded and re-encoded as %q", a, v, Encode(b))
		}
		if b, n, err := a.DecodeComposite(v); err == nil && (len(b) != a.Size() || n < 0) {
			t.Fatalf("%s composite %q: %d bytes, n=%d", a, v, len(b), n)
		}
	})
}
