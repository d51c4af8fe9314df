package meta

import "time"

// BucketConfig is one named sub-resource of a bucket (its CORS rules, for
// instance), stored on every peer next to the bucket record. Peers keep
// the newest by Updated, so concurrent writers converge on the last one;
// a delete is a record with empty Data, kept so an older write arriving
// late cannot resurrect the configuration.
type BucketConfig struct {
	Bucket  string    `json:"bucket"`
	Name    string    `json:"name"`
	Updated time.Time `json:"updated"`
	Data    []byte    `json:"data,omitempty"`
}
