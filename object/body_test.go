package object

import (
	"bytes"
	"crypto/md5"
	"errors"
	"io"
	"testing"
	"testing/iotest"
)

// FuzzBodyReader checks the body meter against its specification for any
// body, declared size and read pattern: exact bodies pass through with
// their MD5, others fail with the right sentinel, and no byte past a
// declared size is ever handed on.
func FuzzBodyReader(f *testing.F) {
	f.Add([]byte("hello"), int64(5), false)
	f.Add([]byte("hello"), int64(4), true)
	f.Add([]byte("hello"), int64(6), false)
	f.Add([]byte("hello"), int64(-1), true)
	f.Add([]byte{}, int64(0), false)
	f.Add(bytes.Repeat([]byte{1}, 200), int64(-1), false)
	f.Fuzz(func(t *testing.T, data []byte, declared int64, oneByte bool) {
		const maxUnknown = 100
		if declared < -1 {
			declared = -1
		}
		var src io.Reader = bytes.NewReader(data)
		if oneByte {
			src = iotest.OneByteReader(src)
		}
		b := newBodyReader(src, declared, maxUnknown)
		got, err := io.ReadAll(b)
		n := int64(len(data))
		switch {
		case declared < 0 && n > maxUnknown:
			if !errors.Is(err, ErrEntityTooLarge) {
				t.Fatalf("unknown size over max: %v", err)
			}
		case declared < 0 || declared == n:
			if err != nil || !bytes.Equal(got, data) {
				t.Fatalf("exact body: %d bytes, %v", len(got), err)
			}
			if sum := md5.Sum(data); !bytes.Equal(b.sum(), sum[:]) {
				t.Fatal("md5 mismatch")
			}
		case declared > n:
			if !errors.Is(err, ErrIncompleteBody) {
				t.Fatalf("short body: %v", err)
			}
		default:
			if !errors.Is(err, ErrBodyTooLong) || !bytes.Equal(got, data[:declared]) {
				t.Fatalf("long body: %d bytes, %v", len(got), err)
			}
		}
		if err != nil && !errors.Is(b.err, err) {
			t.Fatalf("failure %v not remembered (%v)", err, b.err)
		}
	})
}

func TestClampRange(t *testing.T) {
	cases := []struct {
		size, off, length int64
		wantOff, wantLen  int64
		bad               bool
	}{
		{10, 0, -1, 0, 10, false},
		{10, 3, 4, 3, 4, false},
		{10, 3, 100, 3, 7, false},
		{10, 9, -1, 9, 1, false},
		{10, 10, -1, 0, 0, true},
		{10, 11, 1, 0, 0, true},
		{0, 0, -1, 0, 0, false},
		{0, 0, 5, 0, 0, false},
		{0, 1, -1, 0, 0, true},
		{10, -1, 2, 0, 0, true},
		{10, 0, -2, 0, 0, true},
	}
	for _, c := range cases {
		off, length, err := clampRange(c.size, c.off, c.length)
		if c.bad {
			if !errors.Is(err, ErrInvalidRange) {
				t.Errorf("%+v: err %v", c, err)
			}
			continue
		}
		if err != nil || off != c.wantOff || length != c.wantLen {
			t.Errorf("%+v: got %d+%d, %v", c, off, length, err)
		}
	}
}
