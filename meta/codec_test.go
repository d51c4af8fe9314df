package meta

import (
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"
)

func sampleObject() *Object {
	return &Object{
		Bucket: "b", Key: "dir/ünï", Stamp: Stamp{Nanos: 42, Writer: "gw1"}, Size: 5, ETag: "abc",
		ContentType: "text/plain", UserMeta: map[string]string{"a": "1"}, Code: Code{K: 4, M: 2},
		BlockSize: 1 << 20, Parts: []Part{{Number: 1, Size: 5, ETag: "abc"}},
		Distribution: []PeerID{"p1", "p2", "p3", "p4", "p5", "p6"}, ModTime: time.Unix(1, 0).UTC(),
		ShardIndex: 3, Inline: []byte("hello"), Inlined: true,
	}
}

func TestObjectRoundTrip(t *testing.T) {
	for _, inline := range [][]byte{nil, {}, []byte("x"), bytes.Repeat([]byte{7}, 70000)} {
		o := sampleObject()
		o.Inline = inline
		o.DeleteMarker = inline == nil
		b, err := MarshalObject(o)
		if err != nil {
			t.Fatal(err)
		}
		got, err := UnmarshalObject(b)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got.Inline, inline) || got.Key != o.Key || got.Stamp != o.Stamp || got.ShardIndex != 3 ||
			len(got.Distribution) != 6 || got.DeleteMarker != o.DeleteMarker {
			t.Fatalf("round trip changed the record: %+v", got)
		}
		if _, e, err := UnmarshalEntry(b); err != nil || e.DeleteMarker != o.DeleteMarker {
			t.Fatalf("listing line %+v, %v: the delete marker flag did not come through", e, err)
		}
	}
}

// TestEveryByteFlipDetected flips each byte of an encoded record in turn:
// every damaged copy must be rejected with ErrCorrupt.
func TestEveryByteFlipDetected(t *testing.T) {
	b, err := MarshalObject(sampleObject())
	if err != nil {
		t.Fatal(err)
	}
	for i := range b {
		c := append([]byte(nil), b...)
		c[i] ^= 0x01
		if _, err := UnmarshalObject(c); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("flip at byte %d of %d: err = %v, want ErrCorrupt", i, len(b), err)
		}
	}
	for n := 0; n < len(b); n += 7 {
		if _, err := UnmarshalObject(b[:n]); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("truncated to %d bytes: err = %v", n, err)
		}
	}
}

func TestParseCode(t *testing.T) {
	cases := []struct {
		in   string
		want Code
		ok   bool
	}{
		{"4+2", Code{4, 2}, true}, {" 10+4 ", Code{10, 4}, true}, {"1+0", Code{1, 0}, true},
		{"0+2", Code{}, false}, {"4-2", Code{}, false}, {"a+b", Code{}, false}, {"200+100", Code{}, false}, {"4+-1", Code{}, false},
	}
	for _, tc := range cases {
		got, err := ParseCode(tc.in)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("ParseCode(%q) = %v, %v", tc.in, got, err)
		}
	}
}

func TestWriteQuorum(t *testing.T) {
	cases := []struct {
		c    Code
		want int
	}{{Code{4, 2}, 4}, {Code{2, 1}, 2}, {Code{3, 3}, 4}, {Code{6, 3}, 6}, {Code{10, 4}, 10}, {Code{1, 1}, 2}, {Code{1, 0}, 1}}
	for _, tc := range cases {
		if got := tc.c.WriteQuorum(); got != tc.want {
			t.Errorf("%v.WriteQuorum() = %d, want %d", tc.c, got, tc.want)
		}
	}
}

func TestStampOrder(t *testing.T) {
	a, b, c := Stamp{1, "a"}, Stamp{1, "b"}, Stamp{2, "a"}
	if !a.Less(b) || !b.Less(c) || c.Less(a) || a.Less(a) {
		t.Fatal("stamps misordered")
	}
	if a.String() >= c.String() {
		t.Fatal("stamp strings do not sort like stamps")
	}
}

func FuzzUnmarshal(f *testing.F) {
	b, _ := MarshalObject(sampleObject())
	f.Add(b)
	f.Add([]byte("TSM\x01\x00\x00\x00\x02{}\x00\x00\x00\x00\x00\x00\x00\x00"))
	v1, _ := Marshal(sampleObject(), nil)
	f.Add(v1)
	f.Fuzz(func(t *testing.T, data []byte) {
		bucket, e, eerr := UnmarshalEntry(data)
		if eerr != nil && !errors.Is(eerr, ErrCorrupt) {
			t.Fatalf("entry error not ErrCorrupt: %v", eerr)
		}
		o, err := UnmarshalObject(data)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("error not ErrCorrupt: %v", err)
			}
			return
		}
		// A record that decodes whole decodes as a listing line too, the
		// same line. (Not the converse: the line skips fields whose
		// damage only the whole decode sees.)
		if eerr != nil || bucket != o.Bucket || e != EntryOf(o) {
			t.Fatalf("entry %q %+v %v of a record that decodes as %+v", bucket, e, eerr, EntryOf(o))
		}
		again, err := MarshalObject(o)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := UnmarshalObject(again); err != nil {
			t.Fatalf("re-encoded record does not decode: %v", err)
		}
	})
}

