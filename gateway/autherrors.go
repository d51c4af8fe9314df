package gateway

import (
	"encoding/hex"
	"errors"
	"strconv"
	"strings"
	"time"

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
// beside Code and Message, in S3's order. Clients act on some of them:
// s3cmd and the SDKs re-sign for <Region> when they signed for another
// region; the SDKs correct their clock from <ServerTime>.
func authElements(err error) []errorField {
	var ae *sigv4.Error
	if !errors.As(err, &ae) {
		return nil
	}
	var out []errorField
	add := func(name, value string) {
		if value != "" {
			out = append(out, errorField{name, value})
		}
	}
	add("AWSAccessKeyId", ae.AccessKeyID)
	if ae.StringToSign != "" {
		add("StringToSign", ae.StringToSign)
		add("SignatureProvided", ae.SignatureProvided)
		add("StringToSignBytes", hexBytes(ae.StringToSign))
		add("CanonicalRequest", ae.CanonicalRequest)
		add("CanonicalRequestBytes", hexBytes(ae.CanonicalRequest))
	}
	add("Region", ae.Region)
	add("HeadersNotSigned", ae.HeadersNotSigned)
	add("ArgumentName", ae.ArgumentName)
	add("ArgumentValue", ae.ArgumentValue)
	add("ClientComputedContentSHA256", ae.ClientSHA256)
	add("S3ComputedContentSHA256", ae.ComputedSHA256)
	if ae.Chunk > 0 {
		add("Chunk", strconv.Itoa(ae.Chunk))
		add("BadChunkSize", strconv.FormatInt(ae.BadChunkSize, 10))
	}
	add("X-Amz-Expires", ae.XAmzExpires)
	if !ae.Expires.IsZero() {
		add("Expires", isoTime(ae.Expires))
		add("ServerTime", isoTime(ae.ServerTime))
	}
	if ae.RequestTime != "" {
		add("RequestTime", ae.RequestTime)
		add("ServerTime", isoTime(ae.ServerTime))
		add("MaxAllowedSkewMilliseconds", strconv.FormatInt(ae.MaxSkew.Milliseconds(), 10))
	}
	return out
}

func isoTime(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05Z") }

// hexBytes writes s as S3's *Bytes elements do: each byte as two hex
// digits, separated by spaces.
func hexBytes(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(hex.EncodeToString([]byte{s[i]}))
	}
	return b.String()
}
