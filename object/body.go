package object

import (
	"context"
	"crypto/md5"
	"errors"
	"fmt"
	"hash"
	"io"
	"time"

	"tessera/checksum"
)

// errStalled fails a shard stream that made no progress in time.
var errStalled = errors.New("peer stalled")

// bodyReader meters a request body: it hashes it for the ETag, enforces
// the declared size in both directions and a maximum when the size is
// unknown, and remembers the body's own failure (a bad chunk signature,
// say) so the caller can report it rather than a downstream symptom.
// It reads the body through to io.EOF, because a streaming-signed body
// only proves itself valid at its end, but never past a declared size
// plus one probing byte.
type bodyReader struct {
	r    io.Reader
	size int64 // declared; -1 unknown
	max  int64 // limit when size is unknown
	n    int64
	eof  bool
	err  error // sticky failure other than io.EOF
	md5  hash.Hash
	sums *sumTracker // nil: no checksum wanted
}

func newBodyReader(r io.Reader, size, max int64) *bodyReader {
	return &bodyReader{r: r, size: size, max: max, md5: md5.New()}
}

func (b *bodyReader) Read(p []byte) (int, error) {
	if b.err != nil {
		return 0, b.err
	}
	if b.eof {
		return 0, io.EOF
	}
	if b.size >= 0 {
		if b.n == b.size {
			return 0, b.finish()
		}
		if rem := b.size - b.n; int64(len(p)) > rem {
			p = p[:rem]
		}
	}
	n, err := b.r.Read(p)
	b.n += int64(n)
	b.md5.Write(p[:n])
	if b.sums != nil {
		b.sums.Write(p[:n])
	}
	switch {
	case errors.Is(err, io.EOF) && b.size >= 0 && b.n < b.size:
		return n, b.fail(fmt.Errorf("%w: got %d of %d bytes", ErrIncompleteBody, b.n, b.size))
	case errors.Is(err, io.EOF):
		b.eof = true
		return n, io.EOF
	case err != nil:
		return n, b.fail(err)
	case b.size < 0 && b.n > b.max:
		return n, b.fail(fmt.Errorf("%w: over %d bytes", ErrEntityTooLarge, b.max))
	}
	return n, nil
}

// finish reads past the declared size expecting io.EOF.
func (b *bodyReader) finish() error {
	var one [1]byte
	for range 100 {
		n, err := b.r.Read(one[:])
		switch {
		case n > 0:
			return b.fail(fmt.Errorf("%w: more than %d bytes", ErrBodyTooLong, b.size))
		case errors.Is(err, io.EOF):
			b.eof = true
			return io.EOF
		case err != nil:
			return b.fail(err)
		}
	}
	return b.fail(io.ErrNoProgress)
}

func (b *bodyReader) fail(err error) error {
	b.err = err
	return err
}

// trackSums makes b learn the body's checksums (newSumTracker).
func (b *bodyReader) trackSums(body io.Reader, want checksum.Algorithm) *bodyReader {
	b.sums = newSumTracker(body, want)
	return b
}

// sum is the MD5 of the bytes read so far.
func (b *bodyReader) sum() []byte { return b.md5.Sum(nil) }

// readHead reads up to limit bytes of r, reporting whether r ended
// before limit.
func readHead(r io.Reader, limit int64) ([]byte, bool, error) {
	data, err := io.ReadAll(io.LimitReader(r, limit))
	if err != nil {
		return nil, false, err
	}
	return data, int64(len(data)) < limit, nil
}

// stallReader gives up a shard read that makes no progress within d
// (calling stalled), so the decoder falls back to another shard instead
// of hanging.
type stallReader struct {
	rc      io.ReadCloser
	d       time.Duration
	stalled func()
	cancel  context.CancelFunc
}

func (s *stallReader) Read(p []byte) (int, error) {
	t := time.AfterFunc(s.d, s.stalled)
	defer t.Stop()
	return s.rc.Read(p)
}

func (s *stallReader) Close() error {
	err := s.rc.Close()
	s.cancel()
	return err
}
