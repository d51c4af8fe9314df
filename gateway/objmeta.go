package gateway

import (
	"io"
	"net/http"
	"strconv"
	"strings"

	"tessera/object"
)

// Object headers tessera stores for itself in ObjectInfo.Headers. They are
// never echoed as-is: checksums only with x-amz-checksum-mode: ENABLED,
// tags only as a count.
const (
	checksumHeaderPrefix = "X-Amz-Checksum-"
	tagsHeader           = "X-Tessera-Tagging"
)

// internalHeader reports whether a stored header is one of ours.
func internalHeader(name string) bool {
	return name == tagsHeader || strings.HasPrefix(name, checksumHeaderPrefix)
}

// checksumRecorder copies the checksums the Authenticator validated into
// the stored headers once the body has been read to its end: trailer
// checksums are only known then, and the object layer commits the record
// after the body is drained.
type checksumRecorder struct {
	r       io.Reader
	req     *http.Request
	headers map[string]string
	done    bool
}

func recordChecksums(body io.Reader, r *http.Request, headers map[string]string) io.Reader {
	if headers == nil {
		return body
	}
	return &checksumRecorder{r: body, req: r, headers: headers}
}

func (c *checksumRecorder) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	if err == io.EOF && !c.done {
		c.done = true
		for name, sum := range authResult(c.req).Checksums {
			c.headers[checksumHeaderPrefix+strings.ToUpper(name)] = sum
		}
	}
	return n, err
}

// setStoredExtras writes the stored checksums (when asked for) and the tag
// count of a GET or HEAD response.
func setStoredExtras(h http.Header, r *http.Request, info object.ObjectInfo) {
	withSums := strings.EqualFold(r.Header.Get("X-Amz-Checksum-Mode"), "ENABLED")
	for k, v := range info.Headers {
		switch {
		case k == tagsHeader:
			if tags, err := parseTagQuery(v); err == nil && len(tags) > 0 {
				h.Set("X-Amz-Tagging-Count", strconv.Itoa(len(tags)))
			}
		case withSums && strings.HasPrefix(k, checksumHeaderPrefix):
			h.Set(k, v)
		}
	}
}
