package e2e

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
)

// tap is a TCP proxy between the gateway and one peer (the peer
// advertises the tap's address): it records every byte each way, as a
// capture on the loopback would, and can alter one byte of what the
// gateway sends, as an attacker on the path would.
type tap struct {
	ln     net.Listener
	target atomic.Value // string: the peer's real address

	mu    sync.Mutex
	conns []*tapConn
	// flipAt, when positive, is a count of gateway-to-peer bytes still to
	// pass before one byte is inverted.
	flipAt  atomic.Int64
	flipped atomic.Pointer[tapConn] // the connection whose byte was inverted
}

type tapConn struct {
	mu       sync.Mutex
	toPeer   bytes.Buffer
	fromPeer bytes.Buffer
	// answered counts peer-to-gateway bytes after a byte of this
	// connection was inverted; peerDone is set when the peer's side ends.
	answered atomic.Int64
	peerDone atomic.Bool
}

const tapCap = 64 << 20 // bytes kept per direction per connection

func newTap(t *testing.T) *tap {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	tp := &tap{ln: ln}
	t.Cleanup(func() { ln.Close() })
	go tp.accept()
	return tp
}

func (tp *tap) addr() string { return tp.ln.Addr().String() }

func (tp *tap) accept() {
	for {
		c, err := tp.ln.Accept()
		if err != nil {
			return
		}
		target, _ := tp.target.Load().(string)
		up, err := net.Dial("tcp", target)
		if err != nil {
			c.Close()
			continue
		}
		tc := &tapConn{}
		tp.mu.Lock()
		tp.conns = append(tp.conns, tc)
		tp.mu.Unlock()
		go tp.pipe(c, up, tc, true)
		go tp.pipe(up, c, tc, false)
	}
}

// pipe copies src to dst, recording, and closes both when src ends.
func (tp *tap) pipe(src, dst net.Conn, tc *tapConn, toPeer bool) {
	defer src.Close()
	defer dst.Close()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			b := buf[:n]
			if toPeer {
				tp.maybeFlip(b, tc)
			} else if tp.flipped.Load() == tc {
				tc.answered.Add(int64(n))
			}
			tc.mu.Lock()
			rec := &tc.fromPeer
			if toPeer {
				rec = &tc.toPeer
			}
			if rec.Len() < tapCap {
				rec.Write(b)
			}
			tc.mu.Unlock()
			if _, werr := dst.Write(b); werr != nil {
				return
			}
		}
		if err != nil {
			if !toPeer {
				tc.peerDone.Store(true)
			}
			return
		}
	}
}

// maybeFlip inverts one byte of b once flipAt bytes have passed.
func (tp *tap) maybeFlip(b []byte, tc *tapConn) {
	left := tp.flipAt.Load()
	if left <= 0 || tp.flipped.Load() != nil {
		return
	}
	if int64(len(b)) < left {
		tp.flipAt.Add(-int64(len(b)))
		return
	}
	if tp.flipped.CompareAndSwap(nil, tc) {
		b[left-1] ^= 0xff
	}
}

// captured returns every recorded byte, both directions, and the largest
// single gateway-to-peer recording.
func (tp *tap) captured() (all []byte, largest []byte) {
	tp.mu.Lock()
	defer tp.mu.Unlock()
	for _, c := range tp.conns {
		c.mu.Lock()
		all = append(all, c.toPeer.Bytes()...)
		all = append(all, c.fromPeer.Bytes()...)
		if c.toPeer.Len() > len(largest) {
			largest = bytes.Clone(c.toPeer.Bytes())
		}
		c.mu.Unlock()
	}
	return all, largest
}