// A record as the codec wrote it before stamps came from a hybrid logical
// clock, in format 1 (JSON): it still decodes to the same stamp, and the
// object re-encoded in format 2 decodes to the same object.
func TestRecordOfEarlierStampsUnchanged(t *testing.T) {
	const old = "54534d01000001057b226275636b6574223a2262222c226b6579223a226b222c227374616d70223a7b226e616e6f73223a3137363435" +
		"39303030303132333435363738392c22777269746572223a22677731227d2c2273697a65223a332c2265746167223a2265222c22636f6465223a7b22" +
		"6b223a342c226d223a327d2c22626c6f636b5f73697a65223a313034383537362c22646973747269627574696f6e223a5b227031222c227032222c22" +
		"7033222c227034222c227035222c227036225d2c226d6f645f74696d65223a22323032352d31322d30315431313a35333a32302e3132333435363738" +
		"395a222c2273686172645f696e646578223a322c22696e6c696e6564223a747275657d0000000361626371841a31"
	raw, err := hex.DecodeString(old)
	if err != nil {
		t.Fatal(err)
	}
	o, err := UnmarshalObject(raw)
	if err != nil {
		t.Fatal(err)
	}
	if want := (Stamp{Nanos: 1764590000123456789, Writer: "gw1"}); o.Stamp != want {
		t.Fatalf("stamp %+v, want %+v", o.Stamp, want)
	}
	again, err := MarshalObject(o)
	if err != nil {
		t.Fatal(err)
	}
	if again[3] != formatV2 {
		t.Fatalf("re-encoded in format %d", again[3])
	}
	back, err := UnmarshalObject(again)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, o) {
		t.Fatalf("format 2 changed the record:\n%+v\n%+v", back, o)
	}
}

// TestBinaryMatchesJSON: every field of a full object record survives
// format 2 exactly as it survives format 1, odd bytes in user metadata
// and a time's nanoseconds and zone included.
func TestBinaryMatchesJSON(t *testing.T) {
	o := sampleObject()
	o.UserMeta = Strings{"plain": "v", "raw": "\xff\x00bytes", "ünï": "ço"}
	o.Headers = Strings{"Cache-Control": "no-cache", ChecksumTypeHeader: "FULL_OBJECT"}
	o.StorageClass = "REDUCED_REDUNDANCY"
	o.Parts = []Part{{Number: 1, Size: 5 << 20, ETag: "e1", Checksums: map[string]string{"crc32c": "AAAA"}}, {Number: 2, Size: 3, ETag: "e2"}}
	o.ModTime = time.Date(2026, 12, 3, 16, 50, 1, 123456789, time.UTC)
	o.Epoch = 7
	o.UploadID = "upload-1"
	o.Deleted = false
	v1, err := Marshal(o, o.Inline)
	if err != nil {
		t.Fatal(err)
	}
	fromJSON, err := UnmarshalObject(v1)
	if err != nil {
		t.Fatal(err)
	}
	v2, err := MarshalObject(o)
	if err != nil {
		t.Fatal(err)
	}
	fromBinary, err := UnmarshalObject(v2)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(fromBinary, fromJSON) {
		t.Fatalf("formats disagree:\nbinary %+v\njson   %+v", fromBinary, fromJSON)
	}
	if !reflect.DeepEqual(fromBinary, o) {
		t.Fatalf("binary round trip changed the record:\n%+v\n%+v", fromBinary, o)
	}
	// The generic decoder is for JSON records only.
	var into Object
	if _, err := Unmarshal(v2, &into); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("Unmarshal of a format 2 record: %v, want ErrCorrupt", err)
	}
}

// TestBinaryLengthsBounded: a record declaring more elements than any
// real one holds is refused, not allocated.
func TestBinaryLengthsBounded(t *testing.T) {
	body := []byte{0x81, 0xac} // a map of one entry: "distribution"
	body = append(body, "distribution"...)
	body = append(body, 0xdd, 0xff, 0xff, 0xff, 0xff) // array32 of 2^32-1
	rec := frame(formatV2, body, nil)
	if _, err := UnmarshalObject(rec); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("huge array: %v, want ErrCorrupt", err)
	}
}

