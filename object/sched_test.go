package object

import (
	"context"
	"errors"
	"io"
	"testing"

	"tessera/erasure"
	"tessera/meta"
	"tessera/sched"
)

// blockChunk is the shard bytes of one full test block at k = 4.
const blockChunk = testBlock/4 + 4

// getRead is one kind of GET the policy must decide.
type getRead struct {
	name   string
	size   int
	window int64 // Config.FetchWindow; 0 for the default
	// reads is how many reads the GET makes in the pool (one per
	// window), gaveUp how many of them the pool gave up on.
	reads, gaveUp uint64
	streams       bool                            // shard streams opened on peers (not inlined)
	fault         func(*fakeCluster, []*fakePeer) // applied after the PUT; peers by shard
}

// doubtfulAndDamaged leaves the read too few trusted holders: gossip
// holds two peers dead (the read leaves them out while four others
// remain) and a third serves damaged shard bytes.
func doubtfulAndDamaged(fc *fakeCluster, peers []*fakePeer) {
	fc.setAlive(peers[0].id, false)
	fc.setAlive(peers[1].id, false)
	peers[2].setFault(faultGarbage)
}

var getReads = []getRead{
	{name: "pooled", size: 3*testBlock + 17, reads: 1, streams: true},
	{name: "large", size: 5*testBlock + 3, window: 4 * blockChunk, reads: 3, streams: true},
	{name: "inlined", size: testInline - 100, reads: 1},
	{name: "gave-up", size: 2*testBlock + 5, reads: 2, gaveUp: 1, streams: true, fault: doubtfulAndDamaged},
}

// --sched governs every GET: under each policy the gateway accepts, a
// large part read window by window, an inlined object, an ordinary read
// and a read whose trusted holders do not suffice each go through the
// pool, which counts them under the policy, and every shard stream a
// peer served is a fetch the policy started.
func TestEveryGetFollowsThePolicy(t *testing.T) {
	for _, policy := range sched.Policies() {
		for _, rd := range getReads {
			t.Run(policy+"/"+rd.name, func(t *testing.T) {
				pool := newTestPool(t, policy, 4)
				l, fc := newTestLayer(t, func(c *Config) { c.Pool, c.FetchWindow = pool, rd.window })
				data := randBytes(uint64(rd.size), rd.size)
				put(t, l, "k", data)
				peers := placementPeers(fc, "k", 6)
				if rd.fault != nil {
					rd.fault(fc, peers)
				}
				before, streams := pool.Status(), shardReads(peers)
				mustGet(t, l, "k", data)
				checkDecided(t, policy, rd, before, pool.Status(), peers, streams)
			})
		}
	}
}

// checkDecided compares the pool's figures before and after one GET with
// what the peers served in between.
func checkDecided(t *testing.T, policy string, rd getRead, before, after sched.Status, peers []*fakePeer, streams map[meta.PeerID]int64) {
	t.Helper()
	if after.Policy != policy {
		t.Fatalf("pool runs %q, want %q", after.Policy, policy)
	}
	if n := after.Finished - before.Finished; n != rd.reads-rd.gaveUp {
		t.Errorf("%d reads finished in the pool, want %d", n, rd.reads-rd.gaveUp)
	}
	if n := after.Failed - before.Failed; n != rd.gaveUp {
		t.Errorf("%d reads given up by the pool, want %d; %+v", n, rd.gaveUp, after)
	}
	if n := after.Fetches - before.Fetches; n < (rd.reads-rd.gaveUp)*4 {
		t.Errorf("%d fetches started by the policy, want at least %d", n, (rd.reads-rd.gaveUp)*4)
	}
	chosen := chosenBy(after)
	for id, n := range chosenBy(before) {
		chosen[id] -= n
	}
	var served int64
	for _, p := range peers {
		n := p.reads.Load() - streams[p.id]
		served += n
		if n > int64(chosen[p.id]) {
			t.Errorf("peer %s served %d shard streams, the policy started %d fetches there", p.id, n, chosen[p.id])
		}
	}
	if rd.streams && served < int64(rd.reads-rd.gaveUp)*4 {
		t.Errorf("%d shard streams served, want at least %d", served, (rd.reads-rd.gaveUp)*4)
	}
	if !rd.streams && served != 0 {
		t.Errorf("an inlined object's read opened %d shard streams", served)
	}
}

