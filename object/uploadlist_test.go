package object

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

// steppingClock advances a second per reading, so uploads made one after
// another have distinct, ordered initiation times.
func steppingClock() func() time.Time {
	var mu sync.Mutex
	t := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	return func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		t = t.Add(time.Second)
		return t
	}
}

// TestListUploadsMarkers pages ListMultipartUploads as S3 defines it:
// uploads by key, a key's uploads by initiation time (not by ID, which is
// random), key-marker alone skipping the whole key, key-marker with
// upload-id-marker resuming inside it, upload-id-marker alone ignored;
// and, where S3 is not consistent, as versitygw: a key-marker without
// uploads with an upload of the next key resumes after that upload, and
// a page ending on a common prefix names the upload that produced it.
func TestListUploadsMarkers(t *testing.T) {
	l, _ := newTestLayer(t, func(c *Config) { c.Now = steppingClock() })
	ctx := context.Background()
	// Created out of key order; labels are key#n in creation order.
	ids := map[string]string{}
	labels := map[string]string{}
	counts := map[string]int{}
	for _, k := range []string{"c", "a", "b/1", "a", "c", "b/2", "a", "d/x/1"} {
		id, err := l.NewMultipart(ctx, testBucket, k, PutOptions{})
		if err != nil {
			t.Fatal(err)
		}
		label := fmt.Sprintf("%s#%d", k, counts[k])
		counts[k]++
		ids[label], labels[id] = id, label
	}
	render := func(r ListUploadsResult) string {
		var s []string
		for _, u := range r.Uploads {
			s = append(s, labels[u.UploadID])
		}
		next := r.NextKeyMarker
		if r.NextUploadIDMarker != "" {
			next += " " + labels[r.NextUploadIDMarker]
		}
		return fmt.Sprintf("%s|%s|%v|%s", strings.Join(s, ","), strings.Join(r.Prefixes, ","), r.IsTruncated, next)
	}
	all := "a#0,a#1,a#2,b/1#0,b/2#0,c#0,c#1,d/x/1#0||false|"
	cases := []struct {
		name string
		opts ListUploadsOptions
		want string
		err  error
	}{
		{"all, by key then initiation", ListUploadsOptions{}, all, nil},
		{"upload-id-marker alone is ignored", ListUploadsOptions{UploadIDMarker: ids["a#1"]}, all, nil},
		{"key-marker skips the key", ListUploadsOptions{KeyMarker: "a"}, "b/1#0,b/2#0,c#0,c#1,d/x/1#0||false|", nil},
		{"key-marker between keys", ListUploadsOptions{KeyMarker: "b"}, "b/1#0,b/2#0,c#0,c#1,d/x/1#0||false|", nil},
		{"both markers resume inside the key", ListUploadsOptions{KeyMarker: "a", UploadIDMarker: ids["a#0"]},
			"a#1,a#2,b/1#0,b/2#0,c#0,c#1,d/x/1#0||false|", nil},
		{"both markers at the key's last upload", ListUploadsOptions{KeyMarker: "a", UploadIDMarker: ids["a#2"]},
			"b/1#0,b/2#0,c#0,c#1,d/x/1#0||false|", nil},
		{"marker upload of another key", ListUploadsOptions{KeyMarker: "a", UploadIDMarker: ids["c#0"]}, "", ErrUploadIDMarker},
		{"unknown marker upload", ListUploadsOptions{KeyMarker: "c", UploadIDMarker: "NOSUCHUPLOAD"}, "", ErrUploadIDMarker},
		{"marker key without uploads, an upload of the next key", ListUploadsOptions{KeyMarker: "bz", UploadIDMarker: ids["c#0"]},
			"c#1,d/x/1#0||false|", nil},
		{"marker key without uploads, an upload of a later key", ListUploadsOptions{KeyMarker: "bz", UploadIDMarker: ids["d/x/1#0"]},
			"c#0,c#1,d/x/1#0||false|", nil},
		{"marker key without uploads, unknown upload", ListUploadsOptions{KeyMarker: "bz", UploadIDMarker: "NOSUCHUPLOAD"},
			"c#0,c#1,d/x/1#0||false|", nil},
		{"truncated page", ListUploadsOptions{MaxUploads: 2}, "a#0,a#1||true|a a#1", nil},
		{"delimiter", ListUploadsOptions{Delimiter: "/"}, "a#0,a#1,a#2,c#0,c#1|b/,d/|false|", nil},
		{"delimiter, truncated on a prefix", ListUploadsOptions{Delimiter: "/", MaxUploads: 4}, "a#0,a#1,a#2|b/|true|b/ b/1#0", nil},
		{"delimiter after a prefix marker", ListUploadsOptions{Delimiter: "/", KeyMarker: "b/"}, "c#0,c#1|d/|false|", nil},
		{"delimiter after a prefix and its upload", ListUploadsOptions{Delimiter: "/", KeyMarker: "b/", UploadIDMarker: ids["b/1#0"]},
			"c#0,c#1|b/,d/|false|", nil},
		{"delimiter after a prefix's last upload", ListUploadsOptions{Delimiter: "/", KeyMarker: "b/", UploadIDMarker: ids["b/2#0"]},
			"c#0,c#1|d/|false|", nil},
		{"prefix and delimiter", ListUploadsOptions{Prefix: "d/", Delimiter: "/"}, "|d/x/|false|", nil},
		{"prefix", ListUploadsOptions{Prefix: "b/"}, "b/1#0,b/2#0||false|", nil},
	}
	for _, c := range cases {
		res, err := l.ListUploads(ctx, testBucket, c.opts)
		if c.err != nil {
			if !errors.Is(err, c.err) {
				t.Errorf("%s: err %v, want %v", c.name, err, c.err)
			}
			continue
		}
		if err != nil || render(res) != c.want {
			t.Errorf("%s: %q (%v), want %q", c.name, render(res), err, c.want)
		}
	}
}

