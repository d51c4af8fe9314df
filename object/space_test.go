package object

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"testing"

	"tessera/meta"
)

// TestWriteOutOfSpace: a write whose quorum fails because peers are full
// is ErrInsufficientStorage (and still ErrQuorum); one that full peers
// only help to fail, with a peer down that may come back, stays a plain
// retryable quorum failure; one that full peers do not stop succeeds.
func TestWriteOutOfSpace(t *testing.T) {
	cases := []struct {
		name       string
		class      string
		full, down int
		wantOK     bool
		want507    bool
	}{
		{"4+2, one full", "", 1, 0, true, false},
		{"4+2, two full", "", 2, 0, true, false},
		{"4+2, three full", "", 3, 0, false, true},
		{"4+2, two full and one down", "", 2, 1, false, false},
		{"6+0, one full", "ALL", 1, 0, false, true},
		{"6+0, one down", "ALL", 0, 1, false, false},
	}
	for _, c := range cases {
		for _, size := range []int{100, 2*testBlock + 3} { // inline and staged
			t.Run(fmt.Sprintf("%s/%d", c.name, size), func(t *testing.T) {
				l, fc := newTestLayer(t, func(cfg *Config) { cfg.Classes = map[string]meta.Code{"ALL": {K: 6, M: 0}} })
				key := fmt.Sprintf("k%d", size)
				peers := placementPeers(fc, key, 6)
				for i := range c.full {
					peers[i].setFault(faultFull)
				}
				for i := range c.down {
					peers[c.full+i].setFault(faultDown)
				}
				data := randBytes(uint64(size), size)
				_, err := l.PutObject(context.Background(), testBucket, key, bytes.NewReader(data), int64(size), PutOptions{StorageClass: c.class})
				if c.wantOK {
					if err != nil {
						t.Fatalf("put: %v", err)
					}
					fc.heal()
					mustGet(t, l, key, data)
					return
				}
				wantErr(t, err, ErrQuorum)
				if got := errors.Is(err, ErrInsufficientStorage); got != c.want507 {
					t.Fatalf("ErrInsufficientStorage %v, want %v: %v", got, c.want507, err)
				}
			})
		}
	}
}
