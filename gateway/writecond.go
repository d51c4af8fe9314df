package gateway

import (
	"errors"
	"strconv"

	"tessera/object"
)

// completeFailure adds to a refused CompleteMultipartUpload the elements
// S3 reports with it: the upload and the part for InvalidPart, the sizes
// for EntityTooSmall.
func completeFailure(err error, uploadID string) error {
	var pe *object.PartError
	switch {
	case errors.As(err, &pe) && errors.Is(pe.Err, object.ErrEntityTooSmall):
		return apiErrFields(errEntityTooSmall,
			errorField{"ProposedSize", strconv.FormatInt(pe.Size, 10)},
			errorField{"MinSizeAllowed", strconv.FormatInt(pe.Min, 10)})
	case errors.As(err, &pe):
		return apiErrFields(errInvalidPart, errorField{"UploadId", uploadID},
			errorField{"PartNumber", strconv.Itoa(pe.Number)}, errorField{"ETag", pe.ETag})
	case errors.Is(err, object.ErrInvalidPart):
		return apiErrFields(errInvalidPart, errorField{"UploadId", uploadID})
	}
	return err
}
