package object

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"reflect"
	"sort"
	"strings"
	"testing"

	"tessera/checksum"
	"tessera/meta"
)

// modelList is the specification of a listing: the sorted items (live keys
// under prefix without a delimiter after it, and distinct common
// prefixes), those after opts.After, at most MaxKeys of them.
func modelList(live map[string][]byte, opts ListOptions) ListResult {
	seen := map[string]bool{}
	type item struct {
		v      string
		prefix bool
	}
	var items []item
	for k := range live {
		if !strings.HasPrefix(k, opts.Prefix) {
			continue
		}
		it := item{v: k}
		if opts.Delimiter != "" {
			if i := strings.Index(k[len(opts.Prefix):], opts.Delimiter); i >= 0 {
				it = item{v: k[:len(opts.Prefix)+i+len(opts.Delimiter)], prefix: true}
			}
		}
		if !seen[it.v] && it.v > opts.After {
			seen[it.v] = true
			items = append(items, it)
		}
	}
	sort.Slice(items, func(i, j int) bool { return items[i].v < items[j].v })
	limit := opts.MaxKeys
	if limit < 0 || limit > DefaultMaxKeys {
		limit = DefaultMaxKeys
	}
	var res ListResult
	if limit == 0 {
		return res
	}
	for i, it := range items {
		if i == limit {
			res.IsTruncated = true
			break
		}
		if it.prefix {
			res.Prefixes = append(res.Prefixes, it.v)
		} else {
			res.Objects = append(res.Objects, ObjectInfo{Key: it.v, Size: int64(len(live[it.v]))})
		}
		res.NextAfter = it.v
	}
	return res
}

// shape reduces a result to what the model predicts.
func shape(r ListResult) ListResult {
	out := ListResult{Prefixes: r.Prefixes, IsTruncated: r.IsTruncated, NextAfter: r.NextAfter}
	for _, o := range r.Objects {
		out.Objects = append(out.Objects, ObjectInfo{Key: o.Key, Size: o.Size})
	}
	return out
}

func randKey(r *rand.Rand) string {
	const alphabet = "ab/c"
	n := 1 + r.IntN(5)
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[r.IntN(len(alphabet))]
	}
	return string(b)
}

// buildListState writes and deletes random keys through l, with a random
// peer down during some operations so that peers disagree, and returns
// the live keys with their contents.
func buildListState(t *testing.T, l *Layer, fc *fakeCluster, r *rand.Rand, ops int) map[string][]byte {
	t.Helper()
	live := map[string][]byte{}
	ctx := context.Background()
	for i := range ops {
		if r.IntN(4) == 0 {
			fc.peers[fc.ids[r.IntN(len(fc.ids))]].setFault(faultDown)
		}
		key := randKey(r)
		if r.IntN(3) == 0 {
			if err := l.DeleteObject(ctx, testBucket, key); err != nil {
				t.Fatalf("delete %q: %v", key, err)
			}
			delete(live, key)
		} else {
			data := bytes.Repeat([]byte{'x'}, i%17)
			put(t, l, key, data)
			live[key] = data
		}
		fc.heal()
	}
	return live
}

