package gateway

import (
	"errors"

	"tessera/gateway/sigv4"
)

// authErrorDetails are the elements S3 adds to an authentication error
// beside Code and Message. Clients act on some of them: s3cmd and the
// SDKs re-sign for <Region> when they signed for another region.
type authErrorDetails struct {
	Region           string `xml:"Region,omitempty"`
	HeadersNotSigned string `xml:"HeadersNotSigned,omitempty"`
	XAmzExpires      string `xml:"X-Amz-Expires,omitempty"`
	Expires          string `xml:"Expires,omitempty"`
	ServerTime       string `xml:"ServerTime,omitempty"`
}

// authMessage is the S3 message a verification error carries, or def.
func authMessage(err error, def string) string {
	var ae *sigv4.Error
	if errors.As(err, &ae) && ae.Message != "" {
		return ae.Message
	}
	return def
}

// authDetails extracts the extra elements of a verification error.
func authDetails(err error) authErrorDetails {
	var ae *sigv4.Error
	if !errors.As(err, &ae) {
		return authErrorDetails{}
	}
	d := authErrorDetails{Region: ae.Region, HeadersNotSigned: ae.HeadersNotSigned, XAmzExpires: ae.XAmzExpires}
	if !ae.Expires.IsZero() {
		d.Expires = ae.Expires.UTC().Format("2006-01-02T15:04:05Z")
		d.ServerTime = ae.ServerTime.UTC().Format("2006-01-02T15:04:05Z")
	}
	return d
}
