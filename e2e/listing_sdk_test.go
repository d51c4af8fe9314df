package e2e

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"
)

// apiMessage is an SDK error's S3 code and message.
func apiMessage(err error) string {
	var ae smithy.APIError
	if errors.As(err, &ae) {
		return ae.ErrorCode() + ": " + ae.ErrorMessage()
	}
	return fmt.Sprint(err)
}

// TestListBucketsPagination drives ListBuckets' 2024 parameters through
// aws-sdk-go-v2: max-buckets pages with the last bucket name as token,
// prefix is echoed, bucket-region filters, each bucket names its region,
// and the owner is the signing key's.
func TestListBucketsPagination(t *testing.T) {
	c := startServer(t)
	cl := newAWS(t, c)
	ctx := context.Background()
	names := []string{"lb-a1", "lb-a2", "lb-a3", "lb-b1", "lb-b2"}
	for _, n := range names {
		mustMakeBucket(t, c, n)
	}
	cases := []struct {
		name   string
		in     s3.ListBucketsInput
		want   []string
		prefix *string
	}{
		{"whole list", s3.ListBucketsInput{}, names, nil},
		{"pages of two", s3.ListBucketsInput{MaxBuckets: aws.Int32(2)}, names, nil},
		{"prefix, pages of one", s3.ListBucketsInput{MaxBuckets: aws.Int32(1), Prefix: aws.String("lb-a")}, names[:3], aws.String("lb-a")},
		{"prefix without max-buckets", s3.ListBucketsInput{Prefix: aws.String("lb-b")}, names[3:], aws.String("lb-b")},
		{"own region", s3.ListBucketsInput{BucketRegion: aws.String("us-east-1")}, names, nil},
		{"other region", s3.ListBucketsInput{BucketRegion: aws.String("eu-west-1")}, nil, nil},
	}
	for _, tc := range cases {
		var got []string
		in := tc.in
		pages := 0
		for p := s3.NewListBucketsPaginator(cl, &in); p.HasMorePages() && pages <= len(names); pages++ {
			out, err := p.NextPage(ctx)
			if err != nil {
				t.Fatalf("%s: %v", tc.name, err)
			}
			if aws.ToString(out.Owner.ID) != c.srv.Credentials().AccessKey {
				t.Fatalf("%s: owner %q", tc.name, aws.ToString(out.Owner.ID))
			}
			if aws.ToString(out.Prefix) != aws.ToString(tc.prefix) || (out.Prefix == nil) != (tc.prefix == nil) {
				t.Errorf("%s: Prefix %v, want %v", tc.name, out.Prefix, tc.prefix)
			}
			if tok := aws.ToString(out.ContinuationToken); tok != "" && tok != aws.ToString(out.Buckets[len(out.Buckets)-1].Name) {
				t.Errorf("%s: continuation token %q is not the page's last bucket", tc.name, tok)
			}
			for _, b := range out.Buckets {
				if aws.ToString(b.BucketRegion) != "us-east-1" {
					t.Errorf("%s: %s in region %q", tc.name, aws.ToString(b.Name), aws.ToString(b.BucketRegion))
				}
				got = append(got, aws.ToString(b.Name))
			}
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: %v in %d pages, want %v", tc.name, got, pages, tc.want)
		}
		if n := aws.ToInt32(tc.in.MaxBuckets); n > 0 && pages != (len(tc.want)+int(n)-1)/int(n) {
			t.Errorf("%s: %d pages of %d for %d buckets", tc.name, pages, n, len(tc.want))
		}
	}
	for _, bad := range []struct {
		in   s3.ListBucketsInput
		want string
	}{
		{s3.ListBucketsInput{MaxBuckets: aws.Int32(-3)}, "InvalidArgument: Argument max-buckets must be an integer between 1 and 10000."},
		{s3.ListBucketsInput{MaxBuckets: aws.Int32(10001)}, "InvalidArgument: Argument max-buckets must be an integer between 1 and 10000."},
		{s3.ListBucketsInput{ContinuationToken: aws.String(strings.Repeat("b", 2049))}, "InvalidArgument: The continuation token provided is incorrect."},
	} {
		if _, err := cl.ListBuckets(ctx, &bad.in); apiMessage(err) != bad.want {
			t.Errorf("%+v: %v, want %s", bad.in, apiMessage(err), bad.want)
		}
	}
}