func randListOptions(r *rand.Rand, live map[string][]byte) ListOptions {
	keys := make([]string, 0, len(live))
	for k := range live {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var o ListOptions
	switch r.IntN(4) {
	case 1:
		o.Prefix = randKey(r)[:1]
	case 2:
		if len(keys) > 0 {
			k := keys[r.IntN(len(keys))]
			o.Prefix = k[:r.IntN(len(k)+1)]
		}
	}
	o.Delimiter = []string{"", "/", "/", "b", "a/"}[r.IntN(5)]
	switch r.IntN(4) {
	case 1:
		o.After = randKey(r)
	case 2:
		if len(keys) > 0 {
			o.After = keys[r.IntN(len(keys))]
		}
	}
	o.MaxKeys = []int{-1, 0, 1, 2, 3, 7, 1000, 5000}[r.IntN(8)]
	return o
}

func TestListMatchesModel(t *testing.T) {
	for seed := range uint64(4) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			r := rand.New(rand.NewPCG(seed, 77))
			l, fc := newTestLayerN(t, 9)
			l.listBatch = 1 + r.IntN(4) // force many refills
			for _, p := range fc.peers {
				p.noFold = r.IntN(3) == 0 // some peers of an earlier release
			}
			live := buildListState(t, l, fc, r, 160)
			for range 150 {
				opts := randListOptions(r, live)
				got, err := l.ListObjects(context.Background(), testBucket, opts)
				if err != nil {
					t.Fatalf("%+v: %v", opts, err)
				}
				if want := modelList(live, opts); !reflect.DeepEqual(shape(got), want) {
					t.Fatalf("%+v:\n got %+v\nwant %+v", opts, shape(got), want)
				}
			}
		})
	}
}

func TestListPaginationCoversEverything(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 5))
	l, fc := newTestLayerN(t, 9)
	l.listBatch = 2
	live := buildListState(t, l, fc, r, 200)
	for _, delim := range []string{"", "/"} {
		for _, pageSize := range []int{1, 3, 10} {
			t.Run(fmt.Sprintf("%q/%d", delim, pageSize), func(t *testing.T) {
				// Two peers down throughout: within the tolerated parity.
				fc.peers["p2"].setFault(faultDown)
				fc.peers["p7"].setFault(faultDown)
				defer fc.heal()
				all := listPages(t, l, ListOptions{Delimiter: delim, MaxKeys: pageSize}, len(live)+1)
				want := modelList(live, ListOptions{Delimiter: delim, MaxKeys: len(live) + 1})
				got := shape(all)
				got.NextAfter, want.NextAfter = "", ""
				if !reflect.DeepEqual(got, want) {
					t.Fatalf("paged:\n got %+v\nwant %+v", got, want)
				}
			})
		}
	}
}

// listPages lists every page from opts on, failing after more than
// maxPages pages, and returns them joined.
func listPages(t *testing.T, l *Layer, opts ListOptions, maxPages int) ListResult {
	t.Helper()
	var all ListResult
	for pages := 0; ; pages++ {
		if pages > maxPages {
			t.Fatal("pagination does not terminate")
		}
		page, err := l.ListObjects(context.Background(), testBucket, opts)
		if err != nil {
			t.Fatal(err)
		}
		all.Objects = append(all.Objects, page.Objects...)
		all.Prefixes = append(all.Prefixes, page.Prefixes...)
		if !page.IsTruncated {
			return all
		}
		opts.After = page.NextAfter
	}
}

func TestListErrors(t *testing.T) {
	l, fc := newTestLayer(t)
	put(t, l, "a", []byte("1"))
	_, err := l.ListObjects(context.Background(), "nope", ListOptions{})
	wantErr(t, err, ErrBucketNotFound)

	for _, id := range []string{"p0", "p3", "p4"} {
		fc.peers[meta.PeerID(id)].setFault(faultDown)
	}
	_, err = l.ListObjects(context.Background(), testBucket, ListOptions{MaxKeys: -1})
	wantErr(t, err, ErrQuorum)
	fc.heal()

	res, err := l.ListObjects(context.Background(), testBucket, ListOptions{MaxKeys: 0})
	if err != nil || len(res.Objects) != 0 || res.IsTruncated {
		t.Fatalf("MaxKeys 0: %+v, %v", res, err)
	}
}

