package sigv4

import (
	"crypto/hmac"
	"encoding/hex"
	"fmt"
	"strings"
)

// VerifyPolicy checks the signature of a browser POST upload form over its
// base64 policy document, in V4 (x-amz-algorithm, x-amz-credential,
// x-amz-date, x-amz-signature) or V2 (AWSAccessKeyId, signature) form.
// Field names are lowercase. It returns the access key; the policy's
// expiration and conditions are the caller's to check.
func (v *Verifier) VerifyPolicy(fields map[string]string) (string, error) {
	policy := fields["policy"]
	if policy == "" {
		return "", fmt.Errorf("%w: POST form without a policy", ErrMissingAuth)
	}
	if v.Lookup == nil {
		return "", ErrInvalidAccessKeyID
	}
	if alg := fields["x-amz-algorithm"]; alg != "" {
		if alg != algorithm {
			return "", fmt.Errorf("%w: algorithm %.64q", ErrUnsupported, alg)
		}
		cred, err := parseCredential(fields["x-amz-credential"])
		if err != nil {
			return "", err
		}
		if v.Region != "" && cred.region != v.Region {
			return "", malformed("region %.64q is wrong; expecting %q", cred.region, v.Region)
		}
		secret, ok := v.Lookup(cred.accessKey)
		if !ok {
			return "", fmt.Errorf("%w: %.128q", ErrInvalidAccessKeyID, cred.accessKey)
		}
		want := hex.EncodeToString(hmacSHA256(signingKey(secret, cred.date, cred.region), policy))
		if !hmac.Equal([]byte(want), []byte(strings.ToLower(fields["x-amz-signature"]))) {
			return "", ErrSignatureDoesNotMatch
		}
		return cred.accessKey, nil
	}
	ak := fields["awsaccesskeyid"]
	if ak == "" {
		return "", malformed("POST form has neither x-amz-credential nor AWSAccessKeyId")
	}
	secret, ok := v.Lookup(ak)
	if !ok {
		return "", fmt.Errorf("%w: %.128q", ErrInvalidAccessKeyID, ak)
	}
	if !hmac.Equal([]byte(SignV2(secret, policy)), []byte(fields["signature"])) {
		return "", ErrSignatureDoesNotMatch
	}
	return ak, nil
}
