package gateway

import (
	"errors"
	"net/http"
	"testing"
)

// requireCode fails unless err is a handler error with one of codes.
func requireCode(t *testing.T, err error, codes ...errCode) {
	t.Helper()
	var se *s3Error
	if !errors.As(err, &se) {
		t.Fatalf("error %v is not an S3 error", err)
	}
	for _, c := range codes {
		if se.code == c {
			return
		}
	}
	t.Fatalf("unexpected code in %v", err)
}

func FuzzCompleteMultipart(f *testing.F) {
	f.Add([]byte(completeBody("1", `"abc"`, "2", "def")))
	f.Add([]byte(completeBody("2", "a", "1", "b")))
	f.Add([]byte(completeBody("10000", "&quot;x&quot;")))
	f.Add([]byte(completeBody("-4", "x", "1", "y")))
	f.Add([]byte("<CompleteMultipartUpload><Part><ETag>x</ETag></Part></CompleteMultipartUpload>"))
	f.Add([]byte("<CompleteMultipartUpload/>"))
	f.Add([]byte("<CompleteMultipartUpload><Part><PartNumber>1</PartNumber><ETag>\"e\"</ETag><ChecksumCRC32>AAAA</ChecksumCRC32></Part></CompleteMultipartUpload>"))
	f.Add([]byte(""))
	f.Fuzz(func(t *testing.T, body []byte) {
		parts, err := parseCompleteMultipart(body)
		if err != nil {
			requireCode(t, err, errMalformedXML, errInvalidArgument, errInvalidPartOrder, errInvalidPart)
			return
		}
		if len(parts) == 0 {
			t.Fatal("accepted a body without parts")
		}
		for i, p := range parts {
			if p.Number < 1 || (i > 0 && p.Number <= parts[i-1].Number) {
				t.Fatalf("accepted part numbers out of order or below 1: %+v", parts)
			}
			if p.ETag == "" {
				t.Fatal("accepted an empty ETag")
			}
		}
	})
}

func FuzzDeleteObjects(f *testing.F) {
	f.Add([]byte(deleteBody(true, "a", "b/c")))
	f.Add([]byte(deleteBody(false, "")))
	f.Add([]byte("<Delete><Quiet>1</Quiet><Object><Key>k</Key><VersionId>null</VersionId></Object></Delete>"))
	f.Add([]byte("<Delete/>"))
	f.Add([]byte("<Delete><Object><Key>&#0;</Key></Object></Delete>"))
	f.Fuzz(func(t *testing.T, body []byte) {
		req, err := parseDeleteObjects(body)
		if err != nil {
			requireCode(t, err, errMalformedXML)
			return
		}
		if n := len(req.Objects); n > maxDeleteKeys {
			t.Fatalf("accepted %d objects", n)
		}
	})
}

func FuzzCreateBucketConfig(f *testing.F) {
	f.Add([]byte(""))
	f.Add([]byte("<CreateBucketConfiguration><LocationConstraint>us-east-1</LocationConstraint></CreateBucketConfiguration>"))
	f.Add([]byte("<CreateBucketConfiguration><LocationConstraint>eu-west-1</LocationConstraint></CreateBucketConfiguration>"))
	f.Add([]byte("<CreateBucketConfiguration>"))
	f.Add([]byte("<CreateBucketConfiguration><Tags><Tag><Key>k</Key><Value>v</Value></Tag></Tags></CreateBucketConfiguration>"))
	f.Add([]byte("<CreateBucketConfiguration><Tags><Tag><Key>a*</Key></Tag></Tags></CreateBucketConfiguration>"))
	f.Fuzz(func(t *testing.T, body []byte) {
		tags, err := parseCreateBucketConfig(body, "us-east-1")
		if err != nil {
			requireCode(t, err, errMalformedXML, errInvalidLocationConstraint, errInvalidTag, errBadRequest)
			return
		}
		if err := validateBucketTags(tags); err != nil {
			t.Fatalf("accepted tags that do not validate: %v", err)
		}
	})
}

// FuzzChecksumHeaders: CreateMultipartUpload's, CompleteMultipartUpload's
// and GetObjectAttributes' headers parse to values the layers accept or
// to an S3 error of the expected code.
func FuzzChecksumHeaders(f *testing.F) {
	f.Add("CRC32", "FULL_OBJECT", "AAAAAA==", "ETag,Checksum")
	f.Add("crc64nvme", "composite", "AAAAAAAAAAA=-3", "ObjectParts")
	f.Add("", "COMPOSITE", "rVWtNbadtsaKXJAcgWPWjifHzJaXde/iV4jaJAOdivc=-3", "")
	f.Add("MD5", "", "x", "Bogus")
	f.Fuzz(func(t *testing.T, alg, typ, value, attrs string) {
		h := http.Header{}
		h.Set("X-Amz-Checksum-Algorithm", alg)
		h.Set("X-Amz-Checksum-Type", typ)
		h.Set("X-Amz-Checksum-Sha256", value)
		h.Set("X-Amz-Object-Attributes", attrs)
		if a, ty, err := parseMultipartChecksum(h); err != nil {
			requireCode(t, err, errInvalidRequest)
		} else if a != "" && !a.Allows(ty) {
			t.Fatalf("accepted %s with %s", a, ty)
		}
		if opts, err := parseCompleteChecksum(h); err != nil {
			requireCode(t, err, errInvalidRequest)
		} else if !opts.Checksum.IsZero() {
			if _, _, err := opts.Checksum.Algorithm.DecodeComposite(opts.Checksum.Value); err != nil {
				t.Fatalf("accepted %q: %v", opts.Checksum.Value, err)
			}
		}
		if p, err := parseAttributes(h); err != nil {
			requireCode(t, err, errInvalidRequest, errInvalidArgument)
		} else if len(p.want) == 0 {
			t.Fatal("accepted no attributes")
		}
	})
}
