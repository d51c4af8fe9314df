package e2e

import (
	"encoding/base64"
	"fmt"
	mathrand "math/rand/v2"
	"net/http"
	"net/url"
	"strings"
)

// fuzzReq is one generated request. declared, when not -1, is the
// Content-Length sent (and signed) in place of the body's real length.
type fuzzReq struct {
	method   string
	path     string // URL-escaped
	query    string // raw
	header   http.Header
	body     []byte
	declared int
	unsigned bool // x-amz-content-sha256: UNSIGNED-PAYLOAD
}

func (r fuzzReq) String() string {
	s := r.method + " " + r.path
	if r.query != "" {
		s += "?" + r.query
	}
	var hs []string
	for k, v := range r.header {
		hs = append(hs, k+": "+strings.Join(v, ","))
	}
	s += fmt.Sprintf(" [%s] body %d bytes", strings.Join(hs, "; "), len(r.body))
	if r.declared >= 0 {
		s += fmt.Sprintf(", Content-Length %d", r.declared)
	}
	return s
}

// fuzzGen draws requests at random from the shapes S3 clients send and
// the ones they get wrong. uploadID is a real upload's, so some requests
// reach the multipart handlers.
type fuzzGen struct {
	rnd      *mathrand.Rand
	bucket   string
	uploadID string
}

func (g *fuzzGen) pick(xs ...string) string { return xs[g.rnd.IntN(len(xs))] }

func (g *fuzzGen) chance(p float64) bool { return g.rnd.Float64() < p }

func (g *fuzzGen) next() fuzzReq {
	r := fuzzReq{
		method:   g.pick("GET", "GET", "HEAD", "PUT", "PUT", "POST", "DELETE", "OPTIONS", "PATCH", "PROPFIND"),
		path:     g.path(),
		header:   http.Header{},
		declared: -1,
	}
	r.query = g.query()
	for range g.rnd.IntN(4) {
		k, v := g.headerKV()
		r.header.Set(k, v)
	}
	r.body = g.body()
	if g.chance(0.05) {
		r.declared = max(0, len(r.body)+g.rnd.IntN(64)-32)
	}
	r.unsigned = g.chance(0.1)
	return r
}

func (g *fuzzGen) path() string {
	b := g.bucket
	switch g.rnd.IntN(12) {
	case 0:
		return "/"
	case 1:
		return "/" + b
	case 2:
		return "/" + b + "/"
	case 3:
		return "/nosuchbucket-fuzz/" + g.key()
	case 4:
		return "/" + g.pick("A", "xn--bad", "bad_bucket", "..", "a.b", strings.Repeat("b", 70)) + "/" + g.key()
	case 5:
		return "/" + g.pick("fuzz-"+fmt.Sprint(g.rnd.IntN(5)), b+"-new")
	default:
		return "/" + b + "/" + g.key()
	}
}

// key is an object key from a small set (so requests meet objects others
// wrote) or an odd one.
func (g *fuzzGen) key() string {
	switch g.rnd.IntN(8) {
	case 0:
		return url.PathEscape(g.pick("..", ".", "a/../b", "ü/ñ", "sp ace", "%", "k\x00z", "\t", strings.Repeat("x", 1100)))
	case 1:
		return "dir/" + g.pick("", "/", "//x") + fmt.Sprint(g.rnd.IntN(4))
	default:
		return fmt.Sprintf("k%d", g.rnd.IntN(6))
	}
}

// uploadIDs are what a client could put in uploadId: the real one, and
// malformed ones.
func (g *fuzzGen) uploadIDValue() string {
	return g.pick(g.uploadID, g.uploadID, "", "x", "../../etc/passwd", "%00", strings.Repeat("A", 1500),
		g.uploadID[:len(g.uploadID)/2], g.uploadID+"Z", "ZZZZZZZZZZZZZZZZZZZZZZZZZZ", "-1")
}

var fuzzSubresources = []string{"uploads", "tagging", "acl", "versions", "delete", "cors", "lifecycle", "policy",
	"location", "versioning", "encryption", "object-lock", "retention", "legal-hold", "website", "logging",
	"notification", "replication", "accelerate", "requestPayment", "ownershipControls", "publicAccessBlock",
	"restore", "select", "attributes", "policyStatus", "analytics", "metrics", "inventory", "intelligent-tiering"}

func (g *fuzzGen) query() string {
	q := url.Values{}
	for range g.rnd.IntN(4) {
		switch g.rnd.IntN(10) {
		case 0, 1:
			q.Set(g.pick(fuzzSubresources...), "")
		case 2:
			q.Set("uploadId", g.uploadIDValue())
		case 3:
			q.Set("partNumber", g.pick("1", "2", "0", "-1", "10000", "10001", "abc", "99999999999999999999", ""))
		case 4:
			q.Set("list-type", g.pick("2", "1", "3", "x"))
		case 5:
			q.Set(g.pick("max-keys", "max-uploads", "max-parts", "part-number-marker"), g.pick("0", "1", "-1", "abc", "1000000", "2147483648"))
		case 6:
			q.Set(g.pick("prefix", "delimiter", "marker", "start-after", "continuation-token", "key-marker", "upload-id-marker", "version-id-marker"),
				g.pick("", "k", "/", "dir/", "%ff", "garbage==", strings.Repeat("z", 1100)))
		case 7:
			q.Set("versionId", g.pick("null", "", "abc", "3/L4kqtJlcpXroDTDmJ+rmSpXd3dIbrHY"))
		case 8:
			q.Set(g.pick("encoding-type", "response-content-type", "response-content-disposition", "response-expires", "x-id", "select-type", "fetch-owner"),
				g.pick("url", "bad", "text/plain", "\r\nX-Injected: 1", "Thu, 01 Jan 1970 00:00:00 GMT", "2"))
		default:
			q.Set(g.pick("X-Amz-Expires", "X-Amz-Algorithm", "cachebust", "a", "%zz"), g.pick("1", "", "x"))
		}
	}
	return q.Encode()
}

