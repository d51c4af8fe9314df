package checksum

import (
	"bytes"
	"encoding/hex"
	"math/rand/v2"
	"testing"
)

// Known answers from each algorithm's reference: the empty input and
// "123456789" (the CRC catalogue's check value).
func TestKnownAnswers(t *testing.T) {
	cases := []struct {
		a           Algorithm
		empty, nine string // hex
	}{
		{CRC32, "00000000", "cbf43926"},
		{CRC32C, "00000000", "e3069283"},
		{CRC64NVME, "0000000000000000", "ae8b14860a799888"},
		{SHA1, "da39a3ee5e6b4b0d3255bfef95601890afd80709", "f7c3bc1d808e04732adf679965ccc34ca7ae3441"},
		{MD5, "d41d8cd98f00b204e9800998ecf8427e", "25f9e794323b453885f5181f1b624d0b"},
		{XXHASH64, "ef46db3751d8e999", "8cb841db40e6ae83"},
		{XXHASH3, "2d06800538d394c2", ""},
		{XXHASH128, "99aa06d3014798d86001c324468d497f", ""},
	}
	for _, c := range cases {
		for in, want := range map[string]string{"": c.empty, "123456789": c.nine} {
			if want == "" {
				continue
			}
			h := c.a.New()
			h.Write([]byte(in))
			if got := hex.EncodeToString(h.Sum(nil)); got != want {
				t.Errorf("%s(%q) = %s, want %s", c.a, in, got, want)
			}
			if h.Size() != c.a.Size() {
				t.Errorf("%s size %d, table says %d", c.a, h.Size(), c.a.Size())
			}
		}
	}
}

func TestEverySpecMatchesItsHash(t *testing.T) {
	for _, a := range All {
		if got := len(a.New().Sum(nil)); got != a.Size() {
			t.Errorf("%s digest %d bytes, Size %d", a, got, a.Size())
		}
		if b, ok := Parse(a.Lower()); !ok || b != a {
			t.Errorf("Parse(%q) = %q, %v", a.Lower(), b, ok)
		}
	}
	if _, ok := Parse("crc16"); ok {
		t.Error("crc16 parsed")
	}
}

// TestCombineMatchesDirect checks the combined CRC of random parts,
// including empty ones, against the CRC of their concatenation.
func TestCombineMatchesDirect(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, a := range []Algorithm{CRC32, CRC32C, CRC64NVME} {
		for trial := 0; trial < 20; trial++ {
			n := 1 + rng.IntN(6)
			var whole []byte
			var sums [][]byte
			var sizes []int64
			for i := 0; i < n; i++ {
				part := make([]byte, rng.IntN(3000))
				for j := range part {
					part[j] = byte(rng.Uint32())
				}
				whole = append(whole, part...)
				h := a.New()
				h.Write(part)
				sums = append(sums, h.Sum(nil))
				sizes = append(sizes, int64(len(part)))
			}
			got, err := a.Combine(sums, sizes)
			if err != nil {
				t.Fatal(err)
			}
			h := a.New()
			h.Write(whole)
			if want := h.Sum(nil); !bytes.Equal(got, want) {
				t.Fatalf("%s trial %d: combined %x, direct %x", a, trial, got, want)
			}
		}
	}
	if _, err := SHA256.Combine([][]byte{make([]byte, 32)}, []int64{1}); err == nil {
		t.Error("SHA256 combined")
	}
}

func TestCompositeAndTypes(t *testing.T) {
	// Real S3 (three SHA256 parts): the composite of the parts' digests.
	parts := []string{"lcKa6Boe7a167tUCN5C4OaFygGSYD8MBnBARTrdL+1w=", "gHjhbUT4oo2tSCtSZJdlKi+jeNXJT+VImqdPXsXvkOc=", "4l9PQ3zOPZ0oGFvknFX+J4zZwE4WMzO+l3r8XrbWOeM="}
	var raw [][]byte
	for _, p := range parts {
		b, err := SHA256.Decode(p)
		if err != nil {
			t.Fatal(err)
		}
		raw = append(raw, b)
	}
	if got, want := SHA256.CompositeOf(raw), "rVWtNbadtsaKXJAcgWPWjifHzJaXde/iV4jaJAOdivc=-3"; got != want {
		t.Errorf("composite %s, want %s", got, want)
	}
	for _, c := range []struct {
		v  string
		ok bool
		n  int
	}{
		{"rVWtNbadtsaKXJAcgWPWjifHzJaXde/iV4jaJAOdivc=-3", true, 3},
		{"rVWtNbadtsaKXJAcgWPWjifHzJaXde/iV4jaJAOdivc=", true, 0},
		{"rVWtNbadtsaKXJAcgWPWjifHzJaXde/iV4jaJAOdivc=--3", false, 0},
		{"rVWtNbadtsaKXJAcgWPWjifHzJaXde/iV4jaJAOdivc=-03", false, 0},
		{"rVWtNbadtsaKXJAcgWPWjifHzJaXde/iV4jaJAOdivc=-x", false, 0},
		{"invalid_checksum", false, 0},
	} {
		_, n, err := SHA256.DecodeComposite(c.v)
		if (err == nil) != c.ok || n != c.n {
			t.Errorf("DecodeComposite(%q) = %d, %v", c.v, n, err)
		}
	}
	for _, a := range All {
		if a.Allows(FullObject) != (a == CRC32 || a == CRC32C || a == CRC64NVME) {
			t.Errorf("%s full object %v", a, a.Allows(FullObject))
		}
		if a.Allows(Composite) == (a == CRC64NVME) {
			t.Errorf("%s composite %v", a, a.Allows(Composite))
		}
		if !a.Allows(a.DefaultType()) {
			t.Errorf("%s does not allow its default type", a)
		}
	}
}
