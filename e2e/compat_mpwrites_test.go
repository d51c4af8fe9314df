package e2e

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/base64"
	"encoding/hex"
	"encoding/xml"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// errorElems is an S3 error body's elements by name.
func errorElems(t *testing.T, body []byte) map[string]string {
	t.Helper()
	var doc struct {
		Elems []struct {
			XMLName xml.Name
			Value   string `xml:",chardata"`
		} `xml:",any"`
	}
	if err := xml.Unmarshal(body, &doc); err != nil {
		t.Fatalf("error body does not parse: %v: %q", err, body)
	}
	out := map[string]string{}
	for _, e := range doc.Elems {
		out[e.XMLName.Local] = e.Value
	}
	return out
}

// expectElems sends r and checks the status and the error body's elements.
func (rc *rawClient) expectElems(name string, r rawReq, status int, want map[string]string) {
	rc.t.Helper()
	got, body, _ := rc.do(r)
	if got != status {
		rc.t.Errorf("%s: status %d, want %d: %s", name, got, status, body)
		return
	}
	elems := errorElems(rc.t, body)
	for k, v := range want {
		if elems[k] != v {
			rc.t.Errorf("%s: <%s> %q, want %q: %s", name, k, elems[k], v, body)
		}
	}
}

// uploadOnePart starts an upload of key with one small part and returns
// its id, the Complete list and the object's bytes.
func uploadOnePart(t *testing.T, cl *s3.Client, b, key string) (*string, []types.CompletedPart, []byte) {
	t.Helper()
	ctx := context.Background()
	mp, err := cl.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: &b, Key: &key})
	if err != nil {
		t.Fatal(err)
	}
	data := payload(int64(len(key)), 1000)
	out, err := cl.UploadPart(ctx, &s3.UploadPartInput{Bucket: &b, Key: &key, UploadId: mp.UploadId, PartNumber: aws.Int32(1),
		Body: bytes.NewReader(data)})
	if err != nil {
		t.Fatal(err)
	}
	return mp.UploadId, []types.CompletedPart{{PartNumber: aws.Int32(1), ETag: out.ETag}}, data
}

// CompleteMultipartUpload's conditional writes and x-amz-mp-object-size
// as S3 answers them, through aws-sdk-go-v2. A refused complete commits
// nothing and keeps the upload.
func TestCompatCompleteConditionsAndSize(t *testing.T) {
	c := startServer(t)
	cl := newAWS(t, c)
	ctx := context.Background()
	const b = "mpconds"
	if _, err := cl.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(b)}); err != nil {
		t.Fatal(err)
	}
	cur, err := cl.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(b), Key: aws.String("cur"), Body: bytes.NewReader([]byte("dummy"))})
	if err != nil {
		t.Fatal(err)
	}
	etag, size := aws.ToString(cur.ETag), int64(1000)
	wrong, negative := int64(213123), int64(-1)
	cases := []struct {
		name                 string
		key                  string
		ifMatch, ifNoneMatch string
		size                 *int64
		code                 string // "" commits
	}{
		{"if-match other", "cur", "incorrect_etag", "", nil, "PreconditionFailed"},
		{"if-none-match over existing", "cur", "", "*", nil, "PreconditionFailed"},
		{"if-none-match etag", "cur", "", etag, nil, "NotImplemented"},
		{"both", "cur", etag, "*", nil, "NotImplemented"},
		{"if-match missing key", "new-1", etag, "", nil, "NoSuchKey"},
		{"negative size", "new-1", "", "", &negative, "InvalidRequest"},
		{"wrong size", "new-1", "", "", &wrong, "InvalidRequest"},
		{"if-match unquoted, right size", "cur", strings.Trim(etag, `"`), "", &size, ""},
		{"if-none-match new key", "new-2", "", "*", nil, ""},
	}
	for _, tc := range cases {
		id, parts, data := uploadOnePart(t, cl, b, tc.key)
		in := &s3.CompleteMultipartUploadInput{Bucket: aws.String(b), Key: aws.String(tc.key), UploadId: id,
			MultipartUpload: &types.CompletedMultipartUpload{Parts: parts}, MpuObjectSize: tc.size}
		if tc.ifMatch != "" {
			in.IfMatch = aws.String(tc.ifMatch)
		}
		if tc.ifNoneMatch != "" {
			in.IfNoneMatch = aws.String(tc.ifNoneMatch)
		}
		_, err := cl.CompleteMultipartUpload(ctx, in, noRetry)
		if apiCode(err) != tc.code {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.code)
			continue
		}
		if tc.code == "" {
			checkObject(t, cl, b, tc.key, data)
			continue
		}
		if _, err := cl.ListParts(ctx, &s3.ListPartsInput{Bucket: aws.String(b), Key: aws.String(tc.key), UploadId: id}); err != nil {
			t.Errorf("%s: the refused upload is gone: %v", tc.name, err)
		}
	}
	// The computed size comes first in S3's message, the stated second.
	_, err = cl.CompleteMultipartUpload(ctx, mismatched(t, cl, b, wrong), noRetry)
	if got := apiMessage(err); got != "InvalidRequest: The provided 'x-amz-mp-object-size' header value 1000 does not match what was computed: 213123" {
		t.Errorf("size mismatch: %s", got)
	}
	if _, err := cl.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(b), Key: aws.String("new-1")}); apiCode(err) != "NotFound" {
		t.Errorf("a refused complete committed new-1: %v", err)
	}
}

