package object

import (
	"context"
	"crypto/md5"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strings"

	"tessera/meta"
)

// Multipart uploads fix their code and placement at creation, so every
// part lands on the same peers under the same shard indexes; each part is
// its own erasure stream (shard file part.N), and completing the upload
// commits an object record listing the chosen parts.

// NewMultipart starts an upload and returns its id.
func (l *Layer) NewMultipart(ctx context.Context, bucket, key string, opts PutOptions) (string, error) {
	id, err := l.newMultipart(everyPeer(ctx), bucket, key, opts)
	if err != nil {
		return "", fmt.Errorf("new multipart %s/%s: %w", bucket, key, err)
	}
	return id, nil
}

func (l *Layer) newMultipart(ctx context.Context, bucket, key string, opts PutOptions) (string, error) {
	class, code, err := l.codeFor(opts.StorageClass)
	if err != nil {
		return "", err
	}
	if err := l.requireBucket(ctx, bucket); err != nil {
		return "", err
	}
	dist, err := l.cfg.Cluster.Placement(bucket, key, code.N())
	if err != nil {
		return "", fmt.Errorf("placement: %w", err)
	}
	alg, typ := opts.ChecksumAlgorithm, opts.ChecksumType
	if alg != "" && typ == "" {
		typ = alg.DefaultType()
	}
	if alg != "" && !alg.Allows(typ) || alg == "" && typ != "" {
		return "", fmt.Errorf("%w: checksum %q with type %q", ErrInvalidChecksumConfig, alg, typ)
	}
	u := meta.Upload{
		Bucket: bucket, Key: key, UploadID: rand.Text(), Initiated: l.cfg.Now().UTC(),
		ContentType: opts.ContentType, UserMeta: opts.UserMeta, Headers: opts.Headers,
		StorageClass: class, Code: code, BlockSize: l.cfg.BlockSize, Distribution: dist,
		ChecksumAlgorithm: string(alg), ChecksumType: string(typ),
	}
	rs := fanoutQuorum(ctx, l, dist, l.cfg.PeerTimeout, code.WriteQuorum(), func(ctx context.Context, i int, c ShardClient) (struct{}, error) {
		rec := u
		rec.ShardIndex = i
		return struct{}{}, c.PutUpload(ctx, &rec)
	})
	if err := l.settleWrite("put upload", bucket, "", meta.Stamp{}, rs, code.WriteQuorum()); err != nil {
		return "", err
	}
	return u.UploadID, nil
}

// PutPart stores part number of an upload. Parts are always shard files,
// never inlined, because the object they end up in is read part by part.
func (l *Layer) PutPart(ctx context.Context, bucket, key, uploadID string, number int, r io.Reader, size int64, contentMD5 []byte) (PartInfo, error) {
	p, err := l.putPart(everyPeer(ctx), bucket, key, uploadID, number, r, size, contentMD5)
	if err != nil {
		return PartInfo{}, fmt.Errorf("put part %d of %s/%s: %w", number, bucket, key, err)
	}
	return PartInfo{Number: p.Number, Size: p.Size, ETag: p.ETag, ModTime: l.cfg.Now().UTC(), Checksums: p.Checksums}, nil
}

