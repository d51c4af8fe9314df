package object

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"tessera/checksum"
	"tessera/meta"
)

// ErrListUploadsUnsupported: the peers' clients cannot list uploads.
var ErrListUploadsUnsupported = errors.New("peers cannot list uploads")

// ErrUploadIDMarker: the upload-id-marker names no upload of the
// key-marker's key, which does have uploads; S3 refuses such a pair.
var ErrUploadIDMarker = errors.New("upload id marker is not an upload of the key marker")

// UploadLister is the optional peer-client method ListMultipartUploads
// needs; it is kept out of ShardClient so existing clients stay valid.
type UploadLister interface {
	ListUploads(ctx context.Context, bucket, prefix string) ([]meta.Upload, error)
}

// UploadInfo describes a multipart upload in progress.
type UploadInfo struct {
	Key          string
	UploadID     string
	Initiated    time.Time
	StorageClass string
	// ChecksumAlgorithm and ChecksumType are the upload's ("" none).
	ChecksumAlgorithm checksum.Algorithm
	ChecksumType      checksum.Type
}

// ListUploadsOptions select a page of ListMultipartUploads.
type ListUploadsOptions struct {
	Prefix, Delimiter string
	// KeyMarker alone: list keys after it. With UploadIDMarker: list the
	// key's uploads that follow that one, then the later keys (see
	// uploadsStart for a KeyMarker without uploads). UploadIDMarker
	// without KeyMarker is ignored, as S3 ignores it.
	KeyMarker, UploadIDMarker string
	MaxUploads                int
}

// ListUploadsResult is one page of ListMultipartUploads.
type ListUploadsResult struct {
	Uploads     []UploadInfo
	Prefixes    []string
	IsTruncated bool
	// NextKeyMarker and NextUploadIDMarker continue a truncated page.
	NextKeyMarker, NextUploadIDMarker string
}

// ListUploads lists the multipart uploads in progress in bucket. Every
// peer is asked, since an upload's peers depend on its key; an upload
// counts when at least k of its peers still hold its record, so one whose
// complete or abort missed a few peers does not reappear.
func (l *Layer) ListUploads(ctx context.Context, bucket string, opts ListUploadsOptions) (ListUploadsResult, error) {
	if err := l.requireBucket(ctx, bucket); err != nil {
		return ListUploadsResult{}, fmt.Errorf("list uploads %s: %w", bucket, err)
	}
	byID, _, err := l.uploadCopies(ctx, bucket, opts.Prefix)
	if err != nil {
		return ListUploadsResult{}, fmt.Errorf("list uploads %s: %w", bucket, err)
	}
	var all []UploadInfo
	for _, c := range byID {
		if c.copies >= max(1, c.u.Code.K) {
			alg, typ := uploadChecksum(&c.u)
			all = append(all, UploadInfo{Key: c.u.Key, UploadID: c.u.UploadID, Initiated: c.u.Initiated,
				StorageClass: classOrStandard(c.u.StorageClass), ChecksumAlgorithm: alg, ChecksumType: typ})
		}
	}
	sortUploads(all)
	start, listed, err := uploadsStart(all, opts)
	if err != nil {
		return ListUploadsResult{}, fmt.Errorf("list uploads %s: %w", bucket, err)
	}
	return pageUploads(all[start:], opts, listed), nil
}

// uploadCopy is one upload as the peers report it: a record and how many
// peers hold one.
type uploadCopy struct {
	u      meta.Upload
	copies int
}

// uploadCopies asks every peer for its upload records in bucket under
// prefix and gathers them by upload ID; t tallies the peers' answers.
// When no peer answers, err is the first peer's error.
func (l *Layer) uploadCopies(ctx context.Context, bucket, prefix string) (byID map[string]*uploadCopy, t tally, err error) {
	rs := fanout(ctx, l, l.cfg.Cluster.Peers(), l.cfg.PeerTimeout, func(ctx context.Context, _ int, c ShardClient) ([]meta.Upload, error) {
		ul, ok := c.(UploadLister)
		if !ok {
			return nil, ErrListUploadsUnsupported
		}
		return ul.ListUploads(ctx, bucket, prefix)
	})
	byID = map[string]*uploadCopy{}
	for _, r := range rs {
		if r.err != nil {
			continue
		}
		for _, u := range r.val {
			if c, ok := byID[u.UploadID]; ok {
				c.copies++
			} else {
				byID[u.UploadID] = &uploadCopy{u: u, copies: 1}
			}
		}
	}
	t = tallyOf(rs)
	if t.ok == 0 && len(rs) > 0 {
		return nil, t, rs[0].err
	}
	return byID, t, nil
}