func shardReads(peers []*fakePeer) map[meta.PeerID]int64 {
	out := map[meta.PeerID]int64{}
	for _, p := range peers {
		out[p.id] = p.reads.Load()
	}
	return out
}

func chosenBy(st sched.Status) map[meta.PeerID]uint64 {
	out := map[meta.PeerID]uint64{}
	for _, p := range st.Peers {
		out[p.ID] = p.Chosen
	}
	return out
}

// A range is one window when its shard range fits the limit, else
// windows of whole blocks of at most half the limit (a block at least),
// covering the range without gaps or overlaps.
func TestWindows(t *testing.T) {
	ec, err := erasure.New(4, 2, testBlock)
	if err != nil {
		t.Fatal(err)
	}
	const size = 10*testBlock + 5
	cases := []struct {
		name        string
		off, length int64
		limit       int64
		want        int
	}{
		{"fits", 0, 3 * testBlock, 4 * blockChunk, 1},
		{"whole object", 0, size, 4 * blockChunk, 6},
		{"from mid-block", testBlock + 7, 4 * testBlock, 4 * blockChunk, 3},
		{"limit under a block", 0, size, 100, 11},
		{"one byte", size - 1, 1, 100, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ws := windows(ec, size, tc.off, tc.length, tc.limit)
			if len(ws) != tc.want {
				t.Fatalf("%d windows, want %d: %+v", len(ws), tc.want, ws)
			}
			at := tc.off
			for _, w := range ws {
				so, sl := ec.ShardRange(size, w.off, w.length)
				switch {
				case w.off != at || w.length <= 0:
					t.Fatalf("window %+v does not follow on at %d", w, at)
				case so != w.shardOff || sl != w.shardLen:
					t.Fatalf("window %+v: shard range %d+%d", w, so, sl)
				case len(ws) > 1 && sl > max(tc.limit/2, blockChunk):
					t.Fatalf("window %+v over half the limit", w)
				}
				at += w.length
			}
			if at != tc.off+tc.length {
				t.Fatalf("windows end at %d, want %d", at, tc.off+tc.length)
			}
		})
	}
}

// failingWriter takes n bytes, then fails.
type failingWriter struct{ n int }

var errClientGone = errors.New("client went away")

func (w *failingWriter) Write(p []byte) (int, error) {
	if len(p) > w.n {
		k := w.n
		w.n = 0
		return k, errClientGone
	}
	w.n -= len(p)
	return len(p), nil
}

// A GET that stops in its first window (the client went away) leaves
// nothing behind: the window being fetched ahead is waited for, and the
// pool is empty once GetObject returns.
func TestWindowedReadStopsCleanly(t *testing.T) {
	pool := newTestPool(t, "eta", 4)
	l, _ := newTestLayer(t, func(c *Config) { c.Pool, c.FetchWindow = pool, 4*blockChunk })
	data := randBytes(5, 9*testBlock)
	put(t, l, "k", data)
	err := l.GetObject(context.Background(), testBucket, "k", func(ObjectInfo) (io.Writer, int64, int64, error) {
		return &failingWriter{n: testBlock / 2}, 0, -1, nil
	})
	if !errors.Is(err, errClientGone) {
		t.Fatalf("err = %v, want the writer's", err)
	}
	if st := pool.Status(); st.InUse != 0 || st.Queued != 0 {
		t.Fatalf("pool not empty after the read stopped: %+v", st)
	}
}

// A window that cannot gather k chunks fails with ErrQuorum, saying on
// one line why each shard failed, and wrapping those reasons.
func TestTooFewChunks(t *testing.T) {
	got := [][]byte{{1}, nil, {2}, nil, nil, {3}}
	err := tooFewChunks(4, got, map[int]error{3: erasure.ErrBitrot, 1: errDown})
	for _, target := range []error{ErrQuorum, erasure.ErrTooFewShards, erasure.ErrBitrot, errDown} {
		if !errors.Is(err, target) {
			t.Errorf("%v does not wrap %v", err, target)
		}
	}
	want := "3 of 4 shards read: " + ErrQuorum.Error() + "; " + erasure.ErrTooFewShards.Error() +
		"; shard 1: " + errDown.Error() + "; shard 3: " + erasure.ErrBitrot.Error()
	if err.Error() != want {
		t.Errorf("message %q, want %q", err, want)
	}
}