func (l *Layer) putPart(ctx context.Context, bucket, key, uploadID string, number int, r io.Reader, size int64, contentMD5 []byte) (meta.Part, error) {
	switch {
	case number < 1 || number > MaxPartNumber:
		return meta.Part{}, fmt.Errorf("%w: %d", ErrInvalidPartNumber, number)
	case size > MaxPartSize:
		return meta.Part{}, fmt.Errorf("%w: %d bytes", ErrEntityTooLarge, size)
	}
	v, err := l.readUpload(ctx, bucket, key, uploadID)
	if err != nil {
		return meta.Part{}, err
	}
	u := v.u
	ec, err := l.coder(u.Code, u.BlockSize)
	if err != nil {
		return meta.Part{}, err
	}
	declared := declaredOf(r)
	want, err := partWants(u, r)
	if err != nil {
		return meta.Part{}, err
	}
	body := newBodyReader(r, size, MaxPartSize).trackSums(r, want)
	res, err := l.stage(ctx, ec, u.Distribution, body, u.Code.WriteQuorum())
	if body.err != nil {
		return meta.Part{}, fmt.Errorf("read body: %w", body.err)
	}
	if err := stageFailure(ctx, err, u.Distribution, res, u.Code.WriteQuorum()); err != nil {
		return meta.Part{}, err
	}
	if err := checkDigest(contentMD5, body.sum()); err != nil {
		return meta.Part{}, err
	}
	p := meta.Part{Number: number, Size: res.size, ETag: hex.EncodeToString(body.sum()), Checksums: body.sums.sums()}
	rs := fanoutQuorum(ctx, l, u.Distribution, l.cfg.PeerTimeout, u.Code.WriteQuorum(), func(ctx context.Context, i int, c ShardClient) (struct{}, error) {
		if res.errs[i] != nil {
			return struct{}{}, res.errs[i]
		}
		return struct{}{}, c.CommitPart(ctx, bucket, key, uploadID, p, res.ids[i])
	})
	if err := l.settleWrite("commit part", bucket, "", meta.Stamp{}, rs, u.Code.WriteQuorum()); err != nil {
		return meta.Part{}, err
	}
	p.Checksums = visiblePartSums(u, declared, p.Checksums)
	return p, nil
}

// CompleteMultipart commits the object made of the listed parts.
func (l *Layer) CompleteMultipart(ctx context.Context, bucket, key, uploadID string, parts []CompletePart, opts CompleteOptions) (ObjectInfo, error) {
	info, err := l.completeMultipart(everyPeer(ctx), bucket, key, uploadID, parts, opts)
	if err != nil {
		return ObjectInfo{}, fmt.Errorf("complete multipart %s/%s: %w", bucket, key, err)
	}
	return info, nil
}

func (l *Layer) completeMultipart(ctx context.Context, bucket, key, uploadID string, parts []CompletePart, opts CompleteOptions) (ObjectInfo, error) {
	if len(parts) == 0 {
		return ObjectInfo{}, fmt.Errorf("%w: no parts", ErrInvalidPart)
	}
	for i := 1; i < len(parts); i++ {
		if parts[i].Number <= parts[i-1].Number {
			return ObjectInfo{}, fmt.Errorf("%w: %d after %d", ErrInvalidPartOrder, parts[i].Number, parts[i-1].Number)
		}
	}
	defer l.completing.lock(bucket + "/" + key + "/" + uploadID)()
	info, err := l.commitUpload(ctx, bucket, key, uploadID, parts, opts)
	if errors.Is(err, ErrUploadNotFound) {
		return l.completedBefore(ctx, bucket, key, uploadID, parts, err)
	}
	return info, err
}

// commitUpload commits the object made of the chosen parts of an upload.
func (l *Layer) commitUpload(ctx context.Context, bucket, key, uploadID string, parts []CompletePart, opts CompleteOptions) (ObjectInfo, error) {
	v, err := l.readUpload(ctx, bucket, key, uploadID)
	if err != nil {
		return ObjectInfo{}, err
	}
	chosen, ready, err := l.chooseParts(v, parts)
	if err != nil {
		return ObjectInfo{}, err
	}
	sum, err := completeChecksum(v.u, parts, chosen, opts)
	if err != nil {
		return ObjectInfo{}, err
	}
	o := l.completedRecord(v.u, chosen, sum)
	if opts.VersionKey != "" {
		if meta.PlacementKey(opts.VersionKey) != key || opts.VersionKey == key {
			return ObjectInfo{}, fmt.Errorf("%w: %q is not a version key of the upload's key", ErrInvalidArgument, opts.VersionKey)
		}
		o.Key = opts.VersionKey
	}
	if o.Size > MaxObjectSize {
		return ObjectInfo{}, fmt.Errorf("%w: %d bytes", ErrEntityTooLarge, o.Size)
	}
	if opts.ObjectSize != nil && *opts.ObjectSize != o.Size {
		return ObjectInfo{}, &SizeMismatchError{Stated: *opts.ObjectSize, Computed: o.Size}
	}
	// Last, right before the commit, to keep the window small (see
	// checkPutCondition for the race it leaves).
	if err := l.checkPutCondition(ctx, bucket, key, PutOptions{IfMatch: opts.IfMatch, IfNoneMatch: opts.IfNoneMatch, Current: opts.Current}); err != nil {
		return ObjectInfo{}, err
	}
	err = l.commitVersion(ctx, "complete upload", o, ready, maxCommitAttempts, func(ctx context.Context, c ShardClient, rec *meta.Object) error {
		return c.CompleteUpload(ctx, rec, uploadID)
	})
	if err != nil {
		return ObjectInfo{}, err
	}
	return l.infoOf(o), nil
}

