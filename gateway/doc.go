// Package gateway is tessera's S3 HTTP front end: path-style routing
// (gorilla/mux), request parsing and validation, the S3 XML documents, and
// the one table that turns Go errors into S3 error responses.
//
// Every request is authenticated first (Config.Auth, a SigV4 verifier in
// production); the verifier's body replaces r.Body, so handlers only ever
// read verified bytes and a bad signature or checksum surfaces as the final
// Read's error. Handlers are split parse → Backend call → render and
// return errors; errors.go maps them (errors.Is over the object and sigv4
// sentinels, unknown errors become a logged 500 InternalError).
//
// Invariants:
//   - A request that fails validation changes nothing: all parsing (names,
//     keys, headers, XML bodies) happens before the Backend is called.
//   - Keys are taken from the escaped path and percent-decoded exactly once;
//     the path is never cleaned, so "..", "//" and "%2F" keep their meaning.
//   - Object and part bodies reach the Backend through a reader that yields
//     exactly the declared length and reports io.EOF only after the
//     verifier has, so nothing is committed before verification.
//   - A response that fails after its header was sent (a GET body) aborts
//     the connection: a client never sees a short body as complete.
//   - Every response carries x-amz-request-id, x-amz-id-2 and Server.
//
// Sub-resources that are recognised but not implemented (acl, tagging,
// lifecycle, ListMultipartUploads, UploadPartCopy, ...) answer 501
// NotImplemented rather than falling through to a plain operation.
package gateway
