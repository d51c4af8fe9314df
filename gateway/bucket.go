package gateway

import (
	"bytes"
	"encoding/xml"
	"errors"
	"net/http"
	"strings"

	"tessera/object"
	"tessera/versioning"
)

// createBucketConfiguration is CreateBucket's optional body.
type createBucketConfiguration struct {
	XMLName            xml.Name `xml:"CreateBucketConfiguration"`
	LocationConstraint string   `xml:"LocationConstraint"`
	Tags               []tag    `xml:"Tags>Tag"`
}

// parseCreateBucketConfig validates a CreateBucket body: empty, or a
// CreateBucketConfiguration whose LocationConstraint is empty or region
// and whose tags are valid bucket tags. It returns the tags.
func parseCreateBucketConfig(body []byte, region string) ([]tag, error) {
	if len(bytes.TrimSpace(body)) == 0 {
		return nil, nil
	}
	var cfg createBucketConfiguration
	if err := xml.Unmarshal(body, &cfg); err != nil {
		return nil, apiErr(errMalformedXML)
	}
	// S3 takes no explicit us-east-1: that region is the empty constraint.
	lc := strings.TrimSpace(cfg.LocationConstraint)
	if lc != "" && (lc != region || region == DefaultRegion) {
		return nil, withFields(apiErr(errInvalidLocationConstraint), errorField{"LocationConstraint", lc})
	}
	if err := validateBucketTags(cfg.Tags); err != nil {
		return nil, err
	}
	return cfg.Tags, nil
}

func (g *gateway) listBuckets(w http.ResponseWriter, r *http.Request) error {
	p, err := parseBucketList(r.URL.Query())
	if err != nil {
		return err
	}
	buckets, err := g.be.ListBuckets(r.Context())
	if err != nil {
		return err
	}
	res := listAllMyBucketsResult{Owner: requestOwner(r)}
	if p.hasPrefix {
		res.Prefix = &p.prefix
	}
	page, more := pageBuckets(buckets, p, g.region)
	for _, b := range page {
		res.Buckets = append(res.Buckets, bucketXML{Name: b.Name, CreationDate: xmlTime(b.Created), BucketRegion: g.region})
	}
	if more {
		res.ContinuationToken = encodeToken(page[len(page)-1].Name)
	}
	return writeXML(w, http.StatusOK, res)
}

// pageBuckets selects one page of the name-ordered bucket list and reports
// whether more follow. Every bucket is in region, the gateway's own.
func pageBuckets(buckets []object.BucketInfo, p bucketListRequest, region string) ([]object.BucketInfo, bool) {
	if p.region != "" && p.region != region {
		return nil, false
	}
	var page []object.BucketInfo
	for _, b := range buckets {
		if b.Name <= p.after || !strings.HasPrefix(b.Name, p.prefix) {
			continue
		}
		if p.max > 0 && len(page) == p.max {
			return page, true
		}
		page = append(page, b)
	}
	return page, false
}

func (g *gateway) createBucket(w http.ResponseWriter, r *http.Request) error {
	bucket, err := bucketParam(r)
	if err != nil {
		return err
	}
	if err := checkObjectOwnership(r.Header); err != nil {
		return err
	}
	locked := strings.EqualFold(r.Header.Get("X-Amz-Bucket-Object-Lock-Enabled"), "true")
	body, err := g.readBody(w, r)
	if err != nil {
		return err
	}
	tags, err := parseCreateBucketConfig(body, g.region)
	if err != nil {
		return err
	}
	cs, canTag := g.be.(configStore)
	if (len(tags) > 0 || locked) && !canTag {
		return apiErr(errNotImplemented)
	}
	err = g.be.MakeBucket(r.Context(), bucket)
	if err != nil && !g.ownedIsOK(err) {
		return err
	}
	if locked && err == nil {
		// If this fails the bucket stays without object lock, and says so
		// to every lock request; deleting it and creating it again does
		// the rest.
		if err := createLockedBucket(r.Context(), cs, bucket); err != nil {
			return err
		}
		g.versioning.forget(bucket)
	}
	if len(tags) > 0 {
		// After the bucket exists, since a configuration needs one; if
		// this fails the bucket stays untagged, and CreateBucket again
		// (200 for a bucket one owns) or PutBucketTagging sets the tags.
		if err := cs.PutBucketConfig(r.Context(), bucket, bucketTagsConfig, []byte(encodeTags(tags))); err != nil {
			return err
		}
	}
	w.Header().Set("Location", "/"+bucket)
	// General purpose buckets' ARNs name neither region nor account.
	w.Header().Set("X-Amz-Bucket-Arn", "arn:aws:s3:::"+bucket)
	w.WriteHeader(http.StatusOK)
	return nil
}

// ownedIsOK reports whether a CreateBucket that failed with err succeeds
// anyway: S3 answers re-creating a bucket you own with 200 in us-east-1,
// for legacy compatibility, and with BucketAlreadyOwnedByYou elsewhere.
// Every bucket here belongs to the one key, so every existing bucket is
// owned.
func (g *gateway) ownedIsOK(err error) bool {
	return g.region == DefaultRegion && errors.Is(err, object.ErrBucketExists)
}

func (g *gateway) headBucket(w http.ResponseWriter, r *http.Request) error {
	bucket, err := bucketParam(r)
	if err != nil {
		return err
	}
	if _, err := g.be.HeadBucket(r.Context(), bucket); err != nil {
		return err
	}
	w.Header().Set("X-Amz-Bucket-Region", g.region)
	w.WriteHeader(http.StatusOK)
	return nil
}

func (g *gateway) deleteBucket(w http.ResponseWriter, r *http.Request) error {
	bucket, err := bucketParam(r)
	if err != nil {
		return err
	}
	if err := g.be.DeleteBucket(r.Context(), bucket); err != nil {
		if errors.Is(err, object.ErrBucketNotEmpty) {
			// A versioned bucket is empty only without any version.
			if st, serr := g.versioningStatus(r.Context(), bucket); serr == nil && st != versioning.Unversioned {
				return apiErrf(errBucketNotEmpty, "The bucket you tried to delete is not empty. You must delete all versions in the bucket.")
			}
		}
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (g *gateway) getBucketLocation(w http.ResponseWriter, r *http.Request) error {
	bucket, err := bucketParam(r)
	if err != nil {
		return err
	}
	if _, err := g.be.HeadBucket(r.Context(), bucket); err != nil {
		return err
	}
	// S3 reports its original region, us-east-1, as an empty constraint.
	loc := g.region
	if loc == DefaultRegion {
		loc = ""
	}
	return writeXML(w, http.StatusOK, locationConstraint{Location: loc})
}
