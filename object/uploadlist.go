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
	// KeyMarker and UploadIDMarker: return uploads after this pair.
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
	rs := fanout(ctx, l, l.cfg.Cluster.Peers(), l.cfg.PeerTimeout, func(ctx context.Context, _ int, c ShardClient) ([]meta.Upload, error) {
		ul, ok := c.(UploadLister)
		if !ok {
			return nil, ErrListUploadsUnsupported
		}
		return ul.ListUploads(ctx, bucket, opts.Prefix)
	})
	type seen struct {
		u     meta.Upload
		count int
	}
	byID := map[string]*seen{}
	answered := 0
	for _, r := range rs {
		if r.err != nil {
			continue
		}
		answered++
		for _, u := range r.val {
			if s, ok := byID[u.UploadID]; ok {
				s.count++
			} else {
				byID[u.UploadID] = &seen{u: u, count: 1}
			}
		}
	}
	if answered == 0 && len(rs) > 0 {
		return ListUploadsResult{}, fmt.Errorf("list uploads %s: %w", bucket, rs[0].err)
	}
	var all []UploadInfo
	for _, s := range byID {
		if s.count >= max(1, s.u.Code.K) {
			alg, typ := uploadChecksum(&s.u)
			all = append(all, UploadInfo{Key: s.u.Key, UploadID: s.u.UploadID, Initiated: s.u.Initiated,
				StorageClass: classOrStandard(s.u.StorageClass), ChecksumAlgorithm: alg, ChecksumType: typ})
		}
	}
	sort.Slice(all, func(i, j int) bool {
		if all[i].Key != all[j].Key {
			return all[i].Key < all[j].Key
		}
		return all[i].UploadID < all[j].UploadID
	})
	return pageUploads(all, opts), nil
}

func pageUploads(all []UploadInfo, opts ListUploadsOptions) ListUploadsResult {
	limit := opts.MaxUploads
	if limit <= 0 || limit > DefaultMaxKeys {
		limit = DefaultMaxKeys
	}
	var out ListUploadsResult
	lastPrefix := ""
	for _, u := range all {
		if opts.KeyMarker != "" && (u.Key < opts.KeyMarker || (u.Key == opts.KeyMarker &&
			(opts.UploadIDMarker == "" || u.UploadID <= opts.UploadIDMarker))) {
			continue
		}
		if opts.Delimiter != "" {
			rest := strings.TrimPrefix(u.Key, opts.Prefix)
			if i := strings.Index(rest, opts.Delimiter); i >= 0 {
				p := opts.Prefix + rest[:i+len(opts.Delimiter)]
				if p == lastPrefix || (opts.KeyMarker != "" && p <= opts.KeyMarker) {
					continue
				}
				if len(out.Uploads)+len(out.Prefixes) == limit {
					out.IsTruncated = true
					break
				}
				out.Prefixes = append(out.Prefixes, p)
				lastPrefix = p
				out.NextKeyMarker, out.NextUploadIDMarker = p, ""
				continue
			}
		}
		if len(out.Uploads)+len(out.Prefixes) == limit {
			out.IsTruncated = true
			break
		}
		out.Uploads = append(out.Uploads, u)
		out.NextKeyMarker, out.NextUploadIDMarker = u.Key, u.UploadID
	}
	if !out.IsTruncated {
		out.NextKeyMarker, out.NextUploadIDMarker = "", ""
	}
	return out
}
