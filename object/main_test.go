package object

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/hex"
	"errors"
	"io"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"go.uber.org/goleak"

	"tessera/meta"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// hangTimeout is the PeerTimeout of tests that hang peers on purpose.
const hangTimeout = 300 * time.Millisecond

const (
	testBlock  = 64 << 10
	testInline = 1000
	testBucket = "b"
)

// newTestLayer returns a Layer over six fake peers with bucket "b".
func newTestLayer(t testing.TB, tune ...func(*Config)) (*Layer, *fakeCluster) {
	t.Helper()
	return newTestLayerN(t, 6, tune...)
}

// newTestLayerN is newTestLayer over peers fake peers.
func newTestLayerN(t testing.TB, peers int, tune ...func(*Config)) (*Layer, *fakeCluster) {
	t.Helper()
	fc := newFakeCluster(peers)
	l := layerOn(t, fc, tune...)
	if err := l.MakeBucket(context.Background(), testBucket); err != nil {
		t.Fatal(err)
	}
	return l, fc
}

// layerOn returns another gateway's Layer over the fakes of fc.
func layerOn(t testing.TB, fc *fakeCluster, tune ...func(*Config)) *Layer {
	t.Helper()
	cfg := Config{
		Cluster:     fc,
		Alive:       fc.Alive,
		DefaultCode: meta.Code{K: 4, M: 2},
		BlockSize:   testBlock,
		InlineLimit: testInline,
		WriterID:    "gw1",
		Logger:      zerolog.Nop(),
		PeerTimeout: 2 * time.Second, // generous: the machine is shared
		MinPartSize: 100 << 10,
		// Fault tests leave keys unsettled for good (a failed write over
		// a degraded version); each read of one waits this long.
		SettleWait: 250 * time.Millisecond,
	}
	for _, f := range tune {
		f(&cfg)
	}
	l, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func randBytes(seed uint64, n int) []byte {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

func md5hex(b []byte) string {
	s := md5.Sum(b)
	return hex.EncodeToString(s[:])
}

func put(t testing.TB, l *Layer, key string, data []byte) ObjectInfo {
	t.Helper()
	info, err := l.PutObject(context.Background(), testBucket, key, bytes.NewReader(data), int64(len(data)), PutOptions{})
	if err != nil {
		t.Fatalf("put %s (%d bytes): %v", key, len(data), err)
	}
	return info
}

// getRange reads [off, off+length) of key; length -1 is to the end. It
// returns whatever was written even on error, so callers can check that
// a failed read wrote only correct bytes.
func getRange(l *Layer, key string, off, length int64) ([]byte, error) {
	var buf bytes.Buffer
	err := l.GetObject(context.Background(), testBucket, key, func(ObjectInfo) (io.Writer, int64, int64, error) {
		return &buf, off, length, nil
	})
	return buf.Bytes(), err
}

func get(l *Layer, key string) ([]byte, error) { return getRange(l, key, 0, -1) }

func mustGet(t testing.TB, l *Layer, key string, want []byte) {
	t.Helper()
	got, err := get(l, key)
	if err != nil {
		t.Fatalf("get %s: %v", key, err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("get %s: %d bytes differ from the %d put", key, len(got), len(want))
	}
}

// checkPrefix fails unless got is a prefix of want: a failed read may stop
// early but must never have written a wrong byte.
func checkPrefix(t testing.TB, got, want []byte) {
	t.Helper()
	if len(got) > len(want) || !bytes.Equal(got, want[:len(got)]) {
		t.Fatalf("failed read wrote %d bytes that are not a prefix of the object", len(got))
	}
}

// placementPeers returns the fakes holding key's shards under code n.
func placementPeers(fc *fakeCluster, key string, n int) []*fakePeer {
	out := make([]*fakePeer, n)
	for i := range out {
		out[i] = fc.peerAt(testBucket, key, n, i)
	}
	return out
}

func wantErr(t testing.TB, err, target error) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Fatalf("err = %v, want %v", err, target)
	}
}