// mismatched is a Complete of a new 1000-byte upload that states size.
func mismatched(t *testing.T, cl *s3.Client, b string, size int64) *s3.CompleteMultipartUploadInput {
	id, parts, _ := uploadOnePart(t, cl, b, "sized")
	return &s3.CompleteMultipartUploadInput{Bucket: aws.String(b), Key: aws.String("sized"), UploadId: id,
		MultipartUpload: &types.CompletedMultipartUpload{Parts: parts}, MpuObjectSize: &size}
}

// AbortMultipartUpload with x-amz-if-match-initiated-time, the time
// ListMultipartUploads reports: another time is a 412 that keeps the
// upload, a future one is ignored.
func TestCompatAbortIfMatchInitiatedTime(t *testing.T) {
	c := startServer(t)
	cl := newAWS(t, c)
	ctx := context.Background()
	b := aws.String("aborts")
	if _, err := cl.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: b}); err != nil {
		t.Fatal(err)
	}
	initiated := func(id *string) time.Time {
		t.Helper()
		res, err := cl.ListMultipartUploads(ctx, &s3.ListMultipartUploadsInput{Bucket: b})
		if err != nil {
			t.Fatal(err)
		}
		for _, u := range res.Uploads {
			if aws.ToString(u.UploadId) == aws.ToString(id) {
				return aws.ToTime(u.Initiated)
			}
		}
		t.Fatalf("upload %s not listed", aws.ToString(id))
		return time.Time{}
	}
	abort := func(id *string, at time.Time) error {
		_, err := cl.AbortMultipartUpload(ctx, &s3.AbortMultipartUploadInput{Bucket: b, Key: aws.String("k"), UploadId: id,
			IfMatchInitiatedTime: &at}, noRetry)
		return err
	}
	id, _, _ := uploadOnePart(t, cl, *b, "k")
	at := initiated(id)
	if err := abort(id, at.AddDate(-1, 0, 1)); apiCode(err) != "PreconditionFailed" {
		t.Fatalf("abort with another time: %v", err)
	}
	if err := abort(id, at); err != nil {
		t.Fatalf("abort with the initiated time: %v", err)
	}
	if _, err := cl.ListParts(ctx, &s3.ListPartsInput{Bucket: b, Key: aws.String("k"), UploadId: id}); apiCode(err) != "NoSuchUpload" {
		t.Fatalf("after the abort: %v", err)
	}
	id, _, _ = uploadOnePart(t, cl, *b, "k")
	if err := abort(id, time.Now().AddDate(1, 0, 0)); err != nil {
		t.Fatalf("abort with a future time: %v", err)
	}
}