// TestListUploadsPaging walks every page size with the markers each page
// returns and must see every upload once, in order; with a delimiter,
// every common prefix in order, a prefix split by a page boundary listed
// on both pages.
func TestListUploadsPaging(t *testing.T) {
	l, _ := newTestLayer(t, func(c *Config) { c.Now = steppingClock() })
	ctx := context.Background()
	for _, k := range []string{"k2", "k1", "k2", "k1", "k3", "k2", "p/1", "p/2", "p/1", "q/1"} {
		if _, err := l.NewMultipart(ctx, testBucket, k, PutOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for _, delim := range []string{"", "/"} {
		full, err := l.ListUploads(ctx, testBucket, ListUploadsOptions{Delimiter: delim})
		if err != nil {
			t.Fatal(err)
		}
		var want []string
		for _, u := range full.Uploads {
			want = append(want, u.UploadID)
		}
		want = append(want, full.Prefixes...)
		for size := 1; size <= len(want); size++ {
			var ids, prefixes []string
			opts := ListUploadsOptions{MaxUploads: size, Delimiter: delim}
			for range 20 {
				page, err := l.ListUploads(ctx, testBucket, opts)
				if err != nil {
					t.Fatalf("size %d: %v", size, err)
				}
				for _, u := range page.Uploads {
					ids = append(ids, u.UploadID)
				}
				for _, p := range page.Prefixes {
					if len(prefixes) == 0 || prefixes[len(prefixes)-1] != p {
						prefixes = append(prefixes, p)
					}
				}
				if !page.IsTruncated {
					break
				}
				opts.KeyMarker, opts.UploadIDMarker = page.NextKeyMarker, page.NextUploadIDMarker
			}
			if got := strings.Join(append(ids, prefixes...), ","); got != strings.Join(want, ",") {
				t.Errorf("delimiter %q size %d: pages gave %v, want %v", delim, size, got, want)
			}
		}
	}
}
