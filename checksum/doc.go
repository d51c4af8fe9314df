// Package checksum knows S3's flexible checksum algorithms: their names,
// digest sizes and hash functions, the two ways a multipart object's
// checksum is derived from its parts (COMPOSITE: the hash of the parts'
// raw checksums, suffixed "-N"; FULL_OBJECT: the CRC of the whole object,
// combined from the parts' CRCs and sizes without reading the bytes
// again), and which algorithm allows which type.
//
// It is pure: no I/O, no logging, no tessera imports. The gateway's
// signature verifier and the object layer both use it, so a checksum is
// computed and named the same way wherever it is checked.
package checksum
