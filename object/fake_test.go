package object

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"tessera/meta"
	"tessera/storage"
)

var errDown = errors.New("peer down")

// fault is what a fakePeer does wrong.
type fault int

const (
	faultNone        fault = iota
	faultDown              // every call fails at once
	faultCorruptMeta       // records come back damaged (meta.ErrCorrupt)
	faultGarbage           // shard bytes come back flipped
	faultHang              // every call blocks until its ctx ends
	faultHangRead          // shard streams open, then never deliver
	faultFailCommit        // metadata writes fail; reads still work
	faultRefuse            // every call is refused as malformed
	faultFull              // stages and commits are refused for lack of space
	faultStallReply        // stages and commits take every byte, then never answer
)

// fakePeer is an in-memory storage peer honouring the ShardClient
// contract: staged files become visible only on commit, older stamps are
// refused with meta.ErrStale, records go through the real codec.
type fakePeer struct {
	id meta.PeerID

	mu      sync.Mutex
	fault   fault
	delay   time.Duration
	buckets map[string]meta.Bucket
	records map[string][]byte   // bucket/key → encoded record
	kept    map[string][][]byte // bucket/key → replaced records not yet settled, newest first
	entries map[string]meta.Entry
	keys    map[string][]string // bucket → sorted keys with a record
	shards  map[string][]byte   // bucket/key/stamp/part → shard file
	tmp     map[string][]byte
	uploads map[string]*fakeUpload // bucket/key/uploadID
	nextTmp int
	// refuseUploads makes DeleteBucket refuse while the bucket holds an
	// upload, as peers did before a delete took uploads with the bucket.
	refuseUploads bool
	// onShard, when set, runs as each ReadShard starts (set before use).
	onShard func()
	// plainStale makes stale refusals not name the held stamp, as peers
	// did before they did (set before use).
	plainStale bool
	// noFold makes List ignore a delimiter, as peers did before listings
	// folded (set before use).
	noFold bool
	// beforeBatch, if set, runs as CommitTombstones starts; an error
	// from it is the call's (set before use).
	beforeBatch func(ctx context.Context) error
	listed      atomic.Int64 // entries List returned

	calls    atomic.Int64 // every call made, whatever it did
	stages   atomic.Int64
	commits  atomic.Int64 // records committed, batched ones included
	batches  atomic.Int64 // CommitTombstones calls
	rewrites atomic.Int64
	reads    atomic.Int64
	metas    atomic.Int64 // ReadMeta and ReadVersions calls
	settles  atomic.Int64
	tagged   atomic.Int64 // shard reads whose ctx carried a read priority
}

type fakeUpload struct {
	u     meta.Upload
	parts map[int]fakePart
}

type fakePart struct {
	p    meta.Part
	data []byte
}

func newFakePeer(id meta.PeerID) *fakePeer {
	return &fakePeer{
		id: id, buckets: map[string]meta.Bucket{}, records: map[string][]byte{}, kept: map[string][][]byte{},
		entries: map[string]meta.Entry{}, keys: map[string][]string{},
		shards: map[string][]byte{}, tmp: map[string][]byte{}, uploads: map[string]*fakeUpload{},
	}
}

func (p *fakePeer) setFault(f fault) {
	p.mu.Lock()
	p.fault = f
	p.mu.Unlock()
}

func (p *fakePeer) setDelay(d time.Duration) {
	p.mu.Lock()
	p.delay = d
	p.mu.Unlock()
}

// enter applies the peer's fault before a call.
func (p *fakePeer) enter(ctx context.Context) (fault, error) {
	p.calls.Add(1)
	p.mu.Lock()
	f, d := p.fault, p.delay
	p.mu.Unlock()
	if d > 0 {
		select {
		case <-time.After(d):
		case <-ctx.Done():
			return f, ctx.Err()
		}
	}
	switch f {
	case faultDown:
		return f, fmt.Errorf("%s: %w", p.id, errDown)
	case faultHang:
		<-ctx.Done()
		return f, ctx.Err()
	case faultRefuse:
		return f, fmt.Errorf("%s: %w", p.id, meta.ErrInvalidArgument)
	}
	return f, ctx.Err()
}

