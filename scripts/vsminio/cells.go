package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"regexp"

	"github.com/minio/minio-go/v7"
)

const (
	putKeys = 64 // PUT keys cycle over this many per size
	getKeys = 16 // GET reads these, written once at start
)

// A cell is one operation at one object size and concurrency.
type cell struct {
	name string
	op   string // "PUT" or "GET"
	size int64
	conc int
	// unsigned sends PUT bodies as UNSIGNED-PAYLOAD; otherwise minio-go's
	// default over http, the aws-chunked streaming signature. See put.
	unsigned bool
}

var sizes = []struct {
	label string
	n     int64
}{{"4KiB", 4 << 10}, {"1MiB", 1 << 20}, {"16MiB", 16 << 20}}

var concurrencies = []int{1, 8, 32}

// allCells is PUT and GET × size × concurrency, with PUT 16MiB measured
// both streaming-signed and unsigned, since how the payload is signed is a
// large part of a large PUT's cost on either server.
func allCells() []cell {
	var out []cell
	for _, op := range []string{"PUT", "GET"} {
		for _, s := range sizes {
			for _, c := range concurrencies {
				base := fmt.Sprintf("%s %s c=%d", op, s.label, c)
				if op == "PUT" && s.label == "16MiB" {
					out = append(out,
						cell{name: base + " streaming", op: op, size: s.n, conc: c},
						cell{name: base + " unsigned", op: op, size: s.n, conc: c, unsigned: true})
					continue
				}
				out = append(out, cell{name: base, op: op, size: s.n, conc: c})
			}
		}
	}
	return out
}

func selectCells(all []cell, re *regexp.Regexp) []cell {
	var out []cell
	for _, c := range all {
		if re.MatchString(c.name) {
			out = append(out, c)
		}
	}
	return out
}

func sizeLabel(n int64) string {
	for _, s := range sizes {
		if s.n == n {
			return s.label
		}
	}
	return fmt.Sprint(n)
}

// key names the i-th request's object. PUT keys are shared by the cells of
// one size, so disk use stays bounded and every PUT past the first pass is
// an overwrite, on both servers alike.
func (c cell) key(i int64) string {
	if c.op == "GET" {
		return fmt.Sprintf("get/%s/%02d", sizeLabel(c.size), i%getKeys)
	}
	return fmt.Sprintf("put/%s/%02d", sizeLabel(c.size), i%putKeys)
}

// payloads are random bodies, one per size, read-only and shared by all
// workers; random so that no compression anywhere flatters either side.
type payloads map[int64][]byte

func newPayloads() payloads {
	p := payloads{}
	for _, s := range sizes {
		b := make([]byte, s.n)
		_, _ = rand.Read(b)
		p[s.n] = b
	}
	return p
}

// do runs one request of cell c against t.
func (t *target) do(ctx context.Context, c cell, key string, body []byte) error {
	if c.op == "GET" {
		return t.get(ctx, key, c.size)
	}
	return t.put(ctx, key, body, c.unsigned)
}

// put sends one single-part PUT over http. With minio-go v7.4.1 and
// TrailingHeaders off (the default):
//   - unsigned=false (the default) sends X-Amz-Content-Sha256:
//     STREAMING-AWS4-HMAC-SHA256-PAYLOAD with Content-Encoding: aws-chunked
//     and X-Amz-Decoded-Content-Length, each 64KiB chunk signed;
//   - unsigned=true (PutObjectOptions.DisableContentSha256) sends
//     X-Amz-Content-Sha256: UNSIGNED-PAYLOAD and the raw body with its
//     Content-Length.
//
// DisableMultipart keeps 16MiB a single PUT whatever minio-go's part size.
func (t *target) put(ctx context.Context, key string, body []byte, unsigned bool) error {
	info, err := t.cl.PutObject(ctx, bucket, key, bytes.NewReader(body), int64(len(body)),
		minio.PutObjectOptions{
			ContentType:          "application/octet-stream",
			DisableContentSha256: unsigned,
			DisableMultipart:     true,
		})
	if err != nil {
		return fmt.Errorf("PUT %s: %w", key, err)
	}
	if info.Size != int64(len(body)) {
		return fmt.Errorf("PUT %s: server took %d bytes, sent %d", key, info.Size, len(body))
	}
	return nil
}

// get reads the whole object and checks its length.
func (t *target) get(ctx context.Context, key string, size int64) error {
	obj, err := t.cl.GetObject(ctx, bucket, key, minio.GetObjectOptions{})
	if err != nil {
		return fmt.Errorf("GET %s: %w", key, err)
	}
	defer obj.Close()
	n, err := io.Copy(io.Discard, obj)
	if err != nil {
		return fmt.Errorf("GET %s: after %d bytes: %w", key, n, err)
	}
	if n != size {
		return fmt.Errorf("GET %s: %d bytes, want %d", key, n, size)
	}
	return nil
}
