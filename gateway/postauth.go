package gateway

import (
	"errors"
	"strings"

	"tessera/gateway/sigv4"
)

// postAuthErr renders a POST form's signature failure as S3 answers it,
// with the elements S3 adds: the field at fault, the access key, and for
// a mismatch the string that was signed, so a client can compare.
func postAuthErr(err error) error {
	var pe *sigv4.PolicyError
	if !errors.As(err, &pe) {
		return err
	}
	switch pe.Problem {
	case sigv4.PolicyUnsigned:
		return apiErr(errAccessDenied)
	case sigv4.PolicyBadField:
		return withFields(apiErrf(errInvalidArgument, "%s", pe.Message),
			errorField{"ArgumentName", pe.Field}, errorField{"ArgumentValue", pe.Value})
	case sigv4.PolicyStale:
		return policyDenied("Policy expired.")
	case sigv4.PolicyUnknownKey:
		return withFields(apiErrf(errInvalidAccessKeyID, "The AWS Access Key Id you provided does not exist in our records."),
			errorField{"AWSAccessKeyId", pe.AccessKey})
	}
	return withFields(apiErr(errSignatureDoesNotMatch),
		errorField{"AWSAccessKeyId", pe.AccessKey},
		errorField{"StringToSign", pe.Policy},
		errorField{"SignatureProvided", pe.Signature},
		errorField{"StringToSignBytes", spacedHex(pe.Policy)})
}

// spacedHex is S3's <StringToSignBytes>: each byte in hex, space-separated.
func spacedHex(s string) string {
	const digits = "0123456789abcdef"
	var b strings.Builder
	b.Grow(3 * len(s))
	for i := 0; i < len(s); i++ {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteByte(digits[s[i]>>4])
		b.WriteByte(digits[s[i]&0xf])
	}
	return b.String()
}
