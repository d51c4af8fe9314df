package gateway

import (
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

// setStoredExtras writes the tag count of a GET or HEAD response.
func setStoredExtras(h http.Header, info object.ObjectInfo) {
	if v, ok := info.Headers[tagsHeader]; ok {
		if tags, err := parseTagQuery(v); err == nil && len(tags) > 0 {
			h.Set("X-Amz-Tagging-Count", strconv.Itoa(len(tags)))
		}
	}
}
