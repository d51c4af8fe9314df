package object

import (
	"bytes"
	"context"
	"errors"
	"testing"
)

func TestCompleteMultipartPartErrors(t *testing.T) {
	l, _ := newTestLayer(t)
	ctx := context.Background()
	small, big := randBytes(1, 40), randBytes(2, testMinPart)
	id, err := l.NewMultipart(ctx, testBucket, "mp", PutOptions{})
	if err != nil {
		t.Fatal(err)
	}
	e1 := putPart(t, l, "mp", id, 1, small).ETag
	e2 := putPart(t, l, "mp", id, 2, big).ETag
	cases := []struct {
		name  string
		parts []CompletePart
		want  PartError
	}{
		{"unknown part", []CompletePart{{Number: 5, ETag: `"` + e1 + `"`}}, PartError{Err: ErrInvalidPart, Number: 5, ETag: e1}},
		{"wrong etag", []CompletePart{{Number: 2, ETag: e1}}, PartError{Err: ErrInvalidPart, Number: 2, ETag: e1}},
		{"small part", []CompletePart{{Number: 1, ETag: e1}, {Number: 2, ETag: e2}},
			PartError{Err: ErrEntityTooSmall, Number: 1, ETag: e1, Size: int64(len(small)), Min: testMinPart}},
	}
	for _, c := range cases {
		_, err := l.CompleteMultipart(ctx, testBucket, "mp", id, c.parts, CompleteOptions{})
		var pe *PartError
		if !errors.As(err, &pe) || *pe != c.want || !errors.Is(err, c.want.Err) {
			t.Errorf("%s: err %v (%+v), want %+v", c.name, err, pe, c.want)
		}
	}
}

func TestPutDigestError(t *testing.T) {
	l, _ := newTestLayer(t)
	data, stated := []byte("dummy data"), md5sum([]byte("other"))
	for _, size := range []int{len(data), 3 * testBlock} { // inline and erasure-coded
		body := bytes.Repeat(data, size/len(data))
		_, err := l.PutObject(context.Background(), testBucket, "k", bytes.NewReader(body), int64(len(body)), PutOptions{ContentMD5: stated})
		var de *DigestError
		if !errors.As(err, &de) || !errors.Is(err, ErrBadDigest) || !bytes.Equal(de.Want, stated) || !bytes.Equal(de.Got, md5sum(body)) {
			t.Fatalf("%d bytes: err %v, want a DigestError", len(body), err)
		}
	}
}