// sortUploads puts uploads in S3's order: by key, and a key's uploads by
// initiation time (the ID breaks ties, so the order is total and pages
// never skip or repeat an upload).
func sortUploads(all []UploadInfo) {
	sort.Slice(all, func(i, j int) bool {
		a, b := all[i], all[j]
		if a.Key != b.Key {
			return a.Key < b.Key
		}
		if !a.Initiated.Equal(b.Initiated) {
			return a.Initiated.Before(b.Initiated)
		}
		return a.UploadID < b.UploadID
	})
}

// uploadsStart finds where a page begins in the sorted uploads, and up
// to where common prefixes were listed before (listed):
//   - KeyMarker alone: after every key up to it; prefixes up to it were
//     listed.
//   - With an UploadIDMarker of KeyMarker's key (S3's resume inside a
//     key): just after that upload. An UploadIDMarker that is not one of
//     the key's uploads, while the key has some, cannot be placed: it is
//     ErrUploadIDMarker, as S3 answers.
//   - KeyMarker without uploads of its own, and an UploadIDMarker of the
//     first key after it: just after that upload, with no prefix counted
//     as listed, so the prefix holding that upload's successors is listed
//     again. This is the pair a page ending on a common prefix hands out
//     (versitygw's semantics; S3's answers here are not consistent).
//   - KeyMarker without uploads, and any other UploadIDMarker (an upload
//     completed since): as KeyMarker alone.
func uploadsStart(all []UploadInfo, opts ListUploadsOptions) (start int, listed string, err error) {
	if opts.KeyMarker == "" {
		return 0, "", nil
	}
	first := sort.Search(len(all), func(i int) bool { return all[i].Key >= opts.KeyMarker })
	end := first
	for end < len(all) && all[end].Key == opts.KeyMarker {
		end++
	}
	if opts.UploadIDMarker == "" {
		return end, opts.KeyMarker, nil
	}
	if first < end {
		if i := indexOfUpload(all[first:end], opts.UploadIDMarker); i >= 0 {
			return first + i + 1, opts.KeyMarker, nil
		}
		return 0, "", ErrUploadIDMarker
	}
	next := end
	for next < len(all) && all[next].Key == all[end].Key {
		next++
	}
	if i := indexOfUpload(all[end:next], opts.UploadIDMarker); i >= 0 {
		return end + i + 1, "", nil
	}
	return end, opts.KeyMarker, nil
}

// indexOfUpload is the index of the upload with id in us, or -1.
func indexOfUpload(us []UploadInfo, id string) int {
	for i, u := range us {
		if u.UploadID == id {
			return i
		}
	}
	return -1
}

// pageUploads takes one page from uploads, which start where the page
// does. With a delimiter, keys that continue past it fold into one common
// prefix, listed once a page and skipped when it sorts at or before listed
// (listed on an earlier page). A page that ends on a common prefix hands
// out the prefix and the upload that produced it as its next markers.
func pageUploads(uploads []UploadInfo, opts ListUploadsOptions, listed string) ListUploadsResult {
	limit := opts.MaxUploads
	if limit <= 0 || limit > DefaultMaxKeys {
		limit = DefaultMaxKeys
	}
	var out ListUploadsResult
	lastPrefix := ""
	for _, u := range uploads {
		p := commonUploadPrefix(u.Key, opts)
		if p != "" && (p == lastPrefix || (listed != "" && p <= listed)) {
			continue
		}
		if len(out.Uploads)+len(out.Prefixes) == limit {
			out.IsTruncated = true
			return out
		}
		out.NextKeyMarker, out.NextUploadIDMarker = u.Key, u.UploadID
		if p != "" {
			out.Prefixes = append(out.Prefixes, p)
			lastPrefix = p
			out.NextKeyMarker = p
			continue
		}
		out.Uploads = append(out.Uploads, u)
	}
	out.NextKeyMarker, out.NextUploadIDMarker = "", ""
	return out
}

// commonUploadPrefix is the common prefix key folds into, or "".
func commonUploadPrefix(key string, opts ListUploadsOptions) string {
	if opts.Delimiter == "" || !strings.HasPrefix(key, opts.Prefix) {
		return ""
	}
	rest := key[len(opts.Prefix):]
	i := strings.Index(rest, opts.Delimiter)
	if i < 0 {
		return ""
	}
	return opts.Prefix + rest[:i+len(opts.Delimiter)]
}