// TestListMultipartUploadsMarkers pages ListMultipartUploads with
// aws-sdk-go-v2 and minio-go: a key's uploads in initiation order,
// key-marker/upload-id-marker as S3 defines them, delimiter prefixes,
// encoded keys, and the owner.
func TestListMultipartUploadsMarkers(t *testing.T) {
	c := startServer(t)
	cl := newAWS(t, c)
	ctx := context.Background()
	mustMakeBucket(t, c, "mpl")
	var order []string // upload IDs in the order S3 lists them
	byKey := map[string][]string{}
	for _, k := range []string{"k a", "k a", "k a", "k+b", "d/1", "d/2"} {
		out, err := cl.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: aws.String("mpl"), Key: aws.String(k)})
		if err != nil {
			t.Fatal(err)
		}
		byKey[k] = append(byKey[k], aws.ToString(out.UploadId))
	}
	for _, k := range []string{"d/1", "d/2", "k a", "k+b"} {
		order = append(order, byKey[k]...)
	}
	list := func(in s3.ListMultipartUploadsInput) *s3.ListMultipartUploadsOutput {
		t.Helper()
		in.Bucket = aws.String("mpl")
		out, err := cl.ListMultipartUploads(ctx, &in)
		if err != nil {
			t.Fatalf("%+v: %v", in, err)
		}
		return out
	}
	ids := func(out *s3.ListMultipartUploadsOutput) []string {
		var s []string
		for _, u := range out.Uploads {
			s = append(s, aws.ToString(u.UploadId))
		}
		return s
	}

	for size := 1; size <= len(order); size++ {
		var got []string
		in := s3.ListMultipartUploadsInput{MaxUploads: aws.Int32(int32(size))}
		for range len(order) + 1 {
			out := list(in)
			got = append(got, ids(out)...)
			if !aws.ToBool(out.IsTruncated) {
				break
			}
			in.KeyMarker, in.UploadIdMarker = out.NextKeyMarker, out.NextUploadIdMarker
		}
		if !slices.Equal(got, order) {
			t.Errorf("pages of %d: %v, want %v", size, got, order)
		}
	}
	cases := []struct {
		name string
		in   s3.ListMultipartUploadsInput
		want []string
	}{
		{"upload-id-marker alone is ignored", s3.ListMultipartUploadsInput{UploadIdMarker: aws.String(byKey["k a"][0])}, order},
		{"key-marker skips its key", s3.ListMultipartUploadsInput{KeyMarker: aws.String("k a")}, byKey["k+b"]},
		{"both resume inside the key", s3.ListMultipartUploadsInput{KeyMarker: aws.String("k a"), UploadIdMarker: aws.String(byKey["k a"][0])},
			append(slices.Clone(byKey["k a"][1:]), byKey["k+b"]...)},
		{"a key-marker without uploads, an upload of the next key", s3.ListMultipartUploadsInput{KeyMarker: aws.String("k"),
			UploadIdMarker: aws.String(byKey["k a"][1])}, append(slices.Clone(byKey["k a"][2:]), byKey["k+b"]...)},
		{"a key-marker without uploads, an upload of a later key", s3.ListMultipartUploadsInput{KeyMarker: aws.String("k"),
			UploadIdMarker: aws.String(byKey["k+b"][0])}, order[2:]},
		{"prefix", s3.ListMultipartUploadsInput{Prefix: aws.String("d/")}, order[:2]},
	}
	for _, tc := range cases {
		if got := ids(list(tc.in)); !slices.Equal(got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}

	// A page ending on a common prefix names the upload that produced it;
	// both markers resume after that upload, and the prefix holding the
	// uploads after it is listed again. key-marker alone skips the prefix.
	first := list(s3.ListMultipartUploadsInput{Delimiter: aws.String("/"), MaxUploads: aws.Int32(1)})
	if len(first.CommonPrefixes) != 1 || aws.ToString(first.CommonPrefixes[0].Prefix) != "d/" || aws.ToString(first.NextKeyMarker) != "d/" ||
		aws.ToString(first.NextUploadIdMarker) != byKey["d/1"][0] || !aws.ToBool(first.IsTruncated) {
		t.Errorf("delimited first page: %+v next %q/%q", first.CommonPrefixes, aws.ToString(first.NextKeyMarker), aws.ToString(first.NextUploadIdMarker))
	}
	out := list(s3.ListMultipartUploadsInput{Delimiter: aws.String("/"), KeyMarker: first.NextKeyMarker, UploadIdMarker: first.NextUploadIdMarker})
	if len(out.CommonPrefixes) != 1 || aws.ToString(out.CommonPrefixes[0].Prefix) != "d/" || !slices.Equal(ids(out), order[2:]) ||
		aws.ToString(out.KeyMarker) != "d/" || aws.ToString(out.UploadIdMarker) != byKey["d/1"][0] || aws.ToBool(out.IsTruncated) {
		t.Errorf("after the prefix's upload: %v %+v", ids(out), out.CommonPrefixes)
	}
	out = list(s3.ListMultipartUploadsInput{Delimiter: aws.String("/"), KeyMarker: first.NextKeyMarker})
	if len(out.CommonPrefixes) != 0 || !slices.Equal(ids(out), order[2:]) {
		t.Errorf("after the prefix: %v %+v", ids(out), out.CommonPrefixes)
	}

	// encoding-type=url encodes keys and echoed markers; the SDK leaves
	// decoding to the caller.
	out = list(s3.ListMultipartUploadsInput{EncodingType: types.EncodingTypeUrl, KeyMarker: aws.String("k "), Prefix: aws.String("k")})
	var keys []string
	for _, u := range out.Uploads {
		keys = append(keys, aws.ToString(u.Key))
		if aws.ToString(u.Owner.ID) != c.srv.Credentials().AccessKey || aws.ToString(u.Initiator.ID) != c.srv.Credentials().AccessKey {
			t.Errorf("upload %s: owner %q initiator %q", aws.ToString(u.Key), aws.ToString(u.Owner.ID), aws.ToString(u.Initiator.ID))
		}
	}
	if strings.Join(keys, ",") != "k+a,k+a,k+a,k%2Bb" || aws.ToString(out.KeyMarker) != "k+" || out.EncodingType != types.EncodingTypeUrl {
		t.Errorf("encoded: keys %v key-marker %q type %q", keys, aws.ToString(out.KeyMarker), out.EncodingType)
	}

	// minio-go lists incomplete uploads with the markers itself.
	var mkeys []string
	for u := range c.mc.ListIncompleteUploads(ctx, "mpl", "k", true) {
		if u.Err != nil {
			t.Fatal(u.Err)
		}
		mkeys = append(mkeys, u.Key)
	}
	if strings.Join(mkeys, ",") != "k a,k a,k a,k+b" {
		t.Errorf("minio-go incomplete uploads: %q", mkeys)
	}

	rc := newRaw(t, c)
	before := snapshot(t, c)
	for _, bad := range []struct{ name, query, message string }{
		{"upload id of another key", query("uploads", "", "key-marker", "k a", "upload-id-marker", byKey["k+b"][0]), "Invalid uploadId marker"},
		{"unknown upload id", query("uploads", "", "key-marker", "k a", "upload-id-marker", "NOSUCHUPLOAD"), "Invalid uploadId marker"},
		{"negative max-uploads", query("uploads", "", "max-uploads", "-3"), "Argument -3 must be an integer between 0 and 2147483647"},
		{"non-numeric max-uploads", query("uploads", "", "max-uploads", "many"), "Provided many not an integer or within integer range"},
		{"bad encoding-type", query("uploads", "", "encoding-type", "abc"), "Invalid Encoding Method specified in Request."},
	} {
		rc.expectMessage(bad.name, rawReq{method: "GET", path: "/mpl?" + bad.query}, 400, "InvalidArgument", bad.message)
	}
	if after := snapshot(t, c); after != before {
		t.Fatalf("refused listings changed the store")
	}
}

