package lifecycle

import (
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"tessera/meta"
	"tessera/object"
	"tessera/objectlock"
	"tessera/versioning"
)

// fakeStore holds one bucket's objects and uploads in memory.
type fakeStore struct {
	mu     sync.Mutex
	config []byte
	// versioning is the bucket's stored versioning setting, if any.
	versioning []byte
	objects    map[string]object.ObjectInfo
	uploads    []object.UploadInfo
	// beforeDelete runs inside DeleteObjectWith before the check, and
	// beforePut inside PutObject before its condition: a write racing
	// the worker.
	beforeDelete, beforePut func(key string)
	// refuse is what DeleteObjectWith answers after the check passes: the
	// peers' refusal of a version locked since it was read.
	refuse error
	// versionAt is the write time of what PutObject stores; versionID is
	// the ID NewVersionID gives.
	versionAt time.Time
	versionID string
}

func (f *fakeStore) HeadObject(_ context.Context, _, key string) (object.ObjectInfo, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	o, ok := f.objects[key]
	if !ok {
		return object.ObjectInfo{}, object.ErrObjectNotFound
	}
	return o, nil
}

// PutObject honours IfMatch and IfStored against opts.Current, as the
// object layer does right before its commit.
func (f *fakeStore) PutObject(ctx context.Context, _, key string, _ io.Reader, size int64, opts object.PutOptions) (object.ObjectInfo, error) {
	if f.beforePut != nil {
		f.beforePut(key)
	}
	if opts.IfMatch != "" && opts.Current != nil {
		cur, ok, err := opts.Current(ctx)
		switch {
		case err != nil:
			return object.ObjectInfo{}, err
		case !ok:
			return object.ObjectInfo{}, object.ErrObjectNotFound
		case cur.ETag != opts.IfMatch, opts.IfStored != "" && cur.Stored != opts.IfStored:
			return object.ObjectInfo{}, object.ErrPreconditionFailed
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	o := object.ObjectInfo{Key: key, Size: size, ModTime: f.versionAt, DeleteMarker: opts.DeleteMarker}
	f.objects[key] = o
	return o, nil
}

func (f *fakeStore) NewVersionID() string { return f.versionID }

func (f *fakeStore) ListBuckets(context.Context) ([]object.BucketInfo, error) {
	return []object.BucketInfo{{Name: "bkt"}, {Name: "norules"}}, nil
}

func (f *fakeStore) GetBucketConfig(_ context.Context, bucket, name string) ([]byte, error) {
	if bucket == "bkt" && name == versioning.ConfigName && f.versioning != nil {
		return f.versioning, nil
	}
	if bucket != "bkt" || name != ConfigName || f.config == nil {
		return nil, object.ErrNoBucketConfig
	}
	return f.config, nil
}

func (f *fakeStore) ListObjects(_ context.Context, _ string, opts object.ListOptions) (object.ListResult, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var keys []string
	for k := range f.objects {
		if k > opts.After && strings.HasPrefix(k, opts.Prefix) {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	var res object.ListResult
	for _, k := range keys {
		if len(res.Objects) == 2 { // small pages, so paging is exercised
			res.IsTruncated = true
			break
		}
		res.Objects = append(res.Objects, f.objects[k])
		res.NextAfter = k
	}
	return res, nil
}

func (f *fakeStore) DeleteObjectWith(_ context.Context, _, key string, opts object.DeleteOptions) error {
	if f.beforeDelete != nil {
		f.beforeDelete(key)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	var cur *object.ObjectInfo
	if o, ok := f.objects[key]; ok {
		cur = &o
	}
	if err := opts.Check(cur); err != nil {
		return err
	}
	if f.refuse != nil {
		return f.refuse
	}
	delete(f.objects, key)
	return nil
}

func (f *fakeStore) ListUploads(context.Context, string, object.ListUploadsOptions) (object.ListUploadsResult, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return object.ListUploadsResult{Uploads: slices.Clone(f.uploads)}, nil
}

func (f *fakeStore) AbortMultipart(_ context.Context, _, key, id string, _ object.AbortOptions) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.uploads = slices.DeleteFunc(f.uploads, func(u object.UploadInfo) bool { return u.Key == key && u.UploadID == id })
	return nil
}

func (f *fakeStore) keys() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for k := range f.objects {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func TestWorkerPass(t *testing.T) {
	now := time.Date(2026, 12, 10, 12, 0, 0, 0, time.UTC)
	old, fresh := now.Add(-72*time.Hour), now.Add(-time.Hour)
	tagged := map[string]string{"X-Tessera-Tagging": "tmp=yes"}
	f := &fakeStore{
		config: []byte(rules(
			`<Rule><Status>Enabled</Status><Filter><Prefix>logs/</Prefix></Filter><Expiration><Days>1</Days></Expiration></Rule>`,
			`<Rule><Status>Enabled</Status><Filter><Tag><Key>tmp</Key><Value>yes</Value></Tag></Filter><Expiration><Days>1</Days></Expiration></Rule>`,
			`<Rule><Status>Enabled</Status><Filter><Prefix>up/</Prefix></Filter><AbortIncompleteMultipartUpload><DaysAfterInitiation>2</DaysAfterInitiation></AbortIncompleteMultipartUpload></Rule>`,
		)),
		objects: map[string]object.ObjectInfo{
			"logs/old1":   {Key: "logs/old1", ModTime: old},
			"logs/old2":   {Key: "logs/old2", ModTime: old},
			"logs/old3":   {Key: "logs/old3", ModTime: old},
			"logs/fresh":  {Key: "logs/fresh", ModTime: fresh},
			"logs/redone": {Key: "logs/redone", ModTime: old},
			"keep/old":    {Key: "keep/old", ModTime: old},
			"tmp/tagged":  {Key: "tmp/tagged", ModTime: old, Headers: tagged},
			"tmp/plain":   {Key: "tmp/plain", ModTime: old},
		},
		uploads: []object.UploadInfo{
			{Key: "up/old", UploadID: "u1", Initiated: old},
			{Key: "up/fresh", UploadID: "u2", Initiated: fresh},
			{Key: "other/old", UploadID: "u3", Initiated: old},
		},
	}
	// logs/redone is rewritten between the listing and its delete.
	f.beforeDelete = func(key string) {
		if key == "logs/redone" {
			f.mu.Lock()
			f.objects[key] = object.ObjectInfo{Key: key, ModTime: now}
			f.mu.Unlock()
		}
	}
	w := New(Config{Store: f, Now: func() time.Time { return now }, Rate: 1e6,
		TagsOf: func(o object.ObjectInfo) map[string]string {
			if o.Headers["X-Tessera-Tagging"] == "tmp=yes" {
				return map[string]string{"tmp": "yes"}
			}
			return nil
		}})
	if err := w.Pass(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got, want := f.keys(), []string{"keep/old", "logs/fresh", "logs/redone", "tmp/plain"}; !slices.Equal(got, want) {
		t.Fatalf("left %q, want %q", got, want)
	}
	var ups []string
	for _, u := range f.uploads {
		ups = append(ups, u.Key)
	}
	if want := []string{"up/fresh", "other/old"}; !slices.Equal(ups, want) {
		t.Fatalf("uploads left %q, want %q", ups, want)
	}
	st := w.Stats()
	if st.Expired != 4 || st.Aborted != 1 || st.Passes != 1 || st.Errors != 0 || !st.LastPass.Equal(now) {
		t.Fatalf("stats %+v", st)
	}
	// A second pass, or another worker's, finds nothing more to do.
	if err := w.Pass(context.Background()); err != nil {
		t.Fatal(err)
	}
	if st := w.Stats(); st.Expired != 4 || st.Aborted != 1 {
		t.Fatalf("second pass did more: %+v", st)
	}
}

// A bucket the worker does not own is left alone.
func TestWorkerOwns(t *testing.T) {
	f := &fakeStore{
		config:  []byte(rules(`<Rule><Status>Enabled</Status><Expiration><Days>1</Days></Expiration></Rule>`)),
		objects: map[string]object.ObjectInfo{"a": {Key: "a", ModTime: time.Unix(0, 0)}},
	}
	w := New(Config{Store: f, Owns: func(b string) bool { return b != "bkt" }})
	if err := w.Pass(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(f.keys()) != 1 {
		t.Fatal("a worker expired objects of a bucket it does not own")
	}
}

// In a versioned bucket an expiry makes a delete marker the current
// version, a marker that is a key's only version goes, and noncurrent
// versions go past their days and beyond the newest ones kept, unless
// object lock holds them; uploads are aborted as in any bucket.
func TestWorkerVersionedBucket(t *testing.T) {
	now := time.Date(2026, 12, 10, 12, 0, 0, 0, time.UTC)
	old := now.Add(-240 * time.Hour)
	at := func(h int) time.Time { return old.Add(time.Duration(h) * time.Hour) }
	vk := func(key string, t time.Time) string { return meta.VersionKey(key, meta.NewVersionID(t.UnixNano())) }
	hold := map[string]string{objectlock.LegalHoldHeader: "ON"}
	objs := map[string]object.ObjectInfo{}
	add := func(k string, t time.Time, marker bool, headers map[string]string) string {
		objs[k] = object.ObjectInfo{Key: k, ModTime: t, DeleteMarker: marker, Headers: headers}
		return k
	}
	a3, a2, a1 := add(vk("a", at(3)), at(3), false, nil), add(vk("a", at(2)), at(2), false, nil), add(vk("a", at(1)), at(1), false, nil)
	m := add(vk("m/gone", at(1)), at(1), true, nil)
	l2, l1 := add(vk("locked", at(2)), at(2), true, nil), add(vk("locked", at(1)), at(1), false, hold)
	for _, st := range []string{"Enabled", "Suspended"} {
		f := &fakeStore{
			config: []byte(rules(
				`<Rule><ID>x</ID><Status>Enabled</Status><Filter><Prefix>a</Prefix></Filter><Expiration><Days>1</Days></Expiration></Rule>`,
				`<Rule><ID>n</ID><Status>Enabled</Status><Filter></Filter><NoncurrentVersionExpiration><NoncurrentDays>1</NoncurrentDays><NewerNoncurrentVersions>1</NewerNoncurrentVersions></NoncurrentVersionExpiration></Rule>`,
				`<Rule><ID>m</ID><Status>Enabled</Status><Filter><Prefix>m/</Prefix></Filter><Expiration><ExpiredObjectDeleteMarker>true</ExpiredObjectDeleteMarker></Expiration></Rule>`,
				`<Rule><ID>u</ID><Status>Enabled</Status><Filter></Filter><AbortIncompleteMultipartUpload><DaysAfterInitiation>1</DaysAfterInitiation></AbortIncompleteMultipartUpload></Rule>`)),
			versioning: []byte(`<VersioningConfiguration><Status>` + st + `</Status></VersioningConfiguration>`),
			objects:    maps.Clone(objs),
			uploads:    []object.UploadInfo{{Key: "up", UploadID: "u1", Initiated: old}},
			versionAt:  now,
			versionID:  meta.NewVersionID(now.UnixNano()),
		}
		w := New(Config{Store: f, Now: func() time.Time { return now }, Rate: 1e6})
		if err := w.Pass(context.Background()); err != nil {
			t.Fatal(err)
		}
		marker := meta.VersionKey("a", f.versionID)
		if st == "Suspended" {
			marker = "a"
		}
		// a1 is the second noncurrent version (a2 is newer), so it goes;
		// locked's noncurrent version is under a legal hold.
		want := []string{"a", a3, a2, l2, l1}
		if st == "Enabled" {
			want[0] = marker
		}
		slices.Sort(want)
		if got := f.keys(); !slices.Equal(got, want) {
			t.Errorf("%s: left %q, want %q", st, got, want)
		}
		if !f.objects[marker].DeleteMarker {
			t.Errorf("%s: no delete marker at %q", st, marker)
		}
		if _, ok := f.objects[a1]; ok {
			t.Errorf("%s: noncurrent %s kept", st, a1)
		}
		if _, ok := f.objects[m]; ok {
			t.Errorf("%s: lone expired marker kept", st)
		}
		if len(f.uploads) != 0 {
			t.Errorf("%s: uploads %v", st, f.uploads)
		}
		if s := w.Stats(); s.Expired != 1 || s.Noncurrent != 2 || s.Errors != 0 {
			t.Errorf("%s: stats %+v", st, s)
		}
	}
}

// A version locked after the worker read it is refused by the peers as
// the tombstone is written; the worker keeps it as one not due, with no
// error counted.
func TestWorkerLockedSinceTheCheck(t *testing.T) {
	now := time.Date(2026, 12, 10, 12, 0, 0, 0, time.UTC)
	old := now.Add(-240 * time.Hour)
	vk := func(t time.Time) string { return meta.VersionKey("a", meta.NewVersionID(t.UnixNano())) }
	cur, prev := vk(old.Add(time.Hour)), vk(old)
	f := &fakeStore{
		config:     []byte(rules(`<Rule><ID>n</ID><Status>Enabled</Status><Filter></Filter><NoncurrentVersionExpiration><NoncurrentDays>1</NoncurrentDays></NoncurrentVersionExpiration></Rule>`)),
		versioning: []byte(`<VersioningConfiguration><Status>Enabled</Status></VersioningConfiguration>`),
		objects: map[string]object.ObjectInfo{
			cur:  {Key: cur, ModTime: old.Add(time.Hour)},
			prev: {Key: prev, ModTime: old},
		},
		refuse: fmt.Errorf("delete: %w", meta.ErrObjectLocked),
	}
	w := New(Config{Store: f, Now: func() time.Time { return now }, Rate: 1e6})
	if err := w.Pass(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, ok := f.objects[prev]; !ok {
		t.Fatal("the refused version is gone")
	}
	if s := w.Stats(); s.Noncurrent != 0 || s.Errors != 0 {
		t.Fatalf("stats %+v, want nothing removed and no error", s)
	}
	f.refuse = nil
	if err := w.Pass(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, ok := f.objects[prev]; ok || w.Stats().Noncurrent != 1 {
		t.Fatalf("without the refusal the version stays: stats %+v", w.Stats())
	}
}

// An expiry's delete marker commits only while the version the scan
// found is still the latest: a version written after the scan (even with
// the same bytes and ETag) stays current, and a marker another worker
// wrote first is not doubled.
func TestWorkerMarkerRaces(t *testing.T) {
	now := time.Date(2026, 12, 10, 12, 0, 0, 0, time.UTC)
	old := now.Add(-240 * time.Hour)
	vk := func(t time.Time) string { return meta.VersionKey("a", meta.NewVersionID(t.UnixNano())) }
	scanned, racing := vk(old), vk(now.Add(-time.Minute))
	cases := []struct {
		name       string
		race       *object.ObjectInfo // written between the scan and the marker
		wantMarker bool
	}{
		{"no race", nil, true},
		{"a newer version with the same ETag", &object.ObjectInfo{Key: racing, ModTime: now, ETag: "e"}, false},
		{"another worker's marker", &object.ObjectInfo{Key: racing, ModTime: now, DeleteMarker: true}, false},
	}
	for _, c := range cases {
		f := &fakeStore{
			config:     []byte(rules(`<Rule><ID>x</ID><Status>Enabled</Status><Filter><Prefix>a</Prefix></Filter><Expiration><Days>1</Days></Expiration></Rule>`)),
			versioning: []byte(`<VersioningConfiguration><Status>Enabled</Status></VersioningConfiguration>`),
			objects:    map[string]object.ObjectInfo{scanned: {Key: scanned, ModTime: old, ETag: "e"}},
			versionAt:  now,
			versionID:  meta.NewVersionID(now.UnixNano()),
		}
		if c.race != nil {
			f.beforePut = func(string) {
				f.mu.Lock()
				defer f.mu.Unlock()
				f.objects[c.race.Key] = *c.race
			}
		}
		w := New(Config{Store: f, Now: func() time.Time { return now }, Rate: 1e6})
		if err := w.Pass(context.Background()); err != nil {
			t.Fatal(err)
		}
		marker := meta.VersionKey("a", f.versionID)
		if _, got := f.objects[marker]; got != c.wantMarker {
			t.Errorf("%s: marker written %v, want %v", c.name, got, c.wantMarker)
		}
		if _, ok := f.objects[scanned]; !ok {
			t.Errorf("%s: the expired version itself was removed", c.name)
		}
		if s := w.Stats(); s.Errors != 0 || (s.Expired == 1) != c.wantMarker {
			t.Errorf("%s: stats %+v", c.name, s)
		}
	}
}