// enterWrite is enter for a call that writes data: a full peer refuses it.
func (p *fakePeer) enterWrite(ctx context.Context) (fault, error) {
	f, err := p.enter(ctx)
	if err == nil && f == faultFull {
		err = fmt.Errorf("%s: %w", p.id, meta.ErrDiskFull)
	}
	return f, err
}

// checkUploadID refuses malformed upload IDs as storage.Store does.
func checkUploadID(id string) error {
	if !storage.ValidUploadID(id) {
		return fmt.Errorf("upload id %q: %w", id, meta.ErrInvalidArgument)
	}
	return nil
}

func objKey(bucket, key string) string { return bucket + "\x00" + key }

func shardKey(bucket, key string, st meta.Stamp, part int) string {
	return fmt.Sprintf("%s\x00%s\x00%s\x00%d", bucket, key, st, part)
}

func (p *fakePeer) MakeBucket(ctx context.Context, b meta.Bucket) error {
	if _, err := p.enter(ctx); err != nil {
		return err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, ok := p.buckets[b.Name]; ok {
		return meta.ErrBucketExists
	}
	p.buckets[b.Name] = b
	return nil
}

func (p *fakePeer) StatBucket(ctx context.Context, bucket string) (meta.Bucket, error) {
	if _, err := p.enter(ctx); err != nil {
		return meta.Bucket{}, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	b, ok := p.buckets[bucket]
	if !ok {
		return meta.Bucket{}, meta.ErrBucketNotFound
	}
	return b, nil
}

func (p *fakePeer) DeleteBucket(ctx context.Context, bucket string) error {
	if _, err := p.enter(ctx); err != nil {
		return err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, ok := p.buckets[bucket]; !ok {
		return meta.ErrBucketNotFound
	}
	for k, raw := range p.records {
		if strings.HasPrefix(k, bucket+"\x00") {
			if o, err := meta.UnmarshalObject(raw); err == nil && !o.Deleted {
				return meta.ErrBucketNotEmpty
			}
		}
	}
	for k := range p.uploads {
		if strings.HasPrefix(k, bucket+"\x00") && p.refuseUploads {
			return meta.ErrBucketNotEmpty
		}
	}
	for k := range p.uploads {
		if strings.HasPrefix(k, bucket+"\x00") {
			delete(p.uploads, k)
		}
	}
	delete(p.buckets, bucket)
	return nil
}

func (p *fakePeer) ListBuckets(ctx context.Context) ([]meta.Bucket, error) {
	if _, err := p.enter(ctx); err != nil {
		return nil, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []meta.Bucket
	for _, b := range p.buckets {
		out = append(out, b)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

func (p *fakePeer) StageShard(ctx context.Context, r io.Reader) (string, error) {
	f, err := p.enterWrite(ctx)
	if err != nil {
		return "", err
	}
	p.stages.Add(1)
	data, err := io.ReadAll(r)
	if err != nil {
		return "", err
	}
	if f == faultStallReply {
		<-ctx.Done()
	}
	if err := ctx.Err(); err != nil {
		return "", err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.nextTmp++
	id := fmt.Sprintf("tmp-%s-%d", p.id, p.nextTmp)
	p.tmp[id] = data
	return id, nil
}

// held returns the record held for bucket/key, nil when none.
func (p *fakePeer) held(bucket, key string) *meta.Object {
	raw, ok := p.records[objKey(bucket, key)]
	if !ok {
		return nil
	}
	o, err := meta.UnmarshalObject(raw)
	if err != nil {
		return nil
	}
	return o
}

// install makes o the peer's record, its shard files taken from files.
// Caller holds p.mu and has checked the bucket.
func (p *fakePeer) install(o *meta.Object, files map[int][]byte) error {
	old := p.held(o.Bucket, o.Key)
	if old != nil && o.Stamp.Less(old.Stamp) {
		if p.plainStale {
			return fmt.Errorf("%s: %w", p.id, meta.ErrStale)
		}
		return fmt.Errorf("%s: %w", p.id, &meta.StaleError{Held: old.Stamp})
	}
	raw, err := meta.MarshalObject(o)
	if err != nil {
		return err
	}
	if old != nil && old.Stamp != o.Stamp {
		// Kept until the new version is settled, as storage.Store does.
		k := objKey(o.Bucket, o.Key)
		p.kept[k] = append([][]byte{p.records[k]}, p.kept[k]...)
		if len(p.kept[k]) > storage.MaxKept {
			p.dropKept(o.Bucket, o.Key, p.kept[k][storage.MaxKept:])
			p.kept[k] = p.kept[k][:storage.MaxKept]
		}
	}
	for n, data := range files {
		p.shards[shardKey(o.Bucket, o.Key, o.Stamp, n)] = data
	}
	p.setRecord(o, raw)
	return nil
}

// setRecord stores an encoded record and indexes it for List.
func (p *fakePeer) setRecord(o *meta.Object, raw []byte) {
	k := objKey(o.Bucket, o.Key)
	if _, ok := p.records[k]; !ok {
		ks := p.keys[o.Bucket]
		i := sort.SearchStrings(ks, o.Key)
		p.keys[o.Bucket] = append(ks[:i], append([]string{o.Key}, ks[i:]...)...)
	}
	p.records[k] = raw
	p.entries[k] = meta.EntryOf(o)
}

func (p *fakePeer) Commit(ctx context.Context, o *meta.Object, staged []string) error {
	f, err := p.enterWrite(ctx)
	if err != nil {
		return err
	}
	if f == faultFailCommit {
		return fmt.Errorf("%s: commit: %w", p.id, errDown)
	}
	if f == faultStallReply {
		<-ctx.Done()
		return ctx.Err()
	}
	p.commits.Add(1)
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, ok := p.buckets[o.Bucket]; !ok {
		return meta.ErrBucketNotFound
	}
	files := map[int][]byte{}
	if !o.Inlined && !o.Deleted {
		if len(staged) != len(o.Parts) {
			return fmt.Errorf("%d staged files for %d parts", len(staged), len(o.Parts))
		}
		for i, id := range staged {
			data, ok := p.tmp[id]
			if !ok {
				return fmt.Errorf("staged file %s: %w", id, meta.ErrNotFound)
			}
			files[o.Parts[i].Number] = data
		}
	}
	if err := p.install(o, files); err != nil {
		return err
	}
	for _, id := range staged {
		delete(p.tmp, id)
	}
	return nil
}

// CommitTombstones installs each tombstone as Commit does, with Commit's
// faults for the whole call.
func (p *fakePeer) CommitTombstones(ctx context.Context, bucket string, os []*meta.Object) ([]error, error) {
	f, err := p.enterWrite(ctx)
	if err != nil {
		return nil, err
	}
	if f == faultFailCommit {
		return nil, fmt.Errorf("%s: commit tombstones: %w", p.id, errDown)
	}
	if f == faultStallReply {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	if p.beforeBatch != nil {
		if err := p.beforeBatch(ctx); err != nil {
			return nil, err
		}
	}
	p.batches.Add(1)
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, ok := p.buckets[bucket]; !ok {
		return nil, meta.ErrBucketNotFound
	}
	errs := make([]error, len(os))
	for i, o := range os {
		if !o.Deleted || o.Bucket != bucket {
			return nil, fmt.Errorf("%s: %s/%s: %w", p.id, o.Bucket, o.Key, meta.ErrInvalidArgument)
		}
		p.commits.Add(1)
		errs[i] = p.install(o, map[int][]byte{})
	}
	return errs, nil
}

// Relabel rewrites the record of the version the peer holds with o's
// distribution, keeping its shard files, as storage.Store does.
func (p *fakePeer) Relabel(ctx context.Context, o *meta.Object) error {
	if _, err := p.enterWrite(ctx); err != nil {
		return err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	cur := p.held(o.Bucket, o.Key)
	switch {
	case cur == nil:
		return fmt.Errorf("%s: relabel: %w", p.id, meta.ErrNotFound)
	case o.Stamp.Less(cur.Stamp):
		return fmt.Errorf("%s: relabel: holds %v: %w", p.id, cur.Stamp, meta.ErrStale)
	case cur.Stamp != o.Stamp || cur.ShardIndex != o.ShardIndex:
		return fmt.Errorf("%s: relabel of %v shard %d, holds %v shard %d", p.id, o.Stamp, o.ShardIndex, cur.Stamp, cur.ShardIndex)
	}
	rec := *o
	rec.Inline = cur.Inline
	raw, err := meta.MarshalObject(&rec)
	if err != nil {
		return err
	}
	p.setRecord(&rec, raw)
	return nil
}

// Rewrite installs o with the data of the held version from, as
// storage.Store does: its own shard files and inline bytes.
func (p *fakePeer) Rewrite(ctx context.Context, o *meta.Object, from meta.Stamp) error {
	f, err := p.enterWrite(ctx)
	if err != nil {
		return err
	}
	if f == faultFailCommit {
		return fmt.Errorf("%s: rewrite: %w", p.id, errDown)
	}
	p.rewrites.Add(1)
	p.mu.Lock()
	defer p.mu.Unlock()
	cur := p.held(o.Bucket, o.Key)
	switch {
	case cur == nil || (cur.Stamp != from && !from.Less(cur.Stamp)):
		return fmt.Errorf("%s: rewrite of %v: %w", p.id, from, meta.ErrNotFound)
	case cur.Stamp != from:
		return fmt.Errorf("%s: rewrite of %v: %w", p.id, from, &meta.StaleError{Held: cur.Stamp})
	case cur.Size != o.Size || cur.ETag != o.ETag || cur.ShardIndex != o.ShardIndex:
		return fmt.Errorf("%s: rewrite of %v with other data: %w", p.id, from, meta.ErrInvalidArgument)
	}
	files := map[int][]byte{}
	for _, pt := range partsOf(cur) {
		files[pt.Number] = p.shards[shardKey(o.Bucket, o.Key, cur.Stamp, pt.Number)]
	}
	rec := *o
	rec.Inline = cur.Inline
	return p.install(&rec, files)
}

// dropKept removes the shard files of kept records. Caller holds p.mu.
func (p *fakePeer) dropKept(bucket, key string, raws [][]byte) {
	for _, raw := range raws {
		if o, err := meta.UnmarshalObject(raw); err == nil {
			for _, pt := range partsOf(o) {
				delete(p.shards, shardKey(bucket, key, o.Stamp, pt.Number))
			}
		}
	}
}

// Settle drops the kept records older than st, as storage.Store does.
func (p *fakePeer) Settle(ctx context.Context, bucket, key string, st meta.Stamp) error {
	if _, err := p.enterWrite(ctx); err != nil {
		return err
	}
	p.settles.Add(1)
	p.mu.Lock()
	defer p.mu.Unlock()
	cur := p.held(bucket, key)
	if cur == nil || cur.Stamp.Less(st) {
		return nil
	}
	k := objKey(bucket, key)
	var keep, drop [][]byte
	for _, raw := range p.kept[k] {
		if o, err := meta.UnmarshalObject(raw); err == nil && !o.Stamp.Less(st) {
			keep = append(keep, raw)
		} else {
			drop = append(drop, raw)
		}
	}
	p.dropKept(bucket, key, drop)
	if len(keep) == 0 {
		delete(p.kept, k)
	} else {
		p.kept[k] = keep
	}
	return nil
}

// keptCount is how many replaced records the peer keeps for the key.
func (p *fakePeer) keptCount(bucket, key string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.kept[objKey(bucket, key)])
}

// DropVersion removes the key's record and shard files if the peer holds
// exactly version st, as storage.Store does.
func (p *fakePeer) DropVersion(ctx context.Context, bucket, key string, st meta.Stamp) error {
	if _, err := p.enterWrite(ctx); err != nil {
		return err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	o := p.held(bucket, key)
	switch {
	case o == nil:
		return fmt.Errorf("%s: drop: %w", p.id, meta.ErrNotFound)
	case o.Stamp != st:
		return fmt.Errorf("%s: drop %v: holds %v: %w", p.id, st, o.Stamp, meta.ErrStale)
	}
	for _, pt := range partsOf(o) {
		delete(p.shards, shardKey(bucket, key, o.Stamp, pt.Number))
	}
	k := objKey(bucket, key)
	p.dropKept(bucket, key, p.kept[k])
	delete(p.kept, k)
	delete(p.records, k)
	delete(p.entries, k)
	ks := p.keys[bucket]
	if i := sort.SearchStrings(ks, key); i < len(ks) && ks[i] == key {
		p.keys[bucket] = append(ks[:i], ks[i+1:]...)
	}
	return nil
}

func (p *fakePeer) ReadMeta(ctx context.Context, bucket, key string) (*meta.Object, error) {
	p.metas.Add(1)
	return p.readMeta(ctx, bucket, key)
}

// ReadVersions is ReadMeta with the kept records after the current one.
func (p *fakePeer) ReadVersions(ctx context.Context, bucket, key string) ([]*meta.Object, error) {
	p.metas.Add(1)
	o, err := p.readMeta(ctx, bucket, key)
	if err != nil {
		return nil, err
	}
	out := []*meta.Object{o}
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, raw := range p.kept[objKey(bucket, key)] {
		if k, err := meta.UnmarshalObject(raw); err == nil {
			out = append(out, k)
		}
	}
	return out, nil
}

func (p *fakePeer) readMeta(ctx context.Context, bucket, key string) (*meta.Object, error) {
	f, err := p.enter(ctx)
	if err != nil {
		return nil, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, ok := p.buckets[bucket]; !ok {
		return nil, meta.ErrBucketNotFound
	}
	raw, ok := p.records[objKey(bucket, key)]
	if !ok {
		return nil, meta.ErrNotFound
	}
	if f == faultCorruptMeta {
		raw = append([]byte(nil), raw...)
		raw[len(raw)/2] ^= 0x40
	}
	o, err := meta.UnmarshalObject(raw)
	if err == nil && f == faultGarbage {
		// A well-formed record carrying damaged shard bytes: only the
		// erasure checksums can tell.
		for i := range o.Inline {
			if i%7 == 3 {
				o.Inline[i] ^= 0xa5
			}
		}
	}
	return o, err
}

func (p *fakePeer) ReadShard(ctx context.Context, bucket, key string, st meta.Stamp, part int, off, length int64) (io.ReadCloser, error) {
	f, err := p.enter(ctx)
	if err != nil {
		return nil, err
	}
	if p.onShard != nil {
		p.onShard()
	}
	p.reads.Add(1)
	if meta.ReadPriority(ctx) > 0 {
		p.tagged.Add(1)
	}
	p.mu.Lock()
	data, ok := p.shards[shardKey(bucket, key, st, part)]
	p.mu.Unlock()
	if !ok {
		return nil, fmt.Errorf("shard of %s/%s@%s part %d: %w", bucket, key, st, part, meta.ErrNotFound)
	}
	if off < 0 || length < 0 || off+length > int64(len(data)) {
		return nil, fmt.Errorf("range %d+%d of %d bytes", off, length, len(data))
	}
	out := append([]byte(nil), data[off:off+length]...)
	switch f {
	case faultGarbage:
		for i := range out {
			if i%7 == 3 {
				out[i] ^= 0xa5
			}
		}
	case faultHangRead:
		return io.NopCloser(hungReader{ctx}), nil
	}
	return io.NopCloser(bytes.NewReader(out)), nil
}

// hungReader never delivers a byte; it fails when its ctx ends.
type hungReader struct{ ctx context.Context }

func (h hungReader) Read([]byte) (int, error) {
	<-h.ctx.Done()
	return 0, h.ctx.Err()
}

func (p *fakePeer) List(ctx context.Context, bucket, prefix, after string, limit int, delimiter string) ([]meta.Entry, error) {
	if _, err := p.enter(ctx); err != nil {
		return nil, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, ok := p.buckets[bucket]; !ok {
		return nil, meta.ErrBucketNotFound
	}
	ks := p.keys[bucket]
	scan := func(after string, n int) []meta.Entry {
		var out []meta.Entry
		for i := sort.SearchStrings(ks, max(after, prefix)); i < len(ks) && len(out) < n; i++ {
			if ks[i] > after && strings.HasPrefix(ks[i], prefix) {
				e := p.entries[objKey(bucket, ks[i])]
				e.Unsettled = len(p.kept[objKey(bucket, ks[i])]) > 0
				out = append(out, e)
			}
		}
		return out
	}
	out := scan(after, limit)
	if delimiter != "" && !p.noFold {
		out = meta.FoldEntries(scan, prefix, delimiter, after, limit)
	}
	p.listed.Add(int64(len(out)))
	return out, nil
}

// ListTombstones scans every record: the fake keeps no index by age.
func (p *fakePeer) ListTombstones(ctx context.Context, bucket string, before time.Time, after meta.Entry, limit int) ([]meta.Entry, error) {
	if _, err := p.enter(ctx); err != nil {
		return nil, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, ok := p.buckets[bucket]; !ok {
		return nil, meta.ErrBucketNotFound
	}
	older := func(a, b meta.Entry) bool {
		return a.Stamp.Nanos < b.Stamp.Nanos || a.Stamp.Nanos == b.Stamp.Nanos && a.Key < b.Key
	}
	var out []meta.Entry
	for _, k := range p.keys[bucket] {
		e := p.entries[objKey(bucket, k)]
		if e.Deleted && e.Stamp.Nanos < before.UnixNano() && (after.Stamp.Nanos == 0 || older(after, e)) {
			out = append(out, meta.Entry{Key: e.Key, Stamp: e.Stamp, Deleted: true})
		}
	}
	sort.Slice(out, func(i, j int) bool { return older(out[i], out[j]) })
	if limit <= 0 {
		limit = DefaultMaxKeys
	}
	return out[:min(limit, len(out))], nil
}

func uploadKey(bucket, key, id string) string { return bucket + "\x00" + key + "\x00" + id }

func (p *fakePeer) PutUpload(ctx context.Context, u *meta.Upload) error {
	f, err := p.enter(ctx)
	if err != nil {
		return err
	}
	if f == faultFailCommit {
		return errDown
	}
	if err := checkUploadID(u.UploadID); err != nil {
		return err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, ok := p.buckets[u.Bucket]; !ok {
		return meta.ErrBucketNotFound
	}
	cp := *u
	cp.Parts = nil
	p.uploads[uploadKey(u.Bucket, u.Key, u.UploadID)] = &fakeUpload{u: cp, parts: map[int]fakePart{}}
	return nil
}

func (p *fakePeer) GetUpload(ctx context.Context, bucket, key, id string) (*meta.Upload, error) {
	if _, err := p.enter(ctx); err != nil {
		return nil, err
	}
	if err := checkUploadID(id); err != nil {
		return nil, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	up, ok := p.uploads[uploadKey(bucket, key, id)]
	if !ok {
		return nil, meta.ErrUploadNotFound
	}
	cp := up.u
	for _, fp := range up.parts {
		cp.Parts = append(cp.Parts, fp.p)
	}
	sort.Slice(cp.Parts, func(i, j int) bool { return cp.Parts[i].Number < cp.Parts[j].Number })
	return &cp, nil
}

func (p *fakePeer) CommitPart(ctx context.Context, bucket, key, id string, part meta.Part, tmpID string) error {
	f, err := p.enter(ctx)
	if err != nil {
		return err
	}
	if err := checkUploadID(id); err != nil {
		return err
	}
	if f == faultFailCommit {
		return errDown
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	up, ok := p.uploads[uploadKey(bucket, key, id)]
	if !ok {
		return meta.ErrUploadNotFound
	}
	data, ok := p.tmp[tmpID]
	if !ok {
		return fmt.Errorf("staged file %s: %w", tmpID, meta.ErrNotFound)
	}
	delete(p.tmp, tmpID)
	up.parts[part.Number] = fakePart{p: part, data: data}
	return nil
}

func (p *fakePeer) CompleteUpload(ctx context.Context, o *meta.Object, id string) error {
	f, err := p.enter(ctx)
	if err != nil {
		return err
	}
	if err := checkUploadID(id); err != nil {
		return err
	}
	if f == faultFailCommit {
		return errDown
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	uk := uploadKey(o.Bucket, o.Key, id)
	up, ok := p.uploads[uk]
	if !ok {
		return meta.ErrUploadNotFound
	}
	files := map[int][]byte{}
	for _, pt := range o.Parts {
		fp, ok := up.parts[pt.Number]
		if !ok || !samePart(fp.p, pt) {
			return fmt.Errorf("part %d: not held as %+v", pt.Number, pt)
		}
		files[pt.Number] = fp.data
	}
	if err := p.install(o, files); err != nil {
		return err
	}
	delete(p.uploads, uk)
	return nil
}

func (p *fakePeer) AbortUpload(ctx context.Context, bucket, key, id string) error {
	f, err := p.enter(ctx)
	if err != nil {
		return err
	}
	if err := checkUploadID(id); err != nil {
		return err
	}
	if f == faultFailCommit {
		return errors.New("abort failed")
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	uk := uploadKey(bucket, key, id)
	if _, ok := p.uploads[uk]; !ok {
		return meta.ErrUploadNotFound
	}
	delete(p.uploads, uk)
	return nil
}

// fakeCluster places a key on n consecutive peers from a hashed start.
// It is also the gossip's judgement of liveness: every peer is alive
// until setAlive says otherwise.
type fakeCluster struct {
	ids   []meta.PeerID
	peers map[meta.PeerID]*fakePeer

	mu   sync.Mutex
	dead map[meta.PeerID]bool
}

func (c *fakeCluster) Alive(id meta.PeerID) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return !c.dead[id]
}

func (c *fakeCluster) setAlive(id meta.PeerID, alive bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.dead == nil {
		c.dead = map[meta.PeerID]bool{}
	}
	c.dead[id] = !alive
}

func newFakeCluster(n int) *fakeCluster {
	c := &fakeCluster{peers: map[meta.PeerID]*fakePeer{}}
	for i := range n {
		id := meta.PeerID(fmt.Sprintf("p%d", i))
		c.ids = append(c.ids, id)
		c.peers[id] = newFakePeer(id)
	}
	return c
}

func (c *fakeCluster) Placement(bucket, key string, n int) ([]meta.PeerID, error) {
	if n > len(c.ids) {
		return nil, fmt.Errorf("placement: %d of %d peers", n, len(c.ids))
	}
	h := fnv.New32a()
	h.Write([]byte(bucket + "/" + key))
	start := int(h.Sum32() % uint32(len(c.ids)))
	out := make([]meta.PeerID, n)
	for i := range out {
		out[i] = c.ids[(start+i)%len(c.ids)]
	}
	return out, nil
}

func (c *fakeCluster) Peers() []meta.PeerID { return append([]meta.PeerID(nil), c.ids...) }

func (c *fakeCluster) Client(id meta.PeerID) (ShardClient, error) {
	p, ok := c.peers[id]
	if !ok {
		return nil, fmt.Errorf("unknown peer %s", id)
	}
	return p, nil
}

// peerAt is the fake holding shard i of bucket/key under an n-wide code.
func (c *fakeCluster) peerAt(bucket, key string, n, i int) *fakePeer {
	ps, _ := c.Placement(bucket, key, n)
	return c.peers[ps[i]]
}

func (c *fakeCluster) heal() {
	for _, p := range c.peers {
		p.setFault(faultNone)
		p.setDelay(0)
	}
}
