package sigv4

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
)

// readTrailer reads the section after the final chunk. Without trailer
// mode it is the empty line that ends the stream. In trailer mode it is
// the trailer lines, and with signed chunks an x-amz-trailer-signature
// line chained from the final chunk, then the empty line.
//
// S3 tells two failures apart: a section it cannot frame (a line cut
// short, no signature line where one is due) is IncompleteBody; a framed
// section whose trailers are not the one x-amz-trailer declared (another,
// an undeclared one, none, an empty line) is MalformedTrailerError.
func (c *chunkedReader) readTrailer() error {
	if !c.trailer {
		line, err := c.readTrailerLine()
		if err == nil && line != "" {
			err = c.chunkErr("unexpected trailer line %.80q", line)
		}
		return err
	}
	lines, sig, err := c.readTrailerSection()
	if err != nil {
		return err
	}
	canon, err := c.checkTrailers(lines)
	if err != nil || c.signer == nil {
		return err
	}
	sum := sha256.Sum256([]byte(canon))
	if !c.signer.verify("AWS4-HMAC-SHA256-TRAILER", sum[:], sig) {
		return fmt.Errorf("trailer: %w", ErrSignatureDoesNotMatch)
	}
	return nil
}

// readTrailerSection returns the trailer lines and, with signed chunks,
// the trailer signature. Unsigned, the lines run to the first empty one.
// Signed, they run to the signature line, which the empty line follows;
// an empty line before it is a trailer line, for checkTrailers to refuse.
func (c *chunkedReader) readTrailerSection() (lines []string, sig []byte, err error) {
	for {
		line, err := c.readTrailerLine()
		if err != nil {
			return nil, nil, err
		}
		if c.signer == nil && line == "" {
			return lines, nil, nil
		}
		if name, v, ok := strings.Cut(line, ":"); ok && c.signer != nil && strings.EqualFold(strings.TrimSpace(name), trailerSigName) {
			if sig, err = hex.DecodeString(strings.TrimSpace(v)); err != nil || len(sig) != sha256.Size {
				return nil, nil, c.chunkErr("trailer signature %.80q", v)
			}
			return lines, sig, c.expectEmptyLine()
		}
		if len(lines) == maxTrailerLines {
			return nil, nil, c.trailerErr("more than %d trailer lines", maxTrailerLines)
		}
		lines = append(lines, line)
	}
}

func (c *chunkedReader) expectEmptyLine() error {
	line, err := c.readTrailerLine()
	if err == nil && line != "" {
		err = c.chunkErr("line %.80q after the trailer signature", line)
	}
	return err
}

// checkTrailers wants exactly the checksum trailer x-amz-trailer named,
// or none when it named none, and takes its value. It returns the
// trailers as the trailer signature signs them, "name:value\n" each.
func (c *chunkedReader) checkTrailers(lines []string) (string, error) {
	switch {
	case !c.ckInTrailer && len(lines) > 0:
		return "", c.trailerErr("undeclared trailer %.64q", lines[0])
	case !c.ckInTrailer:
		return "", nil
	case len(lines) != 1:
		return "", c.trailerErr("%d trailer lines, want the declared %s", len(lines), c.ck.alg.Header())
	}
	name, value, ok := strings.Cut(lines[0], ":")
	name, value = strings.ToLower(strings.TrimSpace(name)), strings.TrimSpace(value)
	if !ok || name != c.ck.alg.Header() {
		return "", c.trailerErr("trailer %.64q, want the declared %s", lines[0], c.ck.alg.Header())
	}
	if err := c.ck.setWant(value, InvalidTrailerValue); err != nil {
		return "", err
	}
	return name + ":" + value + "\n", nil
}

// trailerErr is S3's answer to trailers other than the declared one.
func (c *chunkedReader) trailerErr(format string, args ...any) error {
	return &Error{Err: ErrMalformedTrailer, Detail: fmt.Sprintf(format, args...)}
}

// readTrailerLine returns one trailer line without its terminator, or ""
// for the CRLF that ends the stream. Besides CRLF it accepts the "\n\r\n"
// terminator that minio-go writes after each trailer.
func (c *chunkedReader) readTrailerLine() (string, error) {
	line, crlf, err := c.readLine()
	if err != nil || crlf {
		return line, err
	}
	if line == "" {
		return "", c.chunkErr("bare LF in trailer")
	}
	if err := c.readCRLF(); err != nil {
		return "", err
	}
	return line, nil
}