func TestHeldStamp(t *testing.T) {
	held := Stamp{Nanos: 42, Writer: "gw"}
	cases := []struct {
		name   string
		err    error
		want   Stamp
		wantOK bool
	}{
		{"stale refusal naming its stamp", fmt.Errorf("peer p1: %w", &StaleError{Held: held}), held, true},
		{"plain stale refusal of an older peer", fmt.Errorf("peer p1: %w", ErrStale), Stamp{}, false},
		{"another failure", ErrNotFound, Stamp{}, false},
		{"no failure", nil, Stamp{}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := HeldStamp(tc.err)
			if got != tc.want || ok != tc.wantOK {
				t.Fatalf("HeldStamp = %v, %v; want %v, %v", got, ok, tc.want, tc.wantOK)
			}
			if tc.wantOK && !errors.Is(tc.err, ErrStale) {
				t.Fatal("a StaleError must match ErrStale")
			}
		})
	}
}

func TestVersionsRoundTrip(t *testing.T) {
	a, b := sampleObject(), sampleObject()
	b.Stamp.Nanos--
	b.Inline = []byte("older inline bytes")
	enc, err := MarshalVersions([]*Object{a, b})
	if err != nil {
		t.Fatal(err)
	}
	got, err := UnmarshalVersions(enc)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Stamp != a.Stamp || got[1].Stamp != b.Stamp || string(got[1].Inline) != string(b.Inline) {
		t.Fatalf("decoded %+v", got)
	}
	for _, bad := range [][]byte{nil, {0x05, 'T'}, enc[:len(enc)-1], append(enc, 0x80)} {
		if _, err := UnmarshalVersions(bad); !errors.Is(err, ErrCorrupt) {
			t.Errorf("UnmarshalVersions(%q...) = %v, want ErrCorrupt", bad[:min(len(bad), 8)], err)
		}
	}
	if _, err := MarshalVersions(make([]*Object, MaxVersions+1)); err == nil {
		t.Error("MarshalVersions took more than MaxVersions records")
	}
	if _, err := MarshalBatch(make([]*Object, MaxBatch+1)); err == nil {
		t.Error("MarshalBatch took more than MaxBatch records")
	}
}

func FuzzUnmarshalVersions(f *testing.F) {
	fuzzList(f, MarshalVersions, UnmarshalVersions)
}

func FuzzUnmarshalBatch(f *testing.F) {
	fuzzList(f, MarshalBatch, UnmarshalBatch)
}

// fuzzList checks a list decoder: damage is ErrCorrupt, and what decodes
// encodes and decodes again.
func fuzzList(f *testing.F, enc func([]*Object) ([]byte, error), dec func([]byte) ([]*Object, error)) {
	b, _ := enc([]*Object{sampleObject(), sampleObject()})
	f.Add(b)
	f.Add([]byte{0})
	f.Fuzz(func(t *testing.T, data []byte) {
		os, err := dec(data)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("error not ErrCorrupt: %v", err)
			}
			return
		}
		again, err := enc(os)
		if err != nil {
			t.Fatal(err)
		}
		if back, err := dec(again); err != nil || len(back) != len(os) {
			t.Fatalf("re-encoded records do not decode: %v", err)
		}
	})
}

// TestUnmarshalEntry: the listing line decoded from a record, in either
// format, is EntryOf the whole record, and damage is ErrCorrupt.
func TestUnmarshalEntry(t *testing.T) {
	deleted := sampleObject()
	deleted.Deleted, deleted.Size, deleted.ETag, deleted.Inline = true, 0, "", nil
	multipart := sampleObject()
	multipart.ETag, multipart.StorageClass = "abc-3", "REDUCED_REDUNDANCY"
	multipart.Headers = Strings{"X-Amz-Checksum-Crc32": "AAAAAA==-3", ChecksumTypeHeader: "COMPOSITE", "Cache-Control": "no"}
	summed := sampleObject()
	summed.Headers = Strings{"X-Amz-Checksum-Crc64nvme": "AAAAAAAAAAA="}
	for _, o := range []*Object{sampleObject(), deleted, multipart, summed} {
		v2, err := MarshalObject(o)
		if err != nil {
			t.Fatal(err)
		}
		v1, err := Marshal(o, o.Inline)
		if err != nil {
			t.Fatal(err)
		}
		for name, b := range map[string][]byte{"format 2": v2, "format 1": v1} {
			bucket, e, err := UnmarshalEntry(b)
			if err != nil || bucket != o.Bucket || e != EntryOf(o) {
				t.Errorf("%s %s: %q %+v %v, want %+v", name, o.Key, bucket, e, err, EntryOf(o))
			}
			bad := bytes.Clone(b)
			bad[len(bad)/2] ^= 1
			if _, _, err := UnmarshalEntry(bad); !errors.Is(err, ErrCorrupt) {
				t.Errorf("%s %s with a flipped bit: %v", name, o.Key, err)
			}
		}
	}
}
