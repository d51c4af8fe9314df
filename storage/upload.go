package storage

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"tessera/meta"
)

const uploadMetaName = "upload.meta"

// partRecord is the on-disk record of one uploaded part. The data file
// name carries the staged id, so replacing a part never overwrites the
// file the current record points at.
type partRecord struct {
	Part meta.Part `json:"part"`
	File string    `json:"file"`
}

func partDataName(n int, tmpID string) string { return fmt.Sprintf("part.%d.%s", n, tmpID) }

func (r *partRecord) valid(n int) bool {
	id, ok := strings.CutPrefix(r.File, fmt.Sprintf("part.%d.", n))
	return ok && validTmpID(id) && r.Part.Number == n
}

// PutUpload stores the upload record (its Parts are ignored), creating the
// upload or replacing the record of an existing one, whose parts stay.
func (s *Store) PutUpload(ctx context.Context, u *meta.Upload) error {
	if err := s.check(ctx); err != nil {
		return err
	}
	if u == nil {
		return invalid("nil upload")
	}
	if err := checkUpload(u.Bucket, u.Key, u.UploadID); err != nil {
		return err
	}
	unlock := s.lockKey(u.Bucket, u.Key)
	defer unlock()
	if err := s.requireBucket(u.Bucket); err != nil {
		return err
	}
	rec := *u
	rec.Parts = nil
	data, err := meta.Marshal(&rec, nil)
	if err != nil {
		return err
	}
	dir := s.uploadDir(u.Bucket, u.Key, u.UploadID)
	b := s.batch()
	if err := mkdirs(s.dir, dir, b); err != nil {
		return fmt.Errorf("put upload %s: %w", u.UploadID, err)
	}
	if err := s.writeRecord(dir, uploadMetaName, data, b); err != nil {
		return fmt.Errorf("put upload %s: %w", u.UploadID, err)
	}
	return nil
}

// GetUpload returns the upload record with the parts committed so far,
// sorted by number. Damaged part records are logged and left out.
func (s *Store) GetUpload(ctx context.Context, bucket, key, uploadID string) (*meta.Upload, error) {
	if err := s.check(ctx); err != nil {
		return nil, err
	}
	if err := checkUpload(bucket, key, uploadID); err != nil {
		return nil, err
	}
	unlock := s.lockKey(bucket, key)
	defer unlock()
	u, parts, err := s.readUpload(bucket, key, uploadID)
	if err != nil {
		return nil, err
	}
	u.Parts = make([]meta.Part, 0, len(parts))
	for _, r := range parts {
		u.Parts = append(u.Parts, r.Part)
	}
	sort.Slice(u.Parts, func(i, j int) bool { return u.Parts[i].Number < u.Parts[j].Number })
	return u, nil
}

// readUpload reads the upload record and its part records by number.
func (s *Store) readUpload(bucket, key, uploadID string) (*meta.Upload, map[int]partRecord, error) {
	dir := s.uploadDir(bucket, key, uploadID)
	data, err := readFile(filepath.Join(dir, uploadMetaName))
	if isNotExist(err) {
		return nil, nil, fmt.Errorf("upload %s: %w", uploadID, meta.ErrUploadNotFound)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("upload %s: %w", uploadID, err)
	}
	var u meta.Upload
	if _, err := meta.Unmarshal(data, &u); err != nil {
		return nil, nil, fmt.Errorf("upload %s: %w", uploadID, err)
	}
	if u.Bucket != bucket || u.Key != key || u.UploadID != uploadID {
		return nil, nil, fmt.Errorf("upload %s: %w: record names another upload", uploadID, meta.ErrCorrupt)
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, nil, ioErr("list parts", err)
	}
	parts := make(map[int]partRecord)
	for _, e := range ents {
		n, ok := parsePartMetaName(e.Name())
		if !ok {
			continue
		}
		r, err := readPartRecord(dir, n)
		if err != nil {
			s.log.Warn().Err(err).Str("bucket", bucket).Str("upload", uploadID).Msg("skipping damaged part record")
			continue
		}
		parts[n] = r
	}
	return &u, parts, nil
}

func readPartRecord(dir string, n int) (partRecord, error) {
	var r partRecord
	data, err := readFile(filepath.Join(dir, partMetaName(n)))
	if err != nil {
		return r, err
	}
	if _, err := meta.Unmarshal(data, &r); err != nil {
		return r, fmt.Errorf("part %d: %w", n, err)
	}
	if !r.valid(n) {
		return r, fmt.Errorf("part %d: %w: bad record", n, meta.ErrCorrupt)
	}
	return r, nil
}

