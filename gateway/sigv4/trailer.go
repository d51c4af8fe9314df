package sigv4

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
)

// readTrailer reads the lines after the final chunk up to the empty line
// that ends the stream. Without trailer mode that empty line must come
// first. In trailer mode the declared checksum trailer may appear (it
// must, when x-amz-trailer named it), and with signed chunks it is
// followed by x-amz-trailer-signature, chained from the final chunk.
func (c *chunkedReader) readTrailer() error {
	var canon strings.Builder // "name:value\n" per trailer, as signed
	var sig []byte
	gotCk := false
	for i := 0; ; i++ {
		line, err := c.readTrailerLine()
		if err != nil {
			return err
		}
		if line == "" {
			break
		}
		if i >= maxTrailerLines || sig != nil || !c.trailer {
			return c.chunkErr("unexpected trailer line %.80q", line)
		}
		name, value, ok := strings.Cut(line, ":")
		name, value = strings.ToLower(strings.TrimSpace(name)), strings.TrimSpace(value)
		switch {
		case !ok:
			return c.chunkErr("trailer line %.80q has no colon", line)
		case name == trailerSigName && c.signer != nil:
			if sig, err = hex.DecodeString(value); err != nil || len(sig) != sha256.Size {
				return c.chunkErr("trailer signature %.80q", value)
			}
		case c.ckInTrailer && !gotCk && name == c.ck.alg.Header():
			if err := c.ck.setWant(value, InvalidTrailerValue); err != nil {
				return err
			}
			gotCk = true
			canon.WriteString(name + ":" + value + "\n")
		default:
			return c.chunkErr("undeclared or repeated trailer %.64q", name)
		}
	}
	if c.ckInTrailer && !gotCk {
		return c.chunkErr("declared trailer %s missing", c.ck.alg.Header())
	}
	if c.signer == nil || !c.trailer {
		return nil
	}
	if sig == nil {
		return fmt.Errorf("%w: no %s", ErrSignatureDoesNotMatch, trailerSigName)
	}
	sum := sha256.Sum256([]byte(canon.String()))
	if !c.signer.verify("AWS4-HMAC-SHA256-TRAILER", sum[:], sig) {
		return fmt.Errorf("trailer: %w", ErrSignatureDoesNotMatch)
	}
	return nil
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
