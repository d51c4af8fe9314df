package gateway

import "net/http"

// A bucket's tags are a bucket configuration (object.Layer's
// PutBucketConfig) named "tagging", stored in the form object tags take
// (encodeTags). S3 allows 50 tags on a bucket, against 10 on an object,
// with the same rules for each tag.
const (
	bucketTagsConfig  = "tagging"
	maxBucketTags     = 50
	msgBucketTagCount = "Bucket tag count cannot be greater than 50"
)

// validateBucketTags checks a bucket's tag set: the count, then each tag.
func validateBucketTags(tags []tag) error {
	if len(tags) > maxBucketTags {
		return apiErrf(errBadRequest, msgBucketTagCount)
	}
	return checkTagSet(tags)
}

// putBucketTagging replaces the bucket's tags; an empty tag set removes
// them. S3 answers 204.
func (g *gateway) putBucketTagging(w http.ResponseWriter, r *http.Request) error {
	bucket, cs, err := g.configTarget(r)
	if err != nil {
		return err
	}
	tags, err := g.readTagging(w, r)
	if err != nil {
		return err
	}
	if err := validateBucketTags(tags); err != nil {
		return err
	}
	if err := cs.PutBucketConfig(r.Context(), bucket, bucketTagsConfig, []byte(encodeTags(tags))); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (g *gateway) getBucketTagging(w http.ResponseWriter, r *http.Request) error {
	data, err := g.readBucketConfig(r, bucketTagsConfig, errNoSuchTagSet)
	if err != nil {
		return err
	}
	tags, err := parseTagQuery(string(data))
	if err != nil {
		return err
	}
	return writeTagging(w, tags)
}

func (g *gateway) deleteBucketTagging(w http.ResponseWriter, r *http.Request) error {
	if _, err := g.clearBucketConfig(r, bucketTagsConfig); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
