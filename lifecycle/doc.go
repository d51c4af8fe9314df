// Package lifecycle is S3's bucket lifecycle: the configuration
// (PutBucketLifecycleConfiguration's XML, checked as S3 checks it) and the
// worker that applies it, expiring objects and aborting incomplete
// multipart uploads once the rules say they are due.
//
// What applies to unversioned buckets is applied: Expiration by Days or
// Date, AbortIncompleteMultipartUpload, filters by prefix, tags and
// object size, several rules per bucket. NoncurrentVersionExpiration and
// ExpiredObjectDeleteMarker act on noncurrent versions and delete
// markers, which only versioned buckets have; tessera's buckets are not
// versioned, so those rules are stored and have nothing to act on.
// Transitions are refused: there is one storage tier.
//
// Deletes are conditional on the version the delete reads (the rule is
// checked again on it, tags included), so an object rewritten after the
// listing is kept, and a second worker running the same pass deletes
// nothing twice.
package lifecycle