func TestListHidesTombstonesAndShowsInfo(t *testing.T) {
	l, _ := newTestLayer(t)
	put(t, l, "dir/a", []byte("aaa"))
	put(t, l, "dir/b", []byte("bb"))
	put(t, l, "gone/x", []byte("x"))
	if err := l.DeleteObject(context.Background(), testBucket, "gone/x"); err != nil {
		t.Fatal(err)
	}
	res, err := l.ListObjects(context.Background(), testBucket, ListOptions{Delimiter: "/", MaxKeys: -1})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(res.Prefixes, []string{"dir/"}) || len(res.Objects) != 0 {
		t.Fatalf("a prefix of only tombstones showed, or dir/ is missing: %+v", res)
	}
	res, err = l.ListObjects(context.Background(), testBucket, ListOptions{Prefix: "dir/", MaxKeys: 10})
	if err != nil || len(res.Objects) != 2 {
		t.Fatalf("%+v, %v", res, err)
	}
	if o := res.Objects[0]; o.Key != "dir/a" || o.Size != 3 || o.ETag != md5hex([]byte("aaa")) || o.StorageClass != ClassStandard || o.ModTime.IsZero() {
		t.Fatalf("object info %+v", o)
	}
	// S3 lists each object's checksum algorithm and type (here the default
	// every object gets), never its value.
	if c := res.Objects[0].Checksum; c != (ChecksumInfo{Algorithm: checksum.Default, Type: checksum.FullObject}) {
		t.Fatalf("listed checksum %+v", c)
	}
}

// TestListFoldsAtThePeers checks that a delimiter listing costs each peer
// about one entry per common prefix, not one per key.
func TestListFoldsAtThePeers(t *testing.T) {
	l, fc := newTestLayer(t)
	const prefixes, keys = 30, 20
	for d := range prefixes {
		for k := range keys {
			put(t, l, fmt.Sprintf("d%02d/k%02d", d, k), []byte("x"))
		}
	}
	for _, p := range fc.peers {
		p.listed.Store(0)
	}
	res, err := l.ListObjects(context.Background(), testBucket, ListOptions{Delimiter: "/", MaxKeys: -1})
	if err != nil || len(res.Prefixes) != prefixes || len(res.Objects) != 0 {
		t.Fatalf("%d prefixes, %d objects, %v", len(res.Prefixes), len(res.Objects), err)
	}
	for id, p := range fc.peers {
		if n := p.listed.Load(); n > 2*prefixes {
			t.Errorf("peer %s returned %d entries for %d common prefixes of %d keys", id, n, prefixes, prefixes*keys)
		}
	}
}

// TestListFoldResolvesStaleCopies covers the case folding makes hard:
// every peer missed the delete of a different key under one prefix, so
// each holds a stale live copy that is its fold point, and the newer
// tombstones of the later keys sit only on peers that folded before them.
// The prefix shows only if a key under it is live after all.
func TestListFoldResolvesStaleCopies(t *testing.T) {
	for _, tail := range []bool{false, true} {
		t.Run(fmt.Sprint("live key after them: ", tail), func(t *testing.T) {
			l, fc := newTestLayer(t)
			ctx := context.Background()
			for i := range fc.ids {
				put(t, l, fmt.Sprintf("a/%d", i), []byte("1"))
			}
			if tail {
				put(t, l, "a/z-live", []byte("3"))
			}
			put(t, l, "b", []byte("b"))
			for i, down := range fc.ids {
				fc.peers[down].setFault(faultDown)
				if err := l.DeleteObject(ctx, testBucket, fmt.Sprintf("a/%d", i)); err != nil {
					t.Fatal(err)
				}
				fc.heal()
			}
			var want []string
			if tail {
				want = []string{"a/"}
			}
			for _, max := range []int{-1, 1} {
				all := listPages(t, l, ListOptions{Delimiter: "/", MaxKeys: max}, 10)
				if !reflect.DeepEqual(all.Prefixes, want) || len(all.Objects) != 1 || all.Objects[0].Key != "b" {
					t.Fatalf("MaxKeys %d: prefixes %q, objects %+v; want prefixes %q and b", max, all.Prefixes, shape(all).Objects, want)
				}
			}
		})
	}
}
