// Package meta defines what tessera stores about objects, uploads and
// buckets, and the checksummed record codec every peer writes to disk and
// sends over its shard API. A record that fails its checksum is never
// parsed into a value: Unmarshal returns ErrCorrupt, and callers treat the
// copy as missing.
package meta
