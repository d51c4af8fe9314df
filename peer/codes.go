package peer

import (
	"errors"
	"net/http"

	"tessera/meta"
	"tessera/storage"
)

// wireError is the body of every error answer.
type wireError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// codes maps sentinels to stable wire codes and statuses. The first match
// wins, so more specific sentinels come first. The code strings are part
// of the wire format: never rename one.
var codes = []struct {
	code   string
	status int
	err    error
}{
	{"Unauthorized", http.StatusUnauthorized, ErrUnauthorized},
	{"Busy", http.StatusServiceUnavailable, ErrBusy},
	{"InvalidArgument", http.StatusBadRequest, storage.ErrInvalidArgument},
	{"BucketNotFound", http.StatusNotFound, meta.ErrBucketNotFound},
	{"BucketExists", http.StatusConflict, meta.ErrBucketExists},
	{"BucketNotEmpty", http.StatusConflict, meta.ErrBucketNotEmpty},
	{"UploadNotFound", http.StatusNotFound, meta.ErrUploadNotFound},
	{"StagedNotFound", http.StatusNotFound, storage.ErrStagedNotFound},
	{"InvalidPart", http.StatusBadRequest, storage.ErrInvalidPart},
	{"Stale", http.StatusConflict, meta.ErrStale},
	{"NotFound", http.StatusNotFound, meta.ErrNotFound},
	{"Corrupt", http.StatusUnprocessableEntity, meta.ErrCorrupt},
	{"DiskFull", http.StatusInsufficientStorage, storage.ErrDiskFull},
	{"Closed", http.StatusServiceUnavailable, storage.ErrClosed},
}

const codeInternal = "Internal"

// codeOf returns the wire code and status for err.
func codeOf(err error) (string, int) {
	for _, c := range codes {
		if errors.Is(err, c.err) {
			return c.code, c.status
		}
	}
	return codeInternal, http.StatusInternalServerError
}

// sentinelOf returns the sentinel for a wire code, nil for unknown codes.
func sentinelOf(code string) error {
	for _, c := range codes {
		if c.code == code {
			return c.err
		}
	}
	return nil
}
