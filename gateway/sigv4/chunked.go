package sigv4

import (
	"bufio"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"strconv"
	"strings"
)

// MaxChunkSize bounds one aws-chunked chunk: a larger declared size is
// refused before any of its data is read. SDKs send 64 KiB chunks.
const MaxChunkSize = 16 << 20

const (
	maxLineLen      = 1024 // a chunk-size line or a trailer line, CRLF included
	maxTrailerLines = 8
	// minChunkSize is S3's least size of a chunk other than the last
	// data chunk; SDKs send 64 KiB or more.
	minChunkSize   = 8192
	chunkBufSize   = 64 << 10
	chunkSigPrefix = "chunk-signature="
	trailerSigName = "x-amz-trailer-signature"
)

// chunkSigner verifies the chain of chunk signatures seeded by the request
// signature: each chunk's string to sign carries the previous signature.
type chunkSigner struct {
	key     []byte
	amzDate string
	scope   string
	prev    string // hex signature of the previous chunk; the seed at first
}

// verify checks one link of the chain: kind is AWS4-HMAC-SHA256-PAYLOAD for
// a chunk (whose string to sign also has the hash of empty chunk headers)
// or AWS4-HMAC-SHA256-TRAILER for the trailer.
func (s *chunkSigner) verify(kind string, sum, declared []byte) bool {
	sts := kind + "\n" + s.amzDate + "\n" + s.scope + "\n" + s.prev + "\n"
	if kind == "AWS4-HMAC-SHA256-PAYLOAD" {
		sts += emptySHA256 + "\n"
	}
	sts += hex.EncodeToString(sum)
	if !hmac.Equal(hmacSHA256(s.key, sts), declared) {
		return false
	}
	s.prev = hex.EncodeToString(declared)
	return true
}

// chunkConfig describes one aws-chunked stream.
type chunkConfig struct {
	signer      *chunkSigner  // nil: unsigned chunks
	trailer     bool          // a trailer section may follow the final chunk
	want        int64         // x-amz-decoded-content-length, or -1
	ck          *bodyChecksum // nil: no checksum to verify
	ckInTrailer bool          // ck's value arrives in the trailer
	out         map[string]string
}

// chunkedReader decodes an aws-chunked body, streaming each chunk's data
// through while hashing it; a bad signature surfaces at the end of the
// chunk it covers, everything else at the final chunk.
type chunkedReader struct {
	chunkConfig
	br   *bufio.Reader
	rc   io.Closer
	got  int64     // decoded bytes so far
	n    int       // chunks started, for messages
	prev int64     // size of the previous data chunk
	left int64     // data bytes left in the current chunk
	sig  []byte    // declared signature of the current chunk
	h    hash.Hash // SHA-256 of the current chunk, when signed
	err  error     // sticky; io.EOF once verified
}

func newChunkedReader(rc io.ReadCloser, cfg chunkConfig) *chunkedReader {
	c := &chunkedReader{chunkConfig: cfg, br: bufio.NewReaderSize(rc, chunkBufSize), rc: rc}
	if cfg.signer != nil {
		c.h = sha256.New()
	}
	return c
}

func (c *chunkedReader) Read(p []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	if len(p) == 0 {
		return 0, nil
	}
	if c.left == 0 {
		if err := c.startChunk(); err != nil {
			c.err = err
			return 0, err
		}
	}
	if int64(len(p)) > c.left {
		p = p[:c.left]
	}
	n, err := c.br.Read(p)
	c.consume(p[:n])
	if err != nil {
		c.err = c.bodyErr(err, "chunk data")
		return n, c.err
	}
	if c.left == 0 {
		if err := c.endChunk(); err != nil {
			c.err = err
			return n, err
		}
	}
	return n, nil
}

func (c *chunkedReader) Close() error { return c.rc.Close() }

func (c *chunkedReader) consume(b []byte) {
	c.left -= int64(len(b))
	c.got += int64(len(b))
	if c.h != nil {
		c.h.Write(b)
	}
	if c.ck != nil {
		c.ck.h.Write(b)
	}
}

// startChunk reads a chunk-size line; the final (empty) chunk runs the
// end-of-stream checks and yields io.EOF or their error.
func (c *chunkedReader) startChunk() error {
	c.n++
	line, crlf, err := c.readLine()
	if err != nil {
		return err
	}
	if !crlf {
		return c.chunkErr("chunk line %.80q not ended by CRLF", line)
	}
	size, sig, err := c.parseChunkLine(line)
	if err != nil {
		return err
	}
	c.sig = sig
	if size == 0 {
		return c.finish()
	}
	if c.n > 1 && c.prev < minChunkSize {
		return &Error{Err: ErrChunkSize, Chunk: c.n - 1, BadChunkSize: c.prev,
			Detail: fmt.Sprintf("chunk %d of %d bytes is followed by another", c.n-1, c.prev)}
	}
	if c.want >= 0 && c.got+size > c.want {
		return c.overrun(size)
	}
	c.prev, c.left = size, size
	if c.h != nil {
		c.h.Reset()
	}
	return nil
}

// overrun answers a chunk that takes the payload past
// x-amz-decoded-content-length. Its data is read and dropped, never
// passed on: S3 reports a chunk that is not well framed as such first.
func (c *chunkedReader) overrun(size int64) error {
	if _, err := io.CopyN(io.Discard, c.br, size); err != nil {
		return c.bodyErr(err, "chunk data")
	}
	if err := c.readCRLF(); err != nil {
		return err
	}
	return c.lengthErr(c.got + size)
}

