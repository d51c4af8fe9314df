package sigv4

import (
	"errors"
	"strings"
	"time"
)

// httpDateLayouts are the forms S3 accepts in a Date header, and in
// x-amz-date for Signature Version 2: RFC 1123 with GMT, UTC or a numeric
// zone (s3cmd sends "+0000", the AWS documentation's own examples do too),
// RFC 850, ANSI C asctime, and the ISO 8601 basic form of SigV4.
var httpDateLayouts = []string{
	"Mon, 2 Jan 2006 15:04:05 GMT",
	"Mon, 2 Jan 2006 15:04:05 -0700",
	"Mon, 2 Jan 2006 15:04:05 UTC",
	"Monday, 02-Jan-06 15:04:05 GMT",
	"Mon Jan _2 15:04:05 2006",
	iso8601Format,
}

var errDate = errors.New("not an HTTP date")

// parseHTTPDate parses a request date in any of httpDateLayouts. Dates
// before 1970 are refused, as S3 refuses them.
func parseHTTPDate(v string) (time.Time, error) {
	v = strings.TrimSpace(v)
	if len(v) > 64 {
		return time.Time{}, errDate
	}
	for _, l := range httpDateLayouts {
		if t, err := time.Parse(l, v); err == nil {
			if t.Year() < 1970 {
				return time.Time{}, errDate
			}
			return t.UTC(), nil
		}
	}
	return time.Time{}, errDate
}