// CommitPart makes the staged file tmpID part p.Number of the upload,
// replacing an earlier part with that number. The data is placed and
// fsynced before the part record that points at it.
func (s *Store) CommitPart(ctx context.Context, bucket, key, uploadID string, p meta.Part, tmpID string) error {
	if err := s.check(ctx); err != nil {
		return err
	}
	if err := checkUpload(bucket, key, uploadID); err != nil {
		return err
	}
	if err := checkParts([]meta.Part{p}); err != nil {
		return err
	}
	if !validTmpID(tmpID) {
		return invalid("staged id %q", tmpID)
	}
	unlock := s.lockKey(bucket, key)
	defer unlock()
	if err := s.commitPart(s.uploadDir(bucket, key, uploadID), p, tmpID); err != nil {
		return fmt.Errorf("commit part %d of %s: %w", p.Number, uploadID, err)
	}
	return nil
}

func (s *Store) commitPart(dir string, p meta.Part, tmpID string) error {
	if _, err := os.Stat(filepath.Join(dir, uploadMetaName)); isNotExist(err) {
		return meta.ErrUploadNotFound
	} else if err != nil {
		return ioErr("stat upload", err)
	}
	old, oldErr := readPartRecord(dir, p.Number)
	file := partDataName(p.Number, tmpID)
	staged := s.stagedPath(tmpID)
	b := s.batch()
	if err := place(staged, filepath.Join(dir, file)); isNotExist(err) {
		return ErrStagedNotFound
	} else if err != nil {
		return err
	}
	// The link's entry becomes durable with the record's temp file, in
	// the flush before the rename.
	b.add(dir)
	data, err := meta.Marshal(&partRecord{Part: p, File: file}, nil)
	if err != nil {
		return err
	}
	visible, err := s.replaceRecord(dir, partMetaName(p.Number), data, b)
	if !visible {
		os.Remove(filepath.Join(dir, file))
		return err
	}
	os.Remove(staged)
	if err == nil && oldErr == nil && old.File != file {
		os.Remove(filepath.Join(dir, old.File))
	}
	return err
}

// CompleteUpload commits o as Commit does, taking the data of parts
// o.Parts from the upload (ErrInvalidPart when a part is missing or its
// ETag differs), then removes the upload. On any failure, ErrStale
// included, the upload is left as it was.
func (s *Store) CompleteUpload(ctx context.Context, o *meta.Object, uploadID string) error {
	leave, err := s.enter(ctx)
	if err != nil {
		return err
	}
	defer leave()
	if o == nil || !hasData(o) {
		return invalid("completing an upload needs a record with data")
	}
	if err := checkObject(o, len(o.Parts)); err != nil {
		return err
	}
	if !ValidUploadID(uploadID) {
		return invalid("upload id %q", uploadID)
	}
	// A versioned bucket completes an upload of a key into a new version
	// key of it: the upload lives under the key, the object under the
	// version key, and both are locked (their stripes may be one).
	uploadKey := meta.PlacementKey(o.Key)
	defer s.lockKeys(o.Bucket, uploadKey, o.Key)()
	if err := s.completeUpload(o, uploadKey, uploadID); err != nil {
		return fmt.Errorf("complete upload %s: %w", uploadID, err)
	}
	return nil
}

func (s *Store) completeUpload(o *meta.Object, uploadKey, uploadID string) error {
	if err := s.requireBucket(o.Bucket); err != nil {
		return err
	}
	_, parts, err := s.readUpload(o.Bucket, uploadKey, uploadID)
	if err != nil {
		return err
	}
	dir := s.uploadDir(o.Bucket, uploadKey, uploadID)
	srcs := make([]string, len(o.Parts))
	for i, p := range o.Parts {
		r, ok := parts[p.Number]
		if !ok || r.Part.ETag != p.ETag {
			return fmt.Errorf("part %d: %w", p.Number, ErrInvalidPart)
		}
		srcs[i] = filepath.Join(dir, r.File)
	}
	if err := s.install(o, srcs, ErrInvalidPart); err != nil {
		return err
	}
	// The object is durable; a crash before the upload is gone leaves a
	// harmless upload that an abort removes.
	if err := s.removeTree(dir); err != nil {
		s.log.Warn().Err(err).Str("upload", uploadID).Msg("removing completed upload")
	}
	os.Remove(filepath.Dir(dir))
	return nil
}

// AbortUpload removes the upload and its parts (meta.ErrUploadNotFound if
// absent).
func (s *Store) AbortUpload(ctx context.Context, bucket, key, uploadID string) error {
	if err := s.check(ctx); err != nil {
		return err
	}
	if err := checkUpload(bucket, key, uploadID); err != nil {
		return err
	}
	unlock := s.lockKey(bucket, key)
	defer unlock()
	dir := s.uploadDir(bucket, key, uploadID)
	if _, err := os.Lstat(dir); isNotExist(err) {
		return fmt.Errorf("abort upload %s: %w", uploadID, meta.ErrUploadNotFound)
	}
	if err := s.removeTree(dir); err != nil {
		return fmt.Errorf("abort upload %s: %w", uploadID, err)
	}
	os.Remove(filepath.Dir(dir))
	return nil
}