// TestListPartsPaging pages ListParts with aws-sdk-go-v2 and checks the
// parameters SDKs never send wrong.
func TestListPartsPaging(t *testing.T) {
	c := startServer(t)
	cl := newAWS(t, c)
	ctx := context.Background()
	mustMakeBucket(t, c, "lparts")
	mp, err := cl.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: aws.String("lparts"), Key: aws.String("obj")})
	if err != nil {
		t.Fatal(err)
	}
	for n := int32(1); n <= 5; n++ {
		if _, err := cl.UploadPart(ctx, &s3.UploadPartInput{Bucket: aws.String("lparts"), Key: aws.String("obj"), UploadId: mp.UploadId,
			PartNumber: aws.Int32(n), Body: strings.NewReader(strings.Repeat("p", int(n)))}); err != nil {
			t.Fatal(err)
		}
	}
	var got []int32
	in := &s3.ListPartsInput{Bucket: aws.String("lparts"), Key: aws.String("obj"), UploadId: mp.UploadId, MaxParts: aws.Int32(2)}
	var markers []string
	for p := s3.NewListPartsPaginator(cl, in); p.HasMorePages(); {
		out, err := p.NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		markers = append(markers, aws.ToString(out.PartNumberMarker)+">"+aws.ToString(out.NextPartNumberMarker)+fmt.Sprint(aws.ToBool(out.IsTruncated)))
		for _, part := range out.Parts {
			got = append(got, aws.ToInt32(part.PartNumber))
		}
		if aws.ToString(out.Owner.ID) != c.srv.Credentials().AccessKey {
			t.Errorf("owner %q", aws.ToString(out.Owner.ID))
		}
	}
	if !slices.Equal(got, []int32{1, 2, 3, 4, 5}) || strings.Join(markers, " ") != "0>2true 2>4true 4>5false" {
		t.Errorf("parts %v, markers %q", got, markers)
	}

	rc := newRaw(t, c)
	path := "/lparts/obj?uploadId=" + url.QueryEscape(aws.ToString(mp.UploadId)) + "&"
	status, body, _ := rc.do(rawReq{method: "GET", path: path + "max-parts=0"})
	if status != 200 || !strings.Contains(string(body), "<MaxParts>0</MaxParts>") || strings.Contains(string(body), "<Part>") ||
		!strings.Contains(string(body), "<IsTruncated>false</IsTruncated>") {
		t.Errorf("max-parts=0: %d %s", status, body)
	}
	for _, bad := range []struct{ name, query, message string }{
		{"negative max-parts", "max-parts=-3", "Argument -3 must be an integer between 0 and 2147483647"},
		{"word marker", "part-number-marker=invalid", "Provided invalid not an integer or within integer range"},
		{"huge marker", "part-number-marker=2736457823532448723", "Provided 2736457823532448723 not an integer or within integer range"},
		{"negative marker", "part-number-marker=-14", "Argument -14 must be an integer between 0 and 2147483647"},
	} {
		rc.expectMessage(bad.name, rawReq{method: "GET", path: path + bad.query}, 400, "InvalidArgument", bad.message)
	}
}

