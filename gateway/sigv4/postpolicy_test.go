package sigv4

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strings"
	"testing"
	"time"
)

// policySig signs a policy as a client does, independently of the
// package's own key derivation.
func policySig(secret, date, region, policy string) string {
	mac := func(key []byte, s string) []byte {
		m := hmac.New(sha256.New, key)
		m.Write([]byte(s))
		return m.Sum(nil)
	}
	k := mac(mac(mac(mac([]byte("AWS4"+secret), date), region), "s3"), "aws4_request")
	return hex.EncodeToString(mac(k, policy))
}

func v4Form(now time.Time) map[string]string {
	const policy = "eyJleHBpcmF0aW9uIjoiMjAzMC0wMS0wMVQwMDowMDowMFoiLCJjb25kaXRpb25zIjpbXX0="
	day := now.Format(scopeDate)
	return map[string]string{
		"policy":           policy,
		"x-amz-algorithm":  "AWS4-HMAC-SHA256",
		"x-amz-credential": testAK + "/" + day + "/us-east-1/s3/aws4_request",
		"x-amz-date":       now.Format(iso8601Format),
		"x-amz-signature":  policySig(testSecret, day, "us-east-1", policy),
		"key":              "k",
	}
}

func TestVerifyPolicy(t *testing.T) {
	v := newVerifier(testNow)
	sigUpper := strings.ToUpper(v4Form(testNow)["x-amz-signature"])
	cases := []struct {
		name    string
		change  map[string]string
		drop    []string
		problem PolicyProblem // -1: verifies
		field   string
		value   string
		message string
	}{
		{"valid V4", nil, nil, -1, "", "", ""},
		{"signature in upper case", map[string]string{"x-amz-signature": sigUpper}, nil, -1, "", "", ""},
		{"anonymous", nil, []string{"policy", "x-amz-algorithm", "x-amz-credential", "x-amz-date", "x-amz-signature"}, PolicyUnsigned, "", "", ""},
		{"only a policy", nil, []string{"x-amz-algorithm", "x-amz-credential", "x-amz-date", "x-amz-signature"}, PolicyBadField,
			"x-amz-algorithm", "", "Bucket POST must contain a field named 'x-amz-algorithm'.  If it is specified, please check the order of the fields."},
		{"no policy", nil, []string{"policy"}, PolicyBadField, "policy", "", "Bucket POST must contain a field named 'policy'.  If it is specified, please check the order of the fields."},
		{"no date", nil, []string{"x-amz-date"}, PolicyBadField, "x-amz-date", "", "Bucket POST must contain a field named 'x-amz-date'.  If it is specified, please check the order of the fields."},
		{"empty signature is present", map[string]string{"x-amz-signature": "-"}, nil, PolicyMismatch, "", "", ""},
		{"algorithm", map[string]string{"x-amz-algorithm": "AWS4-ECDSA-P256-SHA256"}, nil, PolicyBadField,
			"X-Amz-Algorithm", "AWS4-ECDSA-P256-SHA256", "Only AWS4-HMAC-SHA256 is supported"},
		{"date", map[string]string{"x-amz-date": "2024-03-01"}, nil, PolicyBadField,
			"X-Amz-Date", "2024-03-01", "X-Amz-Date must be formated via ISO8601 Long format"},
		{"stale date", map[string]string{"x-amz-date": testNow.Add(-61 * time.Minute).Format(iso8601Format)}, nil, PolicyStale, "", "", ""},
		{"future date", map[string]string{"x-amz-date": testNow.Add(24 * time.Hour).Format(iso8601Format)}, nil, -1, "", "", ""},
		{"credential", map[string]string{"x-amz-credential": "nope"}, nil, PolicyBadField, "x-amz-credential", "nope",
			`the Credential is mal-formed; expecting "<YOUR-AKID>/YYYYMMDD/REGION/SERVICE/aws4_request".`},
		{"credential service", map[string]string{"x-amz-credential": testAK + "/20240301/us-east-1/ec2/aws4_request"}, nil, PolicyBadField,
			"x-amz-credential", testAK + "/20240301/us-east-1/ec2/aws4_request", `incorrect service "ec2". This endpoint belongs to "s3".`},
		{"region", map[string]string{"x-amz-credential": testAK + "/20240301/eu-west-1/s3/aws4_request"}, nil, PolicyBadField,
			"x-amz-credential", testAK + "/20240301/eu-west-1/s3/aws4_request", `the region "eu-west-1" is wrong; expecting "us-east-1"`},
		{"unknown key", map[string]string{"x-amz-credential": "nobody/20240301/us-east-1/s3/aws4_request"}, nil, PolicyUnknownKey, "", "", ""},
		{"another policy", map[string]string{"policy": "e30="}, nil, PolicyMismatch, "", "", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := v4Form(testNow)
			for k, val := range c.change {
				f[k] = val
			}
			for _, k := range c.drop {
				delete(f, k)
			}
			ak, err := v.VerifyPolicy(f)
			if c.problem == -1 {
				if err != nil || ak != testAK {
					t.Fatalf("%q, %v", ak, err)
				}
				return
			}
			var pe *PolicyError
			if !errors.As(err, &pe) || pe.Problem != c.problem {
				t.Fatalf("error %v, want problem %d", err, c.problem)
			}
			if pe.Field != c.field || pe.Value != c.value || pe.Message != c.message {
				t.Fatalf("field %q value %q message %q", pe.Field, pe.Value, pe.Message)
			}
		})
	}
}

func TestVerifyPolicyV2(t *testing.T) {
	v := newVerifier(testNow)
	form := func() map[string]string {
		return map[string]string{"awsaccesskeyid": testAK, "policy": "cG9saWN5", "signature": SignV2(testSecret, "cG9saWN5")}
	}
	if ak, err := v.VerifyPolicy(form()); err != nil || ak != testAK {
		t.Fatalf("valid V2 form: %q, %v", ak, err)
	}
	f := form()
	f["signature"] = "bad"
	var pe *PolicyError
	if _, err := v.VerifyPolicy(f); !errors.As(err, &pe) || pe.Problem != PolicyMismatch ||
		pe.AccessKey != testAK || pe.Policy != "cG9saWN5" || pe.Signature != "bad" {
		t.Fatalf("bad V2 signature: %v", err)
	}
	f = form()
	delete(f, "policy")
	if _, err := v.VerifyPolicy(f); !errors.As(err, &pe) || pe.Problem != PolicyBadField || pe.Field != "policy" {
		t.Fatalf("V2 without policy: %v", err)
	}
	f = form()
	f["awsaccesskeyid"] = "nobody"
	if _, err := v.VerifyPolicy(f); !errors.As(err, &pe) || pe.Problem != PolicyUnknownKey || pe.AccessKey != "nobody" {
		t.Fatalf("V2 unknown key: %v", err)
	}
	if !errors.Is(pe, ErrInvalidAccessKeyID) {
		t.Fatal("PolicyUnknownKey does not wrap ErrInvalidAccessKeyID")
	}
}
