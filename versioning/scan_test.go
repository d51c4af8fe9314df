package versioning

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"tessera/meta"
	"tessera/object"
)

// pagedLister lists sorted keys two at a time, folding on the delimiter
// as the peers do.
type pagedLister []string

func (l pagedLister) ListObjects(_ context.Context, _ string, opts object.ListOptions) (object.ListResult, error) {
	var res object.ListResult
	for _, k := range l {
		if k <= opts.After || !strings.HasPrefix(k, opts.Prefix) {
			continue
		}
		if len(res.Objects)+len(res.Prefixes) == 2 {
			res.IsTruncated = true
			return res, nil
		}
		if i := strings.Index(k[len(opts.Prefix):], opts.Delimiter); opts.Delimiter != "" && i >= 0 {
			p := k[:len(opts.Prefix)+i+len(opts.Delimiter)]
			if len(res.Prefixes) == 0 || res.Prefixes[len(res.Prefixes)-1] != p {
				res.Prefixes = append(res.Prefixes, p)
			}
			res.NextAfter = p + "\xff"
			continue
		}
		res.Objects = append(res.Objects, object.ObjectInfo{Key: k, ModTime: time.Unix(1, 0)})
		res.NextAfter = k
	}
	return res, nil
}

func TestScanGroupsAcrossPages(t *testing.T) {
	v := func(key string, n int64) string { return meta.VersionKey(key, meta.NewVersionID(n)) }
	keys := []string{"a", v("a", 3), v("a", 2), v("a", 1), "b/c", v("b/d", 1), "ca", v("cb", 5)}
	slices.Sort(keys)
	cases := []struct {
		delimiter, after string
		want             string
	}{
		{"", "", "a:4 b/c:1 b/d:1 ca:1 cb:1"},
		{"/", "", "a:4 b/ ca:1 cb:1"},
		{"a", "", "a b/c:1 b/d:1 ca cb:1"}, // a hex digit: the scan folds itself
		{"", "a", "b/c:1 b/d:1 ca:1 cb:1"},
	}
	for _, tc := range cases {
		var got []string
		err := Scan{Bucket: "bkt", Delimiter: tc.delimiter, After: tc.after}.Run(context.Background(), pagedLister(keys), func(g Group) bool {
			if g.Prefix != "" {
				got = append(got, g.Prefix)
			} else {
				got = append(got, fmt.Sprintf("%s:%d", g.Key, len(g.Stored)))
			}
			return true
		})
		if err != nil || strings.Join(got, " ") != tc.want {
			t.Errorf("delimiter %q after %q: %q, %v; want %q", tc.delimiter, tc.after, got, err, tc.want)
		}
	}
}