// TestListObjectsChecksums: v1 and v2 listings name each object's
// checksum algorithm and type, as S3 lists them: the one the writer sent,
// or the CRC64NVME every object gets without one.
func TestListObjectsChecksums(t *testing.T) {
	c := startServer(t)
	cl := newAWS(t, c)
	ctx := context.Background()
	mustMakeBucket(t, c, "lsums")
	want := map[string]types.ChecksumAlgorithm{"crc32": types.ChecksumAlgorithmCrc32, "sha1": types.ChecksumAlgorithmSha1,
		"sha256": types.ChecksumAlgorithmSha256}
	for key, alg := range want {
		if _, err := cl.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("lsums"), Key: aws.String(key),
			Body: strings.NewReader(key), ChecksumAlgorithm: alg}); err != nil {
			t.Fatal(err)
		}
	}
	rc := newRaw(t, c)
	if status, body, _ := rc.do(rawReq{method: "PUT", path: "/lsums/plain", body: []byte("no checksum sent")}); status != 200 {
		t.Fatalf("plain put: %d %s", status, body)
	}
	want["plain"] = types.ChecksumAlgorithmCrc64nvme
	check := func(api string, objs []types.Object) {
		if len(objs) != len(want) {
			t.Fatalf("%s: %d objects, want %d", api, len(objs), len(want))
		}
		for _, o := range objs {
			key := aws.ToString(o.Key)
			if !slices.Equal(o.ChecksumAlgorithm, []types.ChecksumAlgorithm{want[key]}) || o.ChecksumType != types.ChecksumTypeFullObject {
				t.Errorf("%s: %s lists checksum %v %q, want %s FULL_OBJECT", api, key, o.ChecksumAlgorithm, o.ChecksumType, want[key])
			}
		}
	}
	v1, err := cl.ListObjects(ctx, &s3.ListObjectsInput{Bucket: aws.String("lsums")})
	if err != nil {
		t.Fatal(err)
	}
	check("ListObjects", v1.Contents)
	v2, err := cl.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String("lsums")})
	if err != nil {
		t.Fatal(err)
	}
	check("ListObjectsV2", v2.Contents)
}

