package peer

import (
	"errors"
	"net/http"
	"slices"

	"tessera/meta"
	"tessera/storage"
)

// wireError is the body of every error answer.
type wireError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	// Held is the stamp of the record a Stale refusal lost to, so the
	// writer can retry above it. Absent from older peers' answers.
	Held *meta.Stamp `json:"held,omitempty"`
}

// wireErrorOf is the answer body for err.
func wireErrorOf(code string, err error) wireError {
	we := wireError{Code: code, Message: err.Error()}
	if held, ok := meta.HeldStamp(err); ok {
		we.Held = &held
	}
	return we
}

// sentinelOfWire is the error a client's caller branches on for an
// answer: the code's sentinel, a stale refusal with the stamp it names.
func sentinelOfWire(we wireError) error {
	if we.Held != nil && we.Code == codeStale {
		return &meta.StaleError{Held: *we.Held}
	}
	return sentinelOf(we.Code)
}

// wireCode pairs a sentinel with its wire code and status.
type wireCode struct {
	code   string
	status int
	err    error
}

// codes maps sentinels to stable wire codes and statuses. The first match
// wins, so more specific sentinels come first. The code strings are part
// of the wire format: never rename one.
var codes = []wireCode{
	{"Unauthorized", http.StatusUnauthorized, ErrUnauthorized},
	{"Busy", http.StatusServiceUnavailable, ErrBusy},
	{"ObjectLocked", http.StatusForbidden, meta.ErrObjectLocked},
	{"InvalidArgument", http.StatusBadRequest, storage.ErrInvalidArgument},
	{"BucketNotFound", http.StatusNotFound, meta.ErrBucketNotFound},
	{"BucketExists", http.StatusConflict, meta.ErrBucketExists},
	{"BucketNotEmpty", http.StatusConflict, meta.ErrBucketNotEmpty},
	{"UploadNotFound", http.StatusNotFound, meta.ErrUploadNotFound},
	{"StagedNotFound", http.StatusNotFound, storage.ErrStagedNotFound},
	{"InvalidPart", http.StatusBadRequest, storage.ErrInvalidPart},
	{codeStale, http.StatusConflict, meta.ErrStale},
	{"NotFound", http.StatusNotFound, meta.ErrNotFound},
	{"Corrupt", http.StatusUnprocessableEntity, meta.ErrCorrupt},
	{"DiskFull", http.StatusInsufficientStorage, storage.ErrDiskFull},
	{"Closed", http.StatusServiceUnavailable, storage.ErrClosed},
}

const (
	codeInternal = "Internal"
	codeStale    = "Stale"
)

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
	if i := codeIndex(code); i >= 0 {
		return codes[i].err
	}
	return nil
}

// codeIndex is the index of a wire code in codes, -1 if unknown.
func codeIndex(code string) int {
	return slices.IndexFunc(codes, func(c wireCode) bool { return c.code == code })
}

// statusOfCode returns the status codeOf pairs with a wire code: the
// status a single call's answer would carry.
func statusOfCode(code string) int {
	if i := codeIndex(code); i >= 0 {
		return codes[i].status
	}
	return http.StatusInternalServerError
}
