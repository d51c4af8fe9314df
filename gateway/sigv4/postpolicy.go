package sigv4

import (
	"crypto/hmac"
	"encoding/hex"
	"fmt"
	"strings"
	"time"
)

// PolicyProblem says what is wrong with the signature fields of a browser
// POST form, so the gateway can answer with S3's code for it.
type PolicyProblem int

// The problems, each with the S3 code it is answered with.
const (
	// PolicyUnsigned: the form carries none of the signature fields, an
	// anonymous upload (AccessDenied).
	PolicyUnsigned PolicyProblem = iota
	// PolicyBadField: a signature field is missing or malformed
	// (InvalidArgument, naming the field in <ArgumentName>).
	PolicyBadField
	// PolicyStale: x-amz-date is more than an hour old (AccessDenied
	// "Invalid according to Policy: Policy expired.").
	PolicyStale
	// PolicyUnknownKey: no such access key (InvalidAccessKeyId).
	PolicyUnknownKey
	// PolicyMismatch: the signature does not match (SignatureDoesNotMatch).
	PolicyMismatch
)

// PolicyError is a POST form whose signature fields do not authenticate
// it, with what S3 puts in its error document beside the code. It wraps
// the sentinel of api.go that matches its problem.
type PolicyError struct {
	Problem PolicyProblem
	// Message is S3's <Message> for PolicyBadField.
	Message string
	// Field and Value name the field at fault and what it held
	// (<ArgumentName>, <ArgumentValue>), for PolicyBadField.
	Field, Value string
	// AccessKey is the key the form names (<AWSAccessKeyId>).
	AccessKey string
	// Policy and Signature are the string signed (the base64 policy)
	// and the signature sent, for PolicyMismatch.
	Policy, Signature string
}

func (e *PolicyError) Error() string {
	if e.Message != "" {
		return e.Unwrap().Error() + ": " + e.Message
	}
	return e.Unwrap().Error()
}

func (e *PolicyError) Unwrap() error {
	switch e.Problem {
	case PolicyUnsigned:
		return ErrMissingAuth
	case PolicyBadField:
		return ErrInvalidAuthorization
	case PolicyStale:
		return ErrExpired
	case PolicyUnknownKey:
		return ErrInvalidAccessKeyID
	}
	return ErrSignatureDoesNotMatch
}

// maxPolicyAge is how old a form's x-amz-date may be: S3 answers an older
// one as an expired policy, whatever the policy's own expiration says.
const maxPolicyAge = time.Hour

// The signature fields of the two forms, in the order S3 asks for the
// first one missing. A form is V4 when it has any x-amz-* signature
// field, V2 when it has AWSAccessKeyId or signature, and anonymous when
// it has none of them and no policy.
var (
	policyFieldsV4 = []string{"policy", "x-amz-algorithm", "x-amz-credential", "x-amz-date", "x-amz-signature"}
	policyFieldsV2 = []string{"AWSAccessKeyId", "policy", "signature"}
)

// VerifyPolicy checks the signature of a browser POST upload form over its
// base64 policy document, in V4 (x-amz-algorithm, x-amz-credential,
// x-amz-date, x-amz-signature) or V2 (AWSAccessKeyId, signature) form.
// fields holds the form fields present, by lowercase name; an empty value
// is present. It returns the access key, or a *PolicyError; the policy's
// expiration and conditions are the caller's to check.
func (v *Verifier) VerifyPolicy(fields map[string]string) (string, error) {
	switch {
	case hasAny(fields, policyFieldsV4[1:]...):
		return v.verifyPolicyV4(fields)
	case hasAny(fields, "awsaccesskeyid", "signature"):
		return v.verifyPolicyV2(fields)
	case hasAny(fields, "policy"):
		return v.verifyPolicyV4(fields)
	}
	return "", &PolicyError{Problem: PolicyUnsigned}
}

func (v *Verifier) verifyPolicyV4(fields map[string]string) (string, error) {
	if err := requireFields(fields, policyFieldsV4); err != nil {
		return "", err
	}
	if alg := fields["x-amz-algorithm"]; alg != algorithm {
		return "", badField("X-Amz-Algorithm", alg, "Only AWS4-HMAC-SHA256 is supported")
	}
	date := fields["x-amz-date"]
	t, err := parseAmzDate(date)
	if err != nil {
		return "", badField("X-Amz-Date", date, "X-Amz-Date must be formated via ISO8601 Long format")
	}
	if v.now().Sub(t) > maxPolicyAge {
		return "", &PolicyError{Problem: PolicyStale}
	}
	credField := fields["x-amz-credential"]
	cred, err := parseCredential(credField)
	if fe, ok := err.(*formError); ok {
		return "", badField("x-amz-credential", credField, fe.header)
	} else if err != nil {
		return "", err
	}
	if v.Region != "" && cred.region != v.Region {
		return "", badField("x-amz-credential", credField,
			fmt.Sprintf("the region %q is wrong; expecting %q", clip(cred.region, 64), v.Region))
	}
	secret, ok := v.lookup(cred.accessKey)
	if !ok {
		return "", &PolicyError{Problem: PolicyUnknownKey, AccessKey: cred.accessKey}
	}
	policy, sig := fields["policy"], fields["x-amz-signature"]
	want := hex.EncodeToString(hmacSHA256(signingKey(secret, cred.date, cred.region), policy))
	if !hmac.Equal([]byte(want), []byte(strings.ToLower(sig))) {
		return "", &PolicyError{Problem: PolicyMismatch, AccessKey: cred.accessKey, Policy: policy, Signature: sig}
	}
	return cred.accessKey, nil
}

func (v *Verifier) verifyPolicyV2(fields map[string]string) (string, error) {
	if err := requireFields(fields, policyFieldsV2); err != nil {
		return "", err
	}
	ak, policy, sig := fields["awsaccesskeyid"], fields["policy"], fields["signature"]
	secret, ok := v.lookup(ak)
	if !ok {
		return "", &PolicyError{Problem: PolicyUnknownKey, AccessKey: ak}
	}
	if !hmac.Equal([]byte(SignV2(secret, policy)), []byte(sig)) {
		return "", &PolicyError{Problem: PolicyMismatch, AccessKey: ak, Policy: policy, Signature: sig}
	}
	return ak, nil
}

func (v *Verifier) lookup(accessKey string) (string, bool) {
	if v.Lookup == nil {
		return "", false
	}
	return v.Lookup(accessKey)
}

// requireFields answers the first of names missing from fields as S3
// does; names are spelled as S3 spells them in its message.
func requireFields(fields map[string]string, names []string) error {
	for _, n := range names {
		if _, ok := fields[strings.ToLower(n)]; !ok {
			return badField(n, "", fmt.Sprintf("Bucket POST must contain a field named '%s'.  If it is specified, please check the order of the fields.", n))
		}
	}
	return nil
}

func badField(name, value, message string) *PolicyError {
	return &PolicyError{Problem: PolicyBadField, Field: name, Value: value, Message: message}
}

func hasAny(fields map[string]string, names ...string) bool {
	for _, n := range names {
		if _, ok := fields[n]; ok {
			return true
		}
	}
	return false
}
