// Package gateway is tessera's S3 HTTP front end: path-style and
// virtual-hosted-style routing (gorilla/mux; Config.Domains), request
// parsing and validation, the S3 XML documents, and the one table that
// turns Go errors into S3 error responses. CertReloader serves the TLS
// certificate of an https endpoint and picks up renewed files.
//
// Every request is authenticated first (Config.Auth, a SigV4 verifier in
// production); the verifier's body replaces r.Body, so handlers only ever
// read verified bytes and a bad signature or checksum surfaces as the final
// Read's error. Handlers are split parse → Backend call → render and
// return errors; errors.go maps them (errors.Is over the object and sigv4
// sentinels, unknown errors become a logged 500 InternalError).
//
// Invariants:
//
//   - A request that fails validation changes nothing: all parsing (names,
//     keys, headers, XML bodies) happens before the Backend is called.
//
//   - Keys are taken from the escaped path and percent-decoded exactly once;
//     the path is never cleaned, so "..", "//" and "%2F" keep their meaning.
//
//   - Object and part bodies reach the Backend through a reader that yields
//     exactly the declared length and reports io.EOF only after the
//     verifier has, so nothing is committed before verification.
//
//   - A response that fails after its header was sent (a GET body) aborts
//     the connection: a client never sees a short body as complete.
//
//   - Every response carries x-amz-request-id, x-amz-id-2 and Server.
//
//   - Browser POST uploads are the one request not authenticated by
//     Config.Auth: postObject verifies their policy signature (through the
//     Authenticator's VerifyPolicy) before reading the file.
//
//   - Stored headers tessera keeps for itself (object tags, validated
//     x-amz-checksum-* values) never leak into responses verbatim: tags
//     show as x-amz-tagging-count, checksums only with
//     x-amz-checksum-mode: ENABLED.
//
//   - CORS preflights (OPTIONS) are, with browser POST uploads, the only
//     requests not authenticated by Config.Auth; they read nothing but the
//     bucket's CORS rules (optional Backend part, cached for a few
//     seconds), which also decorate actual cross-origin answers, errors
//     included.
//
//   - Bucket lifecycle rules (?lifecycle) are checked and stored here; the
//     lifecycle package's worker applies them.
//
//   - Versioning (?versioning, ?versionId, ?versions) chooses the stored
//     key a request reads or writes: a version is an object under a
//     version key below this layer (package versioning).
//
// Sub-resources that are recognised but not implemented (acl, policy,
// object lock, ...) answer 501 NotImplemented rather than falling
// through to a plain operation. COMPATIBILITY.md at the repository root
// lists what is and is not supported.
package gateway