// Refusals whose body carries S3's detail elements, read raw: parts,
// ranges, digests, copy ranges, conditional PUTs, dot-segment keys and
// anonymous callers; and CreateBucket's ARN.
func TestCompatErrorDetails(t *testing.T) {
	c := startServer(t)
	cl := newAWS(t, c)
	rc := newRaw(t, c)
	ctx := context.Background()
	cb, err := cl.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("details")})
	if err != nil {
		t.Fatal(err)
	}
	if aws.ToString(cb.BucketArn) != "arn:aws:s3:::details" || aws.ToString(cb.Location) != "/details" {
		t.Errorf("CreateBucket: arn %q, location %q", aws.ToString(cb.BucketArn), aws.ToString(cb.Location))
	}
	data := payload(5, 100)
	if _, err := cl.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("details"), Key: aws.String("obj"), Body: bytes.NewReader(data)}); err != nil {
		t.Fatal(err)
	}
	id, parts, _ := uploadOnePart(t, cl, "details", "mp")
	sum := md5.Sum([]byte("x"))
	stated := md5.Sum([]byte("y"))
	notImpl := map[string]string{"Code": "NotImplemented", "Message": "A header you provided implies functionality that is not implemented."}
	cases := []struct {
		name   string
		req    rawReq
		status int
		want   map[string]string
	}{
		{"unknown part", rawReq{method: "POST", path: "/details/mp?uploadId=" + *id, body: []byte(fmt.Sprintf(
			"<CompleteMultipartUpload><Part><PartNumber>5</PartNumber><ETag>%s</ETag></Part></CompleteMultipartUpload>", *parts[0].ETag))},
			400, map[string]string{
				"Code":     "InvalidPart",
				"Message":  "One or more of the specified parts could not be found.  The part may not have been uploaded, or the specified entity tag may not match the part's entity tag.",
				"UploadId": *id, "PartNumber": "5", "ETag": strings.Trim(*parts[0].ETag, `"`),
			}},
		{"range past the end", rawReq{method: "GET", path: "/details/obj", headers: map[string]string{"Range": "bytes=100-110"}},
			416, map[string]string{"Code": "InvalidRange", "Message": "The requested range is not satisfiable", "RangeRequested": "bytes=100-110", "ActualObjectSize": "100"}},
		{"bad content-md5", rawReq{method: "PUT", path: "/details/x", body: []byte("x"), headers: map[string]string{"Content-MD5": "invalid_md5"}},
			400, map[string]string{"Code": "InvalidDigest", "Message": "The Content-Md5 you specified is not valid.", "Content-MD5": "invalid_md5"}},
		{"wrong content-md5", rawReq{method: "PUT", path: "/details/x", body: []byte("x"), headers: map[string]string{"Content-MD5": base64.StdEncoding.EncodeToString(stated[:])}},
			400, map[string]string{"Code": "BadDigest", "CalculatedDigest": base64.StdEncoding.EncodeToString(sum[:]), "ExpectedDigest": hex.EncodeToString(stated[:])}},
		{"copy range", rawReq{method: "PUT", path: "/details/mp?partNumber=2&uploadId=" + *id,
			headers: map[string]string{"X-Amz-Copy-Source": "details/obj", "X-Amz-Copy-Source-Range": "bytes=200-100"}},
			400, map[string]string{"Code": "InvalidArgument", "ArgumentName": "x-amz-copy-source-range", "ArgumentValue": "bytes=200-100",
				"Message": "The x-amz-copy-source-range value must be of the form bytes=first-last where first and last are the zero-based offsets of the first and last bytes to copy"}},
		{"part copy to a missing bucket", rawReq{method: "PUT", path: "/nobucket/k?partNumber=1&uploadId=x",
			headers: map[string]string{"X-Amz-Copy-Source": "Copy-Source"}}, 404, map[string]string{"Code": "NoSuchBucket"}},
		{"if-none-match etag", rawReq{method: "PUT", path: "/details/obj", body: []byte("x"), headers: map[string]string{"If-None-Match": `"abc"`}}, 501, notImpl},
		{"if-match and if-none-match", rawReq{method: "PUT", path: "/details/obj", body: []byte("x"),
			headers: map[string]string{"If-None-Match": "*", "If-Match": `"abc"`}}, 501, notImpl},
		{"climbing key", rawReq{method: "PUT", path: "/details/a/../../etc/passwd", body: []byte("x")}, 400, map[string]string{"Code": "400", "Message": "Bad Request"}},
		{"anonymous create", rawReq{method: "PUT", path: "/anon", anonymous: true}, 403,
			map[string]string{"Code": "AccessDenied", "Message": "Anonymous users cannot invoke this API. Please authenticate."}},
		{"anonymous copy", rawReq{method: "PUT", path: "/details/copy", anonymous: true, headers: map[string]string{"X-Amz-Copy-Source": "details/obj"}}, 403,
			map[string]string{"Code": "AccessDenied", "Message": "Anonymous users cannot copy objects. Please authenticate."}},
		{"anonymous upload", rawReq{method: "POST", path: "/details/k?uploads", anonymous: true}, 403,
			map[string]string{"Code": "AccessDenied", "Message": "Anonymous users cannot initiate multipart uploads. Please authenticate."}},
		{"anonymous get", rawReq{method: "GET", path: "/details/obj", anonymous: true}, 403,
			map[string]string{"Code": "AccessDenied", "Message": "Access Denied."}},
	}
	before := snapshot(t, c)
	for _, tc := range cases {
		rc.expectElems(tc.name, tc.req, tc.status, tc.want)
	}
	if after := snapshot(t, c); after != before {
		t.Fatalf("refused requests changed the store:\nbefore:\n%s\nafter:\n%s", before, after)
	}
	// Writes under such a key are refused; reads and deletes go through,
	// so what an earlier version stored under one can still be removed.
	if status, _, _ := rc.do(rawReq{method: http.MethodPut, path: "/details/..", body: []byte("x")}); status != http.StatusBadRequest {
		t.Errorf("PUT of a dot-segment key: %d, want 400", status)
	}
	if status, _, _ := rc.do(rawReq{method: http.MethodHead, path: "/details/.."}); status != http.StatusNotFound {
		t.Errorf("HEAD of a dot-segment key: %d, want 404", status)
	}
}
