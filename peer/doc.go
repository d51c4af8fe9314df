// Package peer is a storage peer's internal shard API: an HTTP server over
// a storage.Store and the Client the object layer uses to reach it
// (object.ShardClient).
//
// # Wire
//
// Every route lives under /v1/. Names (bucket, key, upload ID, staged ID,
// stamp, part, range) travel in the query string, never in the path, so
// keys with "/", ".." or any UTF-8 need no path escaping and the server
// validates each name before it reaches the store. Shard bodies stream in
// both directions without buffering (StageShard sends the caller's reader
// as a chunked body; ReadShard returns the response body with its
// Content-Length). Records travel in the checksummed meta codec, so a
// record damaged in transit reads as meta.ErrCorrupt; listings and small
// answers are JSON.
//
// Routes (query parameters in brackets):
//
//	GET    /v1/buckets                                  JSON []meta.Bucket
//	PUT    /v1/bucket [bucket]      body: record        MakeBucket
//	GET    /v1/bucket [bucket]      answer: record      StatBucket
//	DELETE /v1/bucket [bucket]                          DeleteBucket
//	PUT    /v1/bucket/config [bucket name] body: record PutBucketConfig (newest Updated kept)
//	GET    /v1/bucket/config [bucket name] answer: record GetBucketConfig
//	POST   /v1/stage                body: shard stream  JSON {"id"}
//	POST   /v1/commit [bucket key]  body: record {object, staged} + inline
//	GET    /v1/meta [bucket key]    answer: object record with inline
//	GET    /v1/versions [bucket key] answer: meta.MarshalVersions of the record and the versions kept
//	POST   /v1/settle [bucket key nanos writer]        drop kept versions older than that one
//	GET    /v1/shard [bucket key nanos writer part offset length]  shard stream
//	GET    /v1/list [bucket prefix after limit delimiter] JSON []meta.Entry (folded by delimiter)
//	GET    /v1/tombstones [bucket before after-nanos after limit] JSON []meta.Entry, oldest first
//	POST   /v1/tombstones [bucket]  body: meta.MarshalBatch   JSON one error per tombstone (code "" = committed)
//	PUT    /v1/upload [bucket key upload]  body: record PutUpload
//	GET    /v1/upload [bucket key upload]  answer: record with parts
//	DELETE /v1/upload [bucket key upload]               AbortUpload
//	POST   /v1/part [bucket key upload tmp] body: meta.Part record
//	POST   /v1/complete [bucket key upload] body: object record
//	POST   /v1/repair [bucket key]  like commit; also replaces the same version
//	POST   /v1/relabel [bucket key] body: record   new distribution, same data
//	POST   /v1/rewrite [bucket key nanos writer] body: record   new version of version nanos/writer's data
//	DELETE /v1/version [bucket key nanos writer]   drop exactly that version
//	GET    /v1/scrub [limit]        JSON scrub.Report: the scrubber's status and findings
//	POST   /v1/scrub                start a scrub pass now; JSON {"accepted"}
//
// Errors cross the wire as {"code": "...", "message": "..."} with a stable
// code per sentinel (see codes.go); the Client returns a *RemoteError that
// unwraps to the same sentinel, so errors.Is(err, meta.ErrNotFound) holds
// on both sides. A Stale refusal also carries "held", the stamp of the
// record the write lost to, and unwraps to a *meta.StaleError naming it.
//
// # Transport security
//
// Nodes talk to the shard API only over TLS 1.3 with mutual
// authentication (tls.go). The cluster CA's key is derived from the
// cluster secret with HKDF-SHA256, so every node holding the secret
// issues itself a certificate at start and checks its counterpart's
// against the same CA; a client or server without one is refused in the
// handshake. Every byte between nodes is thus encrypted and
// authenticated: a captured connection cannot be read, cannot be replayed
// (each handshake is fresh, so a recording fails against a restarted peer
// as against a running one), and a body altered on the way fails its
// record's authentication and ends the connection.
//
// # Authentication
//
// Every request also carries a timestamp (unix seconds), a random 128-bit
// nonce and HMAC-SHA256 over method, escaped path, raw query, timestamp
// and nonce, keyed with a key derived from the cluster secret (the raw
// secret also keys gossip encryption, so it is never used directly). The
// server answers 401 to a missing or wrong MAC, a timestamp more than
// MaxSkew away from its clock, or a nonce it has seen within the window;
// rejected requests reach no handler. The MAC covers the request line,
// not the body (a stream that cannot be hashed before it is sent): the
// body's integrity is TLS's.
package peer
