package cluster

import (
	"errors"
	"strings"
	"testing"
)

func TestMetaRoundTrip(t *testing.T) {
	cases := []NodeMeta{
		{ID: "p1", Role: RolePeer},
		{ID: "gw", Role: RoleGateway, APIAddr: "10.0.0.1:9000"},
		{ID: "p2", Role: RolePeer, APIAddr: "[::1]:7000", Zone: "rack-a", Capacity: 1 << 40, Free: 1<<40 - 1},
		{ID: "ünïcode", Role: RolePeer, Zone: "z\"quoted\""},
	}
	for _, want := range cases {
		b, err := EncodeMeta(want)
		if err != nil {
			t.Fatalf("encode %+v: %v", want, err)
		}
		got, err := DecodeMeta(b)
		if err != nil || got != want {
			t.Fatalf("round trip %+v: got %+v, %v", want, got, err)
		}
	}
}

// A typical peer's meta must leave room for fields yet to come.
func TestMetaTypicalSize(t *testing.T) {
	b, err := EncodeMeta(NodeMeta{
		ID: "peer-0123456789abcdef", Role: RolePeer, APIAddr: "[2001:db8::1234:5678]:65535",
		Zone: "eu-west-1a/rack-17", Capacity: 1<<64 - 1, Free: 1<<64 - 1,
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(b) > MetaMaxSize/2 {
		t.Fatalf("typical meta takes %d of %d bytes", len(b), MetaMaxSize)
	}
}

func TestMetaLimit(t *testing.T) {
	base := NodeMeta{ID: "p", Role: RolePeer}
	empty, err := EncodeMeta(base)
	if err != nil {
		t.Fatal(err)
	}
	// `,"a":""` is not emitted for an empty APIAddr; a non-empty one adds
	// 7 bytes of framing plus its length.
	fill := MetaMaxSize - len(empty) - len(`,"a":""`)
	at := base
	at.APIAddr = strings.Repeat("x", fill)
	b, err := EncodeMeta(at)
	if err != nil || len(b) != MetaMaxSize {
		t.Fatalf("meta of exactly %d bytes: len %d, err %v", MetaMaxSize, len(b), err)
	}
	over := base
	over.APIAddr = strings.Repeat("x", fill+1)
	if _, err := EncodeMeta(over); !errors.Is(err, ErrMetaTooLarge) {
		t.Fatalf("meta of %d bytes: err = %v, want ErrMetaTooLarge", MetaMaxSize+1, err)
	}
	if _, err := DecodeMeta(make([]byte, MetaMaxSize+1)); !errors.Is(err, ErrMetaTooLarge) {
		t.Fatalf("decode oversized: err = %v", err)
	}
}

func TestDecodeMetaRejects(t *testing.T) {
	for _, in := range []string{"", "{", "null", "[]", `{"r":"peer"}`, `{"id":""}`, `{"id":5}`, `{"id":"x","c":-1}`} {
		if m, err := DecodeMeta([]byte(in)); err == nil {
			t.Errorf("DecodeMeta(%q) = %+v, want error", in, m)
		}
	}
}

func FuzzDecodeMeta(f *testing.F) {
	for _, s := range []string{`{"id":"p1","r":"peer","a":"1.2.3.4:5","z":"z","c":10,"f":5}`, `{"id":"g"}`, `{}`, "\xff"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := DecodeMeta(b)
		if err != nil {
			return
		}
		if m.ID == "" {
			t.Fatal("decoded meta without id")
		}
		// Whatever decodes re-encodes and decodes to the same value. The
		// re-encoding may exceed the limit: JSON escaping ('<' as \u003c)
		// can make it longer than the input.
		b2, err := EncodeMeta(m)
		if errors.Is(err, ErrMetaTooLarge) {
			return
		}
		if err != nil {
			t.Fatalf("re-encode: %v", err)
		}
		if m2, err := DecodeMeta(b2); err != nil || m2 != m {
			t.Fatalf("unstable: %+v -> %q -> %+v, %v", m, b2, m2, err)
		}
	})
}
