package object

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"testing"

	"tessera/meta"
)

func TestStorageClasses(t *testing.T) {
	l, fc := newTestLayer(t, func(c *Config) {
		c.Classes = map[string]meta.Code{"SMALL": {K: 2, M: 1}, "WIDE": {K: 6, M: 1}}
	})
	cases := []struct {
		class     string
		wantClass string
		code      meta.Code
		err       error
	}{
		{"", ClassStandard, meta.Code{K: 4, M: 2}, nil},
		{ClassStandard, ClassStandard, meta.Code{K: 4, M: 2}, nil},
		{ClassReduced, ClassReduced, meta.Code{K: 5, M: 1}, nil},
		{"SMALL", "SMALL", meta.Code{K: 2, M: 1}, nil},
		{"WIDE", "", meta.Code{}, ErrCodeTooWide},
		{"GLACIER", "", meta.Code{}, ErrInvalidStorageClass},
	}
	for _, c := range cases {
		for _, size := range []int{100, 2*testBlock + 3} {
			t.Run(fmt.Sprintf("%s/%d", c.class, size), func(t *testing.T) {
				key := fmt.Sprintf("k-%s-%d", c.class, size)
				data := randBytes(uint64(size), size)
				info, err := l.PutObject(context.Background(), testBucket, key, bytes.NewReader(data), int64(size), PutOptions{StorageClass: c.class})
				if c.err != nil {
					wantErr(t, err, c.err)
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				if info.StorageClass != c.wantClass {
					t.Fatalf("class %q, want %q", info.StorageClass, c.wantClass)
				}
				rec := fc.peerAt(testBucket, key, c.code.N(), 0).held(testBucket, key)
				if rec == nil || rec.Code != c.code || len(rec.Distribution) != c.code.N() || rec.StorageClass != c.wantClass {
					t.Fatalf("record %+v", rec)
				}
				mustGet(t, l, key, data)
				head, err := l.HeadObject(context.Background(), testBucket, key)
				if err != nil || head.StorageClass != c.wantClass {
					t.Fatalf("head %+v, %v", head, err)
				}
				// Lose as many shards as the code has parity: still exact.
				peers := placementPeers(fc, key, c.code.N())
				for i := range c.code.M {
					peers[i*2%c.code.N()].setFault(faultDown)
				}
				defer fc.heal()
				mustGet(t, l, key, data)
			})
		}
	}
}

func TestCodeTooWideMessage(t *testing.T) {
	l, _ := newTestLayer(t, func(c *Config) { c.Classes = map[string]meta.Code{"WIDE": {K: 8, M: 2}} })
	_, err := l.PutObject(context.Background(), testBucket, "k", bytes.NewReader(nil), 0, PutOptions{StorageClass: "WIDE"})
	wantErr(t, err, ErrCodeTooWide)
	for _, part := range []string{"WIDE", "8+2", "6"} {
		if !bytes.Contains([]byte(err.Error()), []byte(part)) {
			t.Fatalf("error %q does not name %q", err, part)
		}
	}
	_, err = l.NewMultipart(context.Background(), testBucket, "k", PutOptions{StorageClass: "WIDE"})
	wantErr(t, err, ErrCodeTooWide)
}

func TestNewConfig(t *testing.T) {
	fc := newFakeCluster(3)
	if _, err := New(Config{}); err == nil {
		t.Fatal("New without a cluster succeeded")
	}
	if _, err := New(Config{Cluster: fc, Classes: map[string]meta.Code{"BAD": {K: 0, M: 1}}}); err == nil {
		t.Fatal("New with an invalid class code succeeded")
	}
	l, err := New(Config{Cluster: fc, DefaultCode: meta.Code{K: 2, M: 1}})
	if err != nil {
		t.Fatal(err)
	}
	if l.classes[ClassReduced] != (meta.Code{K: 2, M: 1}) || l.classes[ClassStandard] != (meta.Code{K: 2, M: 1}) {
		t.Fatalf("classes %v", l.classes)
	}
	if l.cfg.BlockSize != DefaultBlockSize || l.cfg.InlineLimit != DefaultInlineLimit || l.cfg.WriterID == "" {
		t.Fatalf("defaults not applied: %+v", l.cfg)
	}
	// A 2+1 cluster of three peers works end to end.
	ctx := context.Background()
	if err := l.MakeBucket(ctx, testBucket); err != nil {
		t.Fatal(err)
	}
	data := randBytes(1, 300<<10)
	if _, err := l.PutObject(ctx, testBucket, "k", bytes.NewReader(data), -1, PutOptions{}); err != nil {
		t.Fatal(err)
	}
	mustGet(t, l, "k", data)
}

// TestNarrowRingNotReady: while the ring is narrower than the default
// code, writes of any class are ErrNotReady (an ErrQuorum, retried by
// clients), never ErrCodeTooWide, which would tell the client its request
// is wrong; a class too wide for a ring that fits the default code stays
// ErrCodeTooWide.
func TestNarrowRingNotReady(t *testing.T) {
	cases := []struct {
		peers   int
		class   string
		want    error
		notWant error
	}{
		{3, "", ErrNotReady, ErrCodeTooWide},
		{3, "SMALL", ErrNotReady, ErrCodeTooWide},
		{5, ClassStandard, ErrNotReady, ErrCodeTooWide},
		{6, "WIDE", ErrCodeTooWide, ErrQuorum},
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("%d/%s", c.peers, c.class), func(t *testing.T) {
			l, err := New(Config{Cluster: newFakeCluster(c.peers), DefaultCode: meta.Code{K: 4, M: 2},
				Classes: map[string]meta.Code{"SMALL": {K: 2, M: 1}, "WIDE": {K: 6, M: 1}}})
			if err != nil {
				t.Fatal(err)
			}
			_, err = l.PutObject(context.Background(), testBucket, "k", bytes.NewReader(nil), 0, PutOptions{StorageClass: c.class})
			wantErr(t, err, c.want)
			if errors.Is(err, c.notWant) {
				t.Fatalf("err %v also matches %v", err, c.notWant)
			}
			_, err = l.NewMultipart(context.Background(), testBucket, "k", PutOptions{StorageClass: c.class})
			wantErr(t, err, c.want)
			if ready := l.WriteReady(); (ready == nil) != (c.peers >= 6) || (ready != nil && !errors.Is(ready, ErrQuorum)) {
				t.Fatalf("WriteReady with %d peers: %v", c.peers, ready)
			}
		})
	}
}