// parseChunkLine parses "hex-size;chunk-signature=sig" (signed) or
// "hex-size" (unsigned), CRLF already stripped.
func (c *chunkedReader) parseChunkLine(line string) (int64, []byte, error) {
	sizeStr, ext, hasExt := strings.Cut(line, ";")
	if hasExt != (c.signer != nil) {
		return 0, nil, c.chunkErr("chunk line %.80q", line)
	}
	if sizeStr == "" || len(sizeStr) > 8 || strings.Trim(sizeStr, "0123456789abcdefABCDEF") != "" {
		return 0, nil, c.chunkErr("chunk size %.32q", sizeStr)
	}
	size, err := strconv.ParseInt(sizeStr, 16, 64)
	if err != nil || size > MaxChunkSize {
		return 0, nil, c.chunkErr("chunk size %.32q exceeds %d", sizeStr, MaxChunkSize)
	}
	if !hasExt {
		return size, nil, nil
	}
	hexSig, ok := strings.CutPrefix(ext, chunkSigPrefix)
	sig, err := hex.DecodeString(hexSig)
	if !ok || err != nil || len(sig) != sha256.Size {
		return 0, nil, c.chunkErr("chunk extension %.100q", ext)
	}
	return size, sig, nil
}

// endChunk consumes the CRLF after chunk data and checks the signature.
func (c *chunkedReader) endChunk() error {
	if err := c.readCRLF(); err != nil {
		return err
	}
	if c.signer != nil && !c.signer.verify("AWS4-HMAC-SHA256-PAYLOAD", c.h.Sum(nil), c.sig) {
		return fmt.Errorf("chunk %d: %w", c.n, ErrSignatureDoesNotMatch)
	}
	return nil
}

// finish verifies the final chunk, the decoded length, the trailer, the
// absence of trailing bytes and the checksum, in that order.
func (c *chunkedReader) finish() error {
	if c.signer != nil {
		empty := sha256.Sum256(nil)
		if !c.signer.verify("AWS4-HMAC-SHA256-PAYLOAD", empty[:], c.sig) {
			return fmt.Errorf("final chunk: %w", ErrSignatureDoesNotMatch)
		}
	}
	if c.want >= 0 && c.got != c.want {
		return c.lengthErr(c.got)
	}
	if err := c.readTrailer(); err != nil {
		return err
	}
	if err := c.expectEOF(); err != nil {
		return err
	}
	if c.ck != nil {
		if err := c.ck.verify(); err != nil {
			return err
		}
		c.out[c.ck.alg.Lower()] = c.ck.want
	}
	return io.EOF
}

// readLine reads one '\n'-terminated line of at most maxLineLen bytes and
// returns it without its terminator; crlf tells whether '\r' preceded '\n'.
func (c *chunkedReader) readLine() (line string, crlf bool, err error) {
	b, err := c.br.ReadSlice('\n')
	if len(b) > maxLineLen || errors.Is(err, bufio.ErrBufferFull) {
		return "", false, c.chunkErr("line longer than %d bytes", maxLineLen)
	}
	if err != nil {
		return "", false, c.bodyErr(err, "line")
	}
	line, crlf = strings.CutSuffix(string(b[:len(b)-1]), "\r")
	if strings.IndexByte(line, '\r') >= 0 {
		return "", false, c.chunkErr("bare CR in line %.80q", line)
	}
	return line, crlf, nil
}

func (c *chunkedReader) readCRLF() error {
	var b [2]byte
	if _, err := io.ReadFull(c.br, b[:]); err != nil {
		return c.bodyErr(err, "CRLF")
	}
	if b != [2]byte{'\r', '\n'} {
		return c.chunkErr("chunk data not followed by CRLF")
	}
	return nil
}

// expectEOF refuses bytes after the aws-chunked stream's end.
func (c *chunkedReader) expectEOF() error {
	_, err := c.br.ReadByte()
	switch {
	case err == nil:
		return c.chunkErr("data after the final chunk")
	case err == io.EOF:
		return nil
	default:
		return c.bodyErr(err, "end of body")
	}
}

// chunkErr is S3's answer to an aws-chunked body that is not framed as
// one.
func (c *chunkedReader) chunkErr(format string, args ...any) error {
	return &Error{Err: ErrChunk, Message: "The request body terminated unexpectedly",
		Detail: fmt.Sprintf("chunk %d: %s", c.n, fmt.Sprintf(format, args...))}
}

// lengthErr is S3's answer to a payload of another length than
// x-amz-decoded-content-length: S3 words it without a final period.
func (c *chunkedReader) lengthErr(got int64) error {
	return &Error{Err: ErrChunk, Message: "You did not provide the number of bytes specified by the Content-Length HTTP header",
		Detail: fmt.Sprintf("decoded %d bytes or more, x-amz-decoded-content-length is %d", got, c.want)}
}

// bodyErr turns an early end of the body into ErrChunk and wraps other
// read errors as they are.
func (c *chunkedReader) bodyErr(err error, what string) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return c.chunkErr("body ends inside %s", what)
	}
	return fmt.Errorf("read aws-chunked body: %w", err)
}