// TestListObjectVersionsSDK pages through ListObjectVersions with the AWS
// SDK's paginator, on a bucket that was never versioned: every object is
// its one latest "null" version, across pages and through a delimiter,
// and deleting each listed version by its id empties the bucket, the way
// clients clean up by versions.
func TestListObjectVersionsSDK(t *testing.T) {
	c := startServer(t)
	cl := newAWS(t, c)
	ctx := context.Background()
	mustMakeBucket(t, c, "lvers")
	var keys []string
	for i := range 25 {
		key := fmt.Sprintf("d%d/k%02d", i%3, i)
		keys = append(keys, key)
		if _, err := cl.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("lvers"), Key: aws.String(key),
			Body: strings.NewReader(key)}); err != nil {
			t.Fatal(err)
		}
	}
	slices.Sort(keys)
	var listed []types.ObjectIdentifier
	pages := 0
	p := s3.NewListObjectVersionsPaginator(cl, &s3.ListObjectVersionsInput{Bucket: aws.String("lvers"), MaxKeys: aws.Int32(7)})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		pages++
		if len(page.DeleteMarkers) != 0 {
			t.Fatalf("delete markers in a bucket never versioned: %+v", page.DeleteMarkers)
		}
		for _, v := range page.Versions {
			if aws.ToString(v.VersionId) != "null" || !aws.ToBool(v.IsLatest) || aws.ToInt64(v.Size) != int64(len(aws.ToString(v.Key))) {
				t.Errorf("version %s: id %q latest %v size %d", aws.ToString(v.Key), aws.ToString(v.VersionId), aws.ToBool(v.IsLatest), aws.ToInt64(v.Size))
			}
			listed = append(listed, types.ObjectIdentifier{Key: v.Key, VersionId: v.VersionId})
		}
	}
	var got []string
	for _, o := range listed {
		got = append(got, aws.ToString(o.Key))
	}
	if !slices.Equal(got, keys) || pages != 4 {
		t.Fatalf("%d pages listed %v, want 4 pages of %v", pages, got, keys)
	}
	d, err := cl.ListObjectVersions(ctx, &s3.ListObjectVersionsInput{Bucket: aws.String("lvers"), Delimiter: aws.String("/")})
	if err != nil || len(d.Versions) != 0 || len(d.CommonPrefixes) != 3 {
		t.Fatalf("delimited: %v, %d versions, %d prefixes", err, len(d.Versions), len(d.CommonPrefixes))
	}
	out, err := cl.DeleteObjects(ctx, &s3.DeleteObjectsInput{Bucket: aws.String("lvers"), Delete: &types.Delete{Objects: listed}})
	if err != nil || len(out.Errors) != 0 || len(out.Deleted) != len(keys) {
		t.Fatalf("delete by version: %v, %d errors, %d deleted", err, len(out.Errors), len(out.Deleted))
	}
	if left, err := cl.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String("lvers")}); err != nil || aws.ToInt32(left.KeyCount) != 0 {
		t.Fatalf("after deleting every version: %v, %d keys left", err, aws.ToInt32(left.KeyCount))
	}
}