// TestPeerTransportSecure: six peer processes and a gateway, one peer
// reached through a tap. Object bytes cross the tap only encrypted (the
// same bytes lie in plain on that peer's disk, so a plaintext transport
// would show them); a recorded connection replayed to the restarted peer
// gets no answer; a byte altered on the way breaks that connection and
// nothing wrong is stored: with two other peers down, every object still
// reads back byte-exact through the tapped peer's shards.
func TestPeerTransportSecure(t *testing.T) {
	if testing.Short() {
		t.Skip("starts seven tessera processes; run without -short")
	}
	const bucket = "wire"
	c := newProcCluster(t)
	gw := c.startGateway()
	tp := newTap(t)
	for range 5 {
		c.startPeer()
	}
	tapped := c.startPeer("--advertise-address", tp.addr())
	tp.target.Store(tapped.api)
	c.waitAlive(6)
	c.waitEpoch(6)
	mc, _ := newMinio(t, gw.api, c.access, c.secret)
	makeBucketSoon(t, mc, bucket)
	ctx := context.Background()

	marker := []byte("tessera-plaintext-marker/")
	body := bytes.Repeat(marker, (1<<20)/len(marker))
	set := newObjectSet(bucket)
	for i := range 8 {
		key := fmt.Sprintf("marked/%d", i)
		if _, err := mc.PutObject(ctx, bucket, key, bytes.NewReader(body), int64(len(body)), minio.PutObjectOptions{}); err != nil {
			t.Fatal(err)
		}
		set.live[key] = sha256.Sum256(body)
	}
	set.verify(ctx, t, mc)

	all, largest := tp.captured()
	if len(all) < 1<<20 {
		t.Fatalf("only %d bytes crossed the tap: the peer is not reached through it", len(all))
	}
	if !onDisk(t, tapped.dir, marker) {
		t.Fatal("the tapped peer holds no plaintext shard bytes: the check below would prove nothing")
	}
	if bytes.Contains(all, marker) {
		t.Fatal("object bytes crossed the wire in plaintext")
	}
	if bytes.Contains(all, []byte("HTTP/1.1")) {
		t.Fatal("an HTTP exchange crossed the wire in plaintext")
	}
	if len(largest) == 0 || largest[0] != 0x16 {
		t.Fatalf("the gateway's stream does not open with a TLS handshake record")
	}
	t.Logf("%d bytes crossed the tap, none of them plaintext", len(all))

	// Replay: the largest recorded gateway-to-peer connection, sent again
	// to the restarted peer.
	c.stop(tapped)
	c.start(tapped)
	waitUntil(t, 30*time.Second, "the restarted peer listens", func() bool {
		conn, err := net.Dial("tcp", tapped.api)
		if err == nil {
			conn.Close()
		}
		return err == nil
	})
	reply := replay(t, tapped.api, largest)
	if bytes.Contains(reply, []byte("HTTP/")) {
		t.Fatalf("a replayed connection got an HTTP answer: %q", reply[:min(len(reply), 200)])
	}

	// Substitution: one byte of the next 256 KiB the gateway sends the
	// peer is inverted, mid-way through a request.
	tp.flipAt.Store(256 << 10)
	for i := 0; tp.flipped.Load() == nil && i < 64; i++ {
		key := fmt.Sprintf("flipped/%d", i)
		data := payload(int64(1000+i), 1<<20)
		if _, err := mc.PutObject(ctx, bucket, key, bytes.NewReader(data), int64(len(data)), minio.PutObjectOptions{}); err != nil {
			t.Fatalf("put %s with a byte altered on the way to one peer: %v", key, err)
		}
		set.live[key] = sha256.Sum256(data)
	}
	cut := tp.flipped.Load()
	if cut == nil {
		t.Fatal("no byte was altered: the tap saw too little traffic")
	}
	// The peer refuses the altered record: it ends the connection with at
	// most a TLS alert (a few dozen bytes), never an answer to the request.
	waitUntil(t, 10*time.Second, "the peer ends the altered connection", cut.peerDone.Load)
	if n := cut.answered.Load(); n > 64 {
		t.Fatalf("the peer sent %d bytes on the altered connection after the change", n)
	}
	waitUntil(t, 60*time.Second, "every object on all six peers again", func() bool {
		for key := range set.live {
			if shardsComplete(c.peers, bucket, key, 6) != "" {
				return false
			}
		}
		return true
	})
	// Every object now needs the tapped peer's shard.
	c.kill(c.peers[0])
	c.kill(c.peers[1])
	set.verify(ctx, t, mc)
}

// replay dials addr, sends rec and returns what comes back within 5 s.
func replay(t *testing.T, addr string, rec []byte) []byte {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
	go func() { _, _ = conn.Write(rec) }()
	got, _ := io.ReadAll(conn)
	return got
}

// onDisk reports whether a file under dir contains b.
func onDisk(t *testing.T, dir string, b []byte) bool {
	t.Helper()
	found := false
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || found {
			return nil
		}
		data, err := os.ReadFile(path)
		if err == nil && bytes.Contains(data, b) {
			found = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return found
}