func (g *fuzzGen) headerKV() (string, string) {
	switch g.rnd.IntN(12) {
	case 0:
		return "Range", g.pick("bytes=0-0", "bytes=-5", "bytes=5-", "bytes=10-5", "bytes=abc", "bytes=0-1,3-4", "items=0-1",
			"bytes=99999999999-", "bytes=-0", "bytes=0-18446744073709551616", "bytes=")
	case 1:
		return g.pick("If-Match", "If-None-Match"), g.pick("*", `"d41d8cd98f00b204e9800998ecf8427e"`, "garbage", `"`, `W/"x"`, "*, *")
	case 2:
		return g.pick("If-Modified-Since", "If-Unmodified-Since"), g.pick("Thu, 01 Jan 1970 00:00:00 GMT", "Fri, 31 Dec 9999 23:59:59 GMT", "yesterday", "")
	case 3:
		return "X-Amz-Checksum-" + g.pick("Crc32", "Crc32c", "Sha1", "Sha256", "Crc64nvme", "Md5"), g.pick(g.b64(4), g.b64(8), g.b64(20), g.b64(32), "!!!", "")
	case 4:
		return g.pick("X-Amz-Sdk-Checksum-Algorithm", "X-Amz-Checksum-Algorithm", "X-Amz-Checksum-Type"), g.pick("CRC32", "SHA256", "CRC64NVME", "FULL_OBJECT", "COMPOSITE", "bogus")
	case 5:
		return "Content-Md5", g.pick(g.b64(16), g.b64(3), "not base64")
	case 6:
		return "X-Amz-Copy-Source", g.pick(g.bucket+"/k1", "/"+g.bucket+"/k2", g.bucket+"/nokey", "nosuchbucket-fuzz/k", "garbage", "/", g.bucket+"/k1?versionId=x", "%")
	case 7:
		return g.pick("X-Amz-Copy-Source-Range", "X-Amz-Copy-Source-If-Match", "X-Amz-Metadata-Directive", "X-Amz-Tagging-Directive"),
			g.pick("bytes=0-4", "bytes=5-1", "COPY", "REPLACE", "bogus", `"x"`)
	case 8:
		return "X-Amz-Storage-Class", g.pick("STANDARD", "ARCHIVE", "WIDE", "GLACIER", "BOGUS", "")
	case 9:
		return g.pick("X-Amz-Tagging", "X-Amz-Meta-A", "X-Amz-Meta-"+strings.Repeat("m", 300), "Content-Type", "Content-Encoding", "Cache-Control"),
			g.pick("a=b", "a=b&a=c", "%zz", strings.Repeat("v", 3000), "aws-chunked", "text/plain")
	case 10:
		return g.pick("X-Amz-Acl", "X-Amz-Server-Side-Encryption", "X-Amz-Object-Lock-Mode", "X-Amz-Write-Offset-Bytes", "X-Amz-Expected-Bucket-Owner", "X-Amz-Bucket-Object-Lock-Enabled"),
			g.pick("private", "public-read", "AES256", "aws:kms", "GOVERNANCE", "0", "-1", "123456789012", "true")
	default:
		return g.pick("Expect", "X-Amz-Decoded-Content-Length", "Transfer-Encoding-Hint", "X-Amz-Trailer"), g.pick("100-continue", "5", "-1", "x-amz-checksum-crc32")
	}
}

func (g *fuzzGen) b64(n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(g.rnd.IntN(256))
	}
	return base64.StdEncoding.EncodeToString(b)
}

func (g *fuzzGen) body() []byte {
	switch g.rnd.IntN(10) {
	case 0, 1, 2:
		return nil
	case 3, 4:
		b := make([]byte, g.rnd.IntN(64<<10))
		for i := range b {
			b[i] = byte(g.rnd.IntN(256))
		}
		return b
	case 5:
		var sb strings.Builder
		sb.WriteString("<CompleteMultipartUpload>")
		for range g.rnd.IntN(4) {
			fmt.Fprintf(&sb, "<Part><PartNumber>%s</PartNumber><ETag>%s</ETag></Part>",
				g.pick("1", "2", "0", "x", "10001"), g.pick(`"d41d8cd98f00b204e9800998ecf8427e"`, "", "x"))
		}
		if g.chance(0.8) {
			sb.WriteString("</CompleteMultipartUpload>")
		}
		return []byte(sb.String())
	case 6:
		return []byte(fmt.Sprintf(`<Delete><Quiet>%s</Quiet><Object><Key>%s</Key></Object><Object><Key></Key></Object></Delete>`,
			g.pick("true", "false", "x"), g.pick("k1", "", "dir/0", strings.Repeat("k", 1100))))
	case 7:
		return []byte(fmt.Sprintf(`<Tagging><TagSet><Tag><Key>%s</Key><Value>%s</Value></Tag></TagSet></Tagging>`,
			g.pick("a", "", strings.Repeat("t", 200)), g.pick("b", "", "<")))
	case 8:
		return []byte(g.pick("<", "<?xml version=\"1.0\"?>", "<a><b></a>", "{}", "<CreateBucketConfiguration><LocationConstraint>mars</LocationConstraint></CreateBucketConfiguration>",
			"<VersioningConfiguration><Status>Enabled</Status></VersioningConfiguration>", strings.Repeat("<x>", 2000)))
	default:
		return []byte("hello fuzz")
	}
}
