package peer

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"io"
	"math/rand/v2"
	"net"
	"runtime"
	"testing"
	"time"

	"tessera/meta"
	"tessera/storage"
)

// genReader yields n deterministic pseudo-random bytes without holding them.
func genReader(seed uint64, n int64) io.Reader {
	var s [32]byte
	s[0] = byte(seed)
	return io.LimitReader(rand.NewChaCha8(s), n)
}

func TestLargeShardStreams(t *testing.T) {
	const size = 64 << 20
	p := newPeer(t, nil)
	mkBucket(t, p.client, "big")
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)

	sent := sha256.New()
	id, err := p.client.StageShard(ctx, io.TeeReader(genReader(7, size), sent))
	if err != nil {
		t.Fatal(err)
	}
	o := &meta.Object{Bucket: "big", Key: "blob", Stamp: stamp(1, "w"), Size: size,
		Parts: []meta.Part{{Number: 1, Size: size}}}
	if err := p.client.Commit(ctx, o, []string{id}); err != nil {
		t.Fatal(err)
	}
	rc, err := p.client.ReadShard(ctx, "big", "blob", o.Stamp, 1, 0, -1)
	if err != nil {
		t.Fatal(err)
	}
	got := sha256.New()
	n, err := io.Copy(got, rc)
	rc.Close()
	if err != nil || n != size || !bytes.Equal(got.Sum(nil), sent.Sum(nil)) {
		t.Fatalf("read back %d bytes, err %v, digest match %v", n, err, bytes.Equal(got.Sum(nil), sent.Sum(nil)))
	}
	runtime.ReadMemStats(&after)
	t.Logf("64 MiB round trip: heap in use %d -> %d KiB, total allocated %d MiB",
		before.HeapInuse>>10, after.HeapInuse>>10, (after.TotalAlloc-before.TotalAlloc)>>20)

	// A range in the middle matches the same bytes of the generator.
	const off, length = 32<<20 + 17, 1 << 20
	want := make([]byte, length)
	g := genReader(7, size)
	io.CopyN(io.Discard, g, off)
	io.ReadFull(g, want)
	rc, err = p.client.ReadShard(ctx, "big", "blob", o.Stamp, 1, off, length)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(rc)
	rc.Close()
	if err != nil || !bytes.Equal(b, want) {
		t.Fatalf("range read: %v, %d bytes, equal %v", err, len(b), bytes.Equal(b, want))
	}
}

// failingReader errors after n bytes, like a gateway whose client vanished.
type failingReader struct{ n int }

func (f *failingReader) Read(p []byte) (int, error) {
	if f.n <= 0 {
		return 0, errors.New("source broke")
	}
	m := min(len(p), f.n)
	f.n -= m
	return m, nil
}

func TestStageShardSourceFails(t *testing.T) {
	p := newPeer(t, nil)
	if _, err := p.client.StageShard(ctx, &failingReader{n: 1 << 20}); err == nil {
		t.Fatal("stage of a broken stream succeeded")
	}
	// The server drops the partial file once it sees the body end badly.
	deadline := time.Now().Add(5 * time.Second)
	for {
		n, err := p.store.SweepStaging(ctx, -time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("partial staged file still present")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestServe(t *testing.T) {
	st, err := storage.Open(t.TempDir(), storage.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	sctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- Serve(sctx, ln, NewServer(ServerConfig{Store: st, Secret: secret})) }()
	c := NewClient(ClientConfig{ID: "p", BaseURL: "http://" + ln.Addr().String(), Secret: secret})
	defer c.CloseIdleConnections()
	mkBucket(t, c, "served")
	if bs, err := c.ListBuckets(ctx); err != nil || len(bs) != 1 {
		t.Fatalf("list over Serve: %v %v", err, bs)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("serve returned %v", err)
		}
	case <-time.After(ShutdownGrace + 5*time.Second):
		t.Fatal("Serve did not stop after ctx ended")
	}
	if _, err := c.ListBuckets(ctx); err == nil {
		t.Fatal("request after shutdown succeeded")
	}
}
