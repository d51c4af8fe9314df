package object

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"time"
)

// newUpload starts an upload of key with one part and returns its id and
// the part to complete it with.
func newUpload(t *testing.T, l *Layer, key string, data []byte) (string, CompletePart) {
	t.Helper()
	id, err := l.NewMultipart(context.Background(), testBucket, key, PutOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p := putPart(t, l, key, id, 1, data)
	return id, CompletePart{Number: 1, ETag: p.ETag}
}

func TestCompleteMultipartConditions(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name                 string
		key                  string // "cur" exists, "new" does not
		ifMatch, ifNoneMatch string // "ETAG" stands for cur's ETag
		want                 error  // nil: committed
	}{
		{"if-match current", "cur", "ETAG", "", nil},
		{"if-match other", "cur", "0123", "", ErrPreconditionFailed},
		{"if-match missing key", "new", "ETAG", "", ErrObjectNotFound},
		{"if-none-match over existing", "cur", "", "*", ErrPreconditionFailed},
		{"if-none-match new key", "new", "", "*", nil},
		{"unconditional", "cur", "", "", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			l, _ := newTestLayer(t)
			cur := put(t, l, "cur", []byte("current version"))
			data := randBytes(7, 300)
			id, part := newUpload(t, l, c.key, data)
			ifMatch := c.ifMatch
			if ifMatch == "ETAG" {
				ifMatch = cur.ETag
			}
			_, err := l.CompleteMultipart(ctx, testBucket, c.key, id, []CompletePart{part},
				CompleteOptions{IfMatch: ifMatch, IfNoneMatch: c.ifNoneMatch})
			if c.want == nil {
				if err != nil {
					t.Fatal(err)
				}
				mustGet(t, l, c.key, data)
				return
			}
			wantErr(t, err, c.want)
			// Refused: the key is as it was and the upload can still complete.
			if c.key == "cur" {
				mustGet(t, l, "cur", []byte("current version"))
			}
			if _, err := l.ListParts(ctx, testBucket, c.key, id, 0, 0); err != nil {
				t.Fatalf("upload gone after a refused complete: %v", err)
			}
		})
	}
}

func TestCompleteMultipartObjectSize(t *testing.T) {
	l, _ := newTestLayer(t)
	ctx := context.Background()
	big, last := randBytes(1, testMinPart), randBytes(2, 33)
	id, err := l.NewMultipart(ctx, testBucket, "mp", PutOptions{})
	if err != nil {
		t.Fatal(err)
	}
	parts := []CompletePart{
		{Number: 1, ETag: putPart(t, l, "mp", id, 1, big).ETag},
		{Number: 2, ETag: putPart(t, l, "mp", id, 2, last).ETag},
	}
	total := int64(len(big) + len(last))
	for _, stated := range []int64{0, total - 1, total + 1} {
		_, err := l.CompleteMultipart(ctx, testBucket, "mp", id, parts, CompleteOptions{ObjectSize: &stated})
		var se *SizeMismatchError
		if !errors.As(err, &se) || !errors.Is(err, ErrInvalidObjectSize) || se.Stated != stated || se.Computed != total {
			t.Fatalf("stated %d: err %v, want a size mismatch against %d", stated, err, total)
		}
	}
	if _, err := l.HeadObject(ctx, testBucket, "mp"); !errors.Is(err, ErrObjectNotFound) {
		t.Fatalf("a refused complete committed the object: %v", err)
	}
	info, err := l.CompleteMultipart(ctx, testBucket, "mp", id, parts, CompleteOptions{ObjectSize: &total})
	if err != nil || info.Size != total {
		t.Fatalf("matching size: %+v, %v", info, err)
	}
}

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

