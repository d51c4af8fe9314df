package gateway

import (
	"errors"

	"tessera/gateway/sigv4"
)

// authMessage is the S3 message a verification error carries, or def.
func authMessage(err error, def string) string {
	var ae *sigv4.Error
	if errors.As(err, &ae) && ae.Message != "" {
		return ae.Message
	}
	return def
}

// authElements are the elements S3 adds to an authentication error
// beside Code and Message. Clients act on some of them: s3cmd and the
// SDKs re-sign for <Region> when they signed for another region.
func authElements(err error) []errorField {
	var ae *sigv4.Error
	if !errors.As(err, &ae) {
		return nil
	}
	var out []errorField
	for _, f := range []errorField{{"Region", ae.Region}, {"HeadersNotSigned", ae.HeadersNotSigned}, {"X-Amz-Expires", ae.XAmzExpires}} {
		if f.Value != "" {
			out = append(out, f)
		}
	}
	if !ae.Expires.IsZero() {
		out = append(out, errorField{"Expires", ae.Expires.UTC().Format("2006-01-02T15:04:05Z")},
			errorField{"ServerTime", ae.ServerTime.UTC().Format("2006-01-02T15:04:05Z")})
	}
	return out
}