// chooseParts checks the client's list against the parts the peers agree
// on and returns the parts to commit, plus, per shard, why that peer
// cannot take part (nil when it holds every chosen part exactly). A peer
// holding another version of a part must not complete: its shard files
// would decode into other bytes.
func (l *Layer) chooseParts(v *uploadView, want []CompletePart) ([]meta.Part, []error, error) {
	have := map[int]partView{}
	for _, p := range v.parts() {
		have[p.Number] = p
	}
	chosen := make([]meta.Part, len(want))
	holds := make([]int, len(v.u.Distribution))
	for i, cp := range want {
		p, ok := have[cp.Number]
		if !ok || !strings.EqualFold(p.ETag, strings.Trim(cp.ETag, `"`)) {
			return nil, nil, &PartError{Err: ErrInvalidPart, Number: cp.Number, ETag: strings.Trim(cp.ETag, `"`)}
		}
		if i < len(want)-1 && p.Size < l.cfg.MinPartSize {
			return nil, nil, &PartError{Err: ErrEntityTooSmall, Number: cp.Number, ETag: p.ETag, Size: p.Size, Min: l.cfg.MinPartSize}
		}
		chosen[i] = p.Part
		for _, s := range p.shards {
			holds[s]++
		}
	}
	ready := make([]error, len(holds))
	for s, n := range holds {
		if n < len(want) {
			ready[s] = fmt.Errorf("shard %d lacks %d of the %d parts", s, len(want)-n, len(want))
		}
	}
	return chosen, ready, nil
}

// completedRecord is the object record of a completed upload.
func (l *Layer) completedRecord(u *meta.Upload, parts []meta.Part, sum ChecksumInfo) *meta.Object {
	h := md5.New()
	var size int64
	for _, p := range parts {
		sum, _ := hex.DecodeString(p.ETag)
		h.Write(sum)
		size += p.Size
	}
	o := &meta.Object{
		Bucket: u.Bucket, Key: u.Key, Size: size,
		ETag:        fmt.Sprintf("%x-%d", h.Sum(nil), len(parts)),
		ContentType: u.ContentType, UserMeta: u.UserMeta, Headers: withChecksum(u.Headers, sum),
		StorageClass: u.StorageClass, Code: u.Code, BlockSize: u.BlockSize,
		Parts: parts, Distribution: u.Distribution, UploadID: u.UploadID,
	}
	l.stampRecord(o)
	return o
}

// ListParts returns the parts after marker that the upload's peers agree
// on, at most maxParts (1..1000; other values mean 1000).
func (l *Layer) ListParts(ctx context.Context, bucket, key, uploadID string, marker, maxParts int) (ListPartsResult, error) {
	v, err := l.readUpload(ctx, bucket, key, uploadID)
	if err != nil {
		return ListPartsResult{}, fmt.Errorf("list parts %s/%s: %w", bucket, key, err)
	}
	if maxParts <= 0 || maxParts > DefaultMaxKeys {
		maxParts = DefaultMaxKeys
	}
	alg, typ := uploadChecksum(v.u)
	res := ListPartsResult{StorageClass: classOrStandard(v.u.StorageClass), ChecksumAlgorithm: alg, ChecksumType: typ}
	for _, p := range v.parts() {
		if p.Number <= marker {
			continue
		}
		if len(res.Parts) == maxParts {
			res.IsTruncated = true
			break
		}
		res.Parts = append(res.Parts, PartInfo{Number: p.Number, Size: p.Size, ETag: p.ETag, ModTime: v.u.Initiated, Checksums: p.Checksums})
		res.NextPartNumberMarker = p.Number
	}
	return res, nil
}