func TestAbortMultipartIfInitiated(t *testing.T) {
	now := time.Date(2025, 3, 4, 5, 6, 7, 890_000_000, time.UTC)
	l, _ := newTestLayer(t, func(c *Config) { c.Now = func() time.Time { return now } })
	ctx := context.Background()
	id, _ := newUpload(t, l, "mp", []byte("x"))
	for _, at := range []time.Time{now.Add(-time.Second), now.Add(time.Second), now.AddDate(-1, 0, 1)} {
		err := l.AbortMultipart(ctx, testBucket, "mp", id, AbortOptions{IfInitiated: at})
		wantErr(t, err, ErrPreconditionFailed)
	}
	if _, err := l.ListParts(ctx, testBucket, "mp", id, 0, 0); err != nil {
		t.Fatalf("refused abort removed the upload: %v", err)
	}
	// HTTP dates carry whole seconds: the initiation time to the second matches.
	if err := l.AbortMultipart(ctx, testBucket, "mp", id, AbortOptions{IfInitiated: now.Truncate(time.Second)}); err != nil {
		t.Fatal(err)
	}
	_, err := l.ListParts(ctx, testBucket, "mp", id, 0, 0)
	wantErr(t, err, ErrUploadNotFound)
	err = l.AbortMultipart(ctx, testBucket, "mp", id, AbortOptions{IfInitiated: now})
	wantErr(t, err, ErrUploadNotFound)
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

// TestConditionsOnCurrent: a versioned bucket's write goes to a new key
// while the gateway names the current version; the conditions of a PUT
// and of a complete are evaluated against what it names, not the key
// written.
func TestConditionsOnCurrent(t *testing.T) {
	ctx := context.Background()
	errView := errors.New("listing failed")
	named := func(etag string, exists bool, err error) CurrentFunc {
		return func(context.Context) (Current, bool, error) {
			return Current{ETag: etag, Stored: "put@v1"}, exists, err
		}
	}
	cases := []struct {
		name                 string
		current              CurrentFunc
		ifMatch, ifNoneMatch string
		ifStored             string // PUT only: a complete has no such condition
		want                 error  // nil: committed
	}{
		{"if-none-match, a current version", named("e1", true, nil), "", "*", "", ErrPreconditionFailed},
		{"if-none-match, a delete marker", named("", false, nil), "", "*", "", nil},
		{"if-match, its ETag", named("e1", true, nil), "e1", "", "", nil},
		{"if-match, another ETag", named("e1", true, nil), "e2", "", "", ErrPreconditionFailed},
		{"if-match, a delete marker", named("", false, nil), "e1", "", "", ErrObjectNotFound},
		{"the view fails", named("", false, errView), "", "*", "", errView},
		{"if-stored, its key", named("e1", true, nil), "e1", "", "put@v1", nil},
		{"if-stored, the same ETag under a newer key", named("e1", true, nil), "e1", "", "put@v0", ErrPreconditionFailed},
		{"if-stored alone, a newer key", named("e1", true, nil), "", "", "put@v0", ErrPreconditionFailed},
		{"if-stored, a delete marker", named("", false, nil), "", "", "put@v1", ErrObjectNotFound},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			l, _ := newTestLayer(t)
			data := randBytes(3, 200)
			_, err := l.PutObject(ctx, testBucket, "put", bytes.NewReader(data), int64(len(data)),
				PutOptions{IfMatch: c.ifMatch, IfNoneMatch: c.ifNoneMatch, IfStored: c.ifStored, Current: c.current})
			id, part := newUpload(t, l, "mp", data)
			_, mpErr := l.CompleteMultipart(ctx, testBucket, "mp", id, []CompletePart{part},
				CompleteOptions{IfMatch: c.ifMatch, IfNoneMatch: c.ifNoneMatch, Current: c.current})
			results := map[string]error{"put": err, "mp": mpErr}
			if c.ifStored != "" {
				delete(results, "mp")
			}
			for op, err := range results {
				if c.want == nil {
					if err != nil {
						t.Fatalf("%s: %v", op, err)
					}
					mustGet(t, l, op, data)
					continue
				}
				if !errors.Is(err, c.want) {
					t.Fatalf("%s: %v, want %v", op, err, c.want)
				}
			}
		})
	}
}
