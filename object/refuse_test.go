package object

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
)

// A malformed upload ID names no upload: every peer refuses it, and the
// answer is ErrUploadNotFound (S3's NoSuchUpload), never ErrQuorum, which
// clients would retry.
func TestMalformedUploadIDIsNotFound(t *testing.T) {
	l, fc := newTestLayer(t)
	ctx := context.Background()
	ops := []struct {
		name string
		call func(id string) error
	}{
		{"put part", func(id string) error {
			_, err := l.PutPart(ctx, testBucket, "k", id, 1, bytes.NewReader([]byte("x")), 1, nil)
			return err
		}},
		{"list parts", func(id string) error { _, err := l.ListParts(ctx, testBucket, "k", id, 0, 10); return err }},
		{"complete", func(id string) error {
			_, err := l.CompleteMultipart(ctx, testBucket, "k", id, []CompletePart{{Number: 1, ETag: md5hex([]byte("x"))}}, CompleteOptions{})
			return err
		}},
		{"abort", func(id string) error { return l.AbortMultipart(ctx, testBucket, "k", id, AbortOptions{}) }},
	}
	ids := []string{"a b", "a/b", strings.Repeat("a", 300), ".x", "", "x%2Fy", "\x00"}
	for _, down := range []int{0, 1} {
		fc.heal()
		for _, p := range placementPeers(fc, "k", 6)[:down] {
			p.setFault(faultDown)
		}
		for _, op := range ops {
			for _, id := range ids {
				err := op.call(id)
				if !errors.Is(err, ErrUploadNotFound) || errors.Is(err, ErrQuorum) {
					t.Errorf("%s with upload id %q, %d peers down: %v, want ErrUploadNotFound", op.name, id, down, err)
				}
			}
		}
	}
}

// When the peers refuse a request as malformed, the layer passes the
// refusal on; only missing answers make a QuorumError.
func TestRefusalIsNotQuorum(t *testing.T) {
	ctx := context.Background()
	ops := []struct {
		name string
		call func(l *Layer) error
	}{
		{"make bucket", func(l *Layer) error { return l.MakeBucket(ctx, "other") }},
		{"put", func(l *Layer) error {
			_, err := l.PutObject(ctx, testBucket, "k", bytes.NewReader([]byte("hello")), 5, PutOptions{})
			return err
		}},
		{"head", func(l *Layer) error { _, err := l.HeadObject(ctx, testBucket, "k"); return err }},
		{"get", func(l *Layer) error { _, err := get(l, "k"); return err }},
		{"delete", func(l *Layer) error { return l.DeleteObject(ctx, testBucket, "k") }},
		{"new multipart", func(l *Layer) error { _, err := l.NewMultipart(ctx, testBucket, "k", PutOptions{}); return err }},
	}
	cases := []struct {
		name          string
		refuse, down  int // peers of the six
		want, notWant error
	}{
		{"all refuse", 6, 0, ErrInvalidArgument, ErrQuorum},
		{"one down, the rest refuse", 5, 1, ErrInvalidArgument, ErrQuorum},
		{"most down", 1, 5, ErrQuorum, ErrInvalidArgument},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			l, fc := newTestLayer(t, func(cfg *Config) { cfg.PeerTimeout = hangTimeout })
			for i, id := range fc.ids {
				switch {
				case i < c.refuse:
					fc.peers[id].setFault(faultRefuse)
				case i < c.refuse+c.down:
					fc.peers[id].setFault(faultDown)
				}
			}
			for _, op := range ops {
				err := op.call(l)
				if !errors.Is(err, c.want) || errors.Is(err, c.notWant) {
					t.Errorf("%s: %v, want %v", op.name, err, c.want)
				}
			}
		})
	}
}
