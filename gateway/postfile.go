package gateway

import (
	"errors"
	"io"
	"strconv"
	"strings"

	"tessera/checksum"
)

// The file of a POST upload: its size against the policy's
// content-length-range and the checksum fields that describe it.

// refuseFormChecksums refuses an x-amz-checksum-<algorithm> field naming
// no algorithm S3 knows, as a PUT's header; newFormChecksum handles the
// known ones.
func refuseFormChecksums(fields map[string]string) error {
	for name := range fields {
		alg, ok := strings.CutPrefix(name, "x-amz-checksum-")
		if !ok || alg == "algorithm" || alg == "type" || alg == "mode" {
			continue
		}
		if !knownChecksumField(name) {
			return apiErrf(errInvalidRequest, "The algorithm type you specified in x-amz-checksum- header is invalid.")
		}
	}
	return nil
}

func knownChecksumField(name string) bool {
	for _, a := range checksum.All {
		if a.Header() == name {
			return true
		}
	}
	return false
}

// rangeReader enforces content-length-range while the file streams: too
// many bytes fail at once, too few at the end, before the layer commits.
type rangeReader struct {
	r        io.Reader
	n        int64
	min, max int64
	failed   error // errPostTooLarge or errPostTooSmall once refused
}

var (
	errPostTooLarge = errors.New("POST file larger than the policy allows")
	errPostTooSmall = errors.New("POST file smaller than the policy allows")
)

func (b *rangeReader) Read(p []byte) (int, error) {
	if b.failed != nil {
		return 0, b.failed
	}
	n, err := b.r.Read(p)
	b.n += int64(n)
	switch {
	case b.n > b.max:
		b.failed = errPostTooLarge
	case err == io.EOF && b.n < b.min:
		b.failed = errPostTooSmall
	}
	if b.failed != nil {
		return n, b.failed
	}
	return n, err
}

// explain turns the object layer's failure into S3's answer when the
// file broke the size range. S3 reports the file's size: a file too large
// is read to its end (up to maxPostDrain) to count it.
func (b *rangeReader) explain(err error) error {
	switch b.failed {
	case errPostTooSmall:
		return withFields(apiErrf(errEntityTooSmall, "Your proposed upload is smaller than the minimum allowed size"),
			errorField{"ProposedSize", strconv.FormatInt(b.n, 10)},
			errorField{"MinSizeAllowed", strconv.FormatInt(b.min, 10)})
	case errPostTooLarge:
		fields := []errorField{{"MaxSizeAllowed", strconv.FormatInt(b.max, 10)}}
		rest, rerr := io.CopyN(io.Discard, b.r, maxPostDrain)
		if errors.Is(rerr, io.EOF) {
			fields = append([]errorField{{"ProposedSize", strconv.FormatInt(b.n+rest, 10)}}, fields...)
		}
		return withFields(apiErr(errEntityTooLarge), fields...)
	}
	return err
}
