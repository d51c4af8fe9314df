package gateway

import (
	"context"
	"errors"
	"net/http"
	"sort"
	"time"

	"tessera/object"
	"tessera/versioning"
)

// BucketReport is the body of GET .../bucket?name=B: what the bucket
// holds and the configuration it has.
type BucketReport struct {
	Name    string    `json:"name"`
	Created time.Time `json:"created"`
	// Objects and Bytes (logical sizes) count the stored objects, from a
	// full listing made for this call: in a versioned bucket every
	// version and delete marker.
	Objects int64        `json:"objects"`
	Bytes   int64        `json:"bytes"`
	Classes []ClassUsage `json:"storage_classes"`
	// Uploads counts multipart uploads in progress.
	Uploads int `json:"uploads"`
	// Versioning is "off" for a bucket never versioned, else "Enabled"
	// or "Suspended"; ObjectLock says whether it has object lock.
	Versioning string `json:"versioning"`
	ObjectLock bool   `json:"object_lock"`
	// CORSRules counts the rules of the bucket's CORS configuration;
	// CORS is the configuration itself, as GetBucketCors returns it.
	CORSRules int    `json:"cors_rules"`
	CORS      string `json:"cors,omitempty"`
}

// ClassUsage is one storage class's share of a bucket.
type ClassUsage struct {
	Class   string `json:"class"`
	Code    string `json:"code,omitempty"`
	Objects int64  `json:"objects"`
	Bytes   int64  `json:"bytes"`
}

// ClassAdmin is what an Admin may also say about storage classes.
type ClassAdmin interface {
	// StorageClasses lists every class with its code.
	StorageClasses() []StorageClass
}

func (g *gateway) getBucketReport(w http.ResponseWriter, r *http.Request) error {
	name := r.URL.Query().Get("name")
	if name == "" {
		return apiErrf(errInvalidArgument, "bucket: the name parameter is required")
	}
	rep, err := g.bucketReport(r.Context(), name)
	if err != nil {
		return adminFailure(err)
	}
	return writeAdminJSON(w, rep)
}

func (g *gateway) bucketReport(ctx context.Context, bucket string) (BucketReport, error) {
	bi, err := g.be.HeadBucket(ctx, bucket)
	if err != nil {
		return BucketReport{}, err
	}
	rep := BucketReport{Name: bi.Name, Created: bi.Created, Versioning: "off", Classes: []ClassUsage{}}
	g.versioning.forget(bucket)
	s, err := g.settings(ctx, bucket)
	if err != nil {
		return rep, err
	}
	if s.status != versioning.Unversioned {
		rep.Versioning = string(s.status)
	}
	rep.ObjectLock = s.locked
	if err := g.countObjects(ctx, &rep); err != nil {
		return rep, err
	}
	if ul, ok := g.be.(uploadLister); ok {
		if rep.Uploads, err = countUploads(ctx, ul, bucket); err != nil {
			return rep, err
		}
	}
	if err := g.bucketCORS(ctx, &rep); err != nil {
		return rep, err
	}
	return rep, nil
}

// countObjects lists the whole bucket, summing per storage class.
func (g *gateway) countObjects(ctx context.Context, rep *BucketReport) error {
	codes := map[string]string{}
	if ca, ok := g.admin.(ClassAdmin); ok {
		for _, c := range ca.StorageClasses() {
			codes[c.Name] = c.Code
		}
	}
	byClass := map[string]*ClassUsage{}
	after := ""
	for {
		page, err := g.be.ListObjects(ctx, rep.Name, object.ListOptions{After: after, MaxKeys: object.DefaultMaxKeys})
		if err != nil {
			return err
		}
		for _, o := range page.Objects {
			cu := byClass[o.StorageClass]
			if cu == nil {
				cu = &ClassUsage{Class: o.StorageClass, Code: codes[o.StorageClass]}
				byClass[o.StorageClass] = cu
			}
			cu.Objects++
			cu.Bytes += o.Size
			rep.Objects++
			rep.Bytes += o.Size
		}
		if !page.IsTruncated || page.NextAfter == "" {
			break
		}
		after = page.NextAfter
	}
	for _, cu := range byClass {
		rep.Classes = append(rep.Classes, *cu)
	}
	sort.Slice(rep.Classes, func(i, j int) bool { return rep.Classes[i].Class < rep.Classes[j].Class })
	return nil
}

func countUploads(ctx context.Context, ul uploadLister, bucket string) (int, error) {
	n := 0
	opts := object.ListUploadsOptions{MaxUploads: 1000}
	for {
		res, err := ul.ListUploads(ctx, bucket, opts)
		if err != nil {
			return n, err
		}
		n += len(res.Uploads)
		if !res.IsTruncated || res.NextKeyMarker == "" {
			return n, nil
		}
		opts.KeyMarker, opts.UploadIDMarker = res.NextKeyMarker, res.NextUploadIDMarker
	}
}

func (g *gateway) bucketCORS(ctx context.Context, rep *BucketReport) error {
	cs, ok := g.be.(configStore)
	if !ok {
		return nil
	}
	data, err := cs.GetBucketConfig(ctx, rep.Name, corsConfigName)
	if errors.Is(err, object.ErrNoBucketConfig) {
		return nil
	}
	if err != nil {
		return err
	}
	rep.CORS = string(data)
	if c, err := parseCORS(data); err == nil {
		rep.CORSRules = len(c.Rules)
	}
	return nil
}
