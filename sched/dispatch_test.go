package sched

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"tessera/meta"
)

// fixedLoad is a gossip snapshot.
type fixedLoad map[meta.PeerID][2]float64

func (f fixedLoad) Load(p meta.PeerID) (float64, float64, bool) {
	v, ok := f[p]
	return v[0], v[1], ok
}

func newD(t *testing.T, name string, cfg Config) *Dispatcher {
	t.Helper()
	d, err := NewDispatcher(name, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func peersOf(s ...string) []meta.PeerID {
	out := make([]meta.PeerID, len(s))
	for i, x := range s {
		out[i] = meta.PeerID(x)
	}
	return out
}

// starts returns the shards started for req, in order.
func starts(acts []Action, req ReqID) []int {
	var out []int
	for _, a := range acts {
		if a.Kind == Start && a.Req == req {
			out = append(out, a.Shard)
		}
	}
	return out
}

func kinds(acts []Action, k ActionKind) []Action {
	var out []Action
	for _, a := range acts {
		if a.Kind == k {
			out = append(out, a)
		}
	}
	return out
}

// TestLoadAlgorithmWorked follows Algorithm 2's steps by hand.
func TestLoadAlgorithmWorked(t *testing.T) {
	cases := []struct {
		name string
		in   LoadBatch
		want []LoadPick
	}{
		{
			// Charge: A = 5 (throughput_send) + 4 + 2 = 11, B = 4, C = 4, D = 2.
			// Step 1: A is most loaded; its largest removable chunk is file
			// 0's (4 bytes, file 0 has 3 > 2) → A = 7. Step 2: A still most
			// loaded; file 0 is at k, file 1's chunk (2 > 1) goes → A = 5.
			// Every file is at k: file 0 keeps B, C; file 1 keeps D.
			name: "two files, hot peer",
			in: LoadBatch{
				Load: map[string]float64{"A": 5},
				Files: []LoadFile{
					{K: 2, Size: 4, Chunks: []LoadChunk{{0, "A"}, {1, "B"}, {2, "C"}}},
					{K: 1, Size: 2, Chunks: []LoadChunk{{0, "A"}, {1, "D"}}},
				},
			},
			want: []LoadPick{{0, 1}, {0, 2}, {1, 1}},
		},
		{
			// A = 10 holds only a file already at k, so the next most loaded
			// peer is taken: B and C tie at 1, B goes first by name.
			name: "most loaded peer has nothing removable",
			in: LoadBatch{
				Files: []LoadFile{
					{K: 1, Size: 10, Chunks: []LoadChunk{{0, "A"}}},
					{K: 1, Size: 1, Chunks: []LoadChunk{{0, "B"}, {1, "C"}}},
				},
			},
			want: []LoadPick{{0, 0}, {1, 1}},
		},
		{
			// The monitor's load outweighs the batch: P is idle in the batch
			// but hot in gossip, so its chunks go first. Charges: P = 100+3+3,
			// Q = 3, R = 3+3. P drops file 0's chunk, then file 1's: both
			// files then sit at k.
			name: "gossiped throughput decides",
			in: LoadBatch{
				Load: map[string]float64{"P": 100},
				Files: []LoadFile{
					{K: 1, Size: 3, Chunks: []LoadChunk{{0, "P"}, {1, "R"}}},
					{K: 2, Size: 3, Chunks: []LoadChunk{{0, "P"}, {1, "Q"}, {2, "R"}}},
				},
			},
			want: []LoadPick{{0, 1}, {1, 1}, {1, 2}},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := LoadAlgorithm(tc.in); !slices.Equal(got, tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
		})
	}
}

// The load policy batches every read waiting at dispatch.
func TestLoadPolicyBatches(t *testing.T) {
	d := newD(t, "load", Config{Slots: 10, Load: fixedLoad{"A": {5, 0}}})
	_ = d.Submit(0, Request{ID: 1, Peers: peersOf("A", "B", "C"), K: 2, ChunkBytes: 4})
	_ = d.Submit(0, Request{ID: 2, Peers: peersOf("A", "D"), K: 1, ChunkBytes: 2})
	acts := d.Dispatch(0, nil)
	if got := starts(acts, 1); !slices.Equal(got, []int{1, 2}) {
		t.Errorf("read 1 started %v, want [1 2]", got)
	}
	if got := starts(acts, 2); !slices.Equal(got, []int{1}) {
		t.Errorf("read 2 started %v, want [1]", got)
	}
}

// Reads that arrive while the pool is full wait unplanned and are planned
// as one batch when a slot frees: two reads of A or B then go one to each,
// where planned one at a time both would take B (A is dropped first among
// equally loaded peers).
func TestLoadPolicyBatchesWhilePoolFull(t *testing.T) {
	d := newD(t, "load", Config{Slots: 2})
	_ = d.Submit(0, Request{ID: 1, Peers: peersOf("C", "D"), K: 2, ChunkBytes: 4})
	if got := starts(d.Dispatch(0, nil), 1); len(got) != 2 {
		t.Fatalf("read 1 started %v, want both shards", got)
	}
	// each read is dispatched as it arrives, as in the gateway
	for id := ReqID(2); id <= 3; id++ {
		_ = d.Submit(time.Duration(id), Request{ID: id, Peers: peersOf("A", "B"), K: 1, ChunkBytes: 4})
		if acts := d.Dispatch(time.Duration(id), nil); len(acts) != 0 {
			t.Fatalf("acted with the pool full: %v", acts)
		}
	}
	if w, ok := d.NextWake(2); ok {
		t.Fatalf("NextWake = %v while waiting for a slot; a Done dispatches", w)
	}
	d.Done(3, 1, 0, nil, 4)
	acts := d.Dispatch(3, nil)
	if got := starts(acts, 2); !slices.Equal(got, []int{1}) {
		t.Errorf("read 2 started %v, want [1] (B)", got)
	}
	d.Done(4, 1, 1, nil, 4)
	acts = d.Dispatch(4, nil)
	if got := starts(acts, 3); !slices.Equal(got, []int{0}) {
		t.Errorf("read 3 started %v, want [0] (A)", got)
	}
}

func TestLoadPolicyWindow(t *testing.T) {
	d := newD(t, "load", Config{Window: 10 * time.Millisecond})
	_ = d.Submit(0, Request{ID: 1, Peers: peersOf("A", "B"), K: 1, ChunkBytes: 4})
	if acts := d.Dispatch(5*time.Millisecond, nil); len(acts) != 0 {
		t.Fatalf("batch closed early: %v", acts)
	}
	if w, ok := d.NextWake(5 * time.Millisecond); !ok || w != 10*time.Millisecond {
		t.Fatalf("NextWake = %v %v, want 10ms", w, ok)
	}
	if acts := d.Dispatch(10*time.Millisecond, nil); len(starts(acts, 1)) != 1 {
		t.Fatalf("batch not dispatched at window end: %v", acts)
	}
}

func TestGreedyLowestThroughput(t *testing.T) {
	load := fixedLoad{"p0": {5, 0}, "p1": {1, 0}, "p2": {3, 0}, "p3": {0, 0}, "p4": {2, 0}, "p5": {4, 0}}
	d := newD(t, "greedy", Config{Load: load})
	_ = d.Submit(0, Request{ID: 7, Peers: ids(6), K: 3, ChunkBytes: 10})
	if got := starts(d.Dispatch(0, nil), 7); !slices.Equal(got, []int{3, 1, 4}) {
		t.Fatalf("started %v, want [3 1 4]", got)
	}
}

func TestWLCLeastConnections(t *testing.T) {
	d := newD(t, "wlc", Config{Slots: 10})
	_ = d.Submit(0, Request{ID: 1, Peers: peersOf("a", "b", "c"), K: 2, ChunkBytes: 10})
	_ = d.Submit(0, Request{ID: 2, Peers: peersOf("a", "b", "c"), K: 2, ChunkBytes: 10})
	acts := d.Dispatch(0, nil)
	if got := starts(acts, 1); !slices.Equal(got, []int{0, 1}) {
		t.Errorf("read 1 started %v, want [0 1]", got)
	}
	// a and b hold one connection each, c none: c, then a (tie with b).
	if got := starts(acts, 2); !slices.Equal(got, []int{2, 0}) {
		t.Errorf("read 2 started %v, want [2 0]", got)
	}
}

func TestWLCCPUReweights(t *testing.T) {
	d := newD(t, "wlc-cpu", Config{Slots: 100, Period: time.Second, Load: fixedLoad{"a": {0, 0.9}, "b": {0, 0}, "c": {0, 0}}})
	// Keep a busy: reads only a can serve.
	for i := range 8 {
		_ = d.Submit(0, Request{ID: ReqID(100 + i), Peers: peersOf("a"), K: 1, ChunkBytes: 1})
	}
	_ = d.Submit(0, Request{ID: 1, Peers: peersOf("b", "c"), K: 2, ChunkBytes: 1})
	for s := range 4 {
		d.Dispatch(time.Duration(s)*time.Second+time.Second, nil)
		if got, want := d.peer("a").weight, map[bool]float64{true: 0.8, false: 1}[s == 2]; s <= 2 && got != want {
			t.Fatalf("after round %d weight of a = %v, want %v", s+1, got, want)
		}
	}
	// CPU scales load: a read that could use a or b picks b.
	_ = d.Submit(5*time.Second, Request{ID: 2, Peers: peersOf("a", "b"), K: 1, ChunkBytes: 1})
	if got := starts(d.Dispatch(5*time.Second, nil), 2); !slices.Equal(got, []int{1}) {
		t.Fatalf("started %v, want [1]", got)
	}
}

func TestFCFSRRedundantThenCancel(t *testing.T) {
	d := newD(t, "fcfs-r", Config{Slots: 3})
	_ = d.Submit(0, Request{ID: 1, Peers: peersOf("a", "b", "c"), K: 2, ChunkBytes: 10})
	_ = d.Submit(0, Request{ID: 2, Peers: peersOf("d", "e"), K: 1, ChunkBytes: 10})
	acts := d.Dispatch(0, nil)
	got := starts(acts, 1)
	if slices.Sort(got); !slices.Equal(got, []int{0, 1, 2}) || len(starts(acts, 2)) != 0 {
		t.Fatalf("oldest read should hold all three slots: %v", acts)
	}
	d.Done(time.Millisecond, 1, 0, nil, 10)
	d.Done(time.Millisecond, 1, 2, nil, 10)
	acts = d.Dispatch(time.Millisecond, nil)
	if c := kinds(acts, Cancel); len(c) != 1 || c[0].Shard != 1 {
		t.Fatalf("want shard 1 cancelled, got %v", acts)
	}
	if f := kinds(acts, Finish); len(f) != 1 || f[0].Req != 1 {
		t.Fatalf("want read 1 finished, got %v", acts)
	}
	if got := starts(acts, 2); len(got) != 2 {
		t.Fatalf("read 2 should take both free slots, got %v", acts)
	}
}

func TestSERPTRShortestFirst(t *testing.T) {
	d := newD(t, "serpt-r", Config{Slots: 1})
	_ = d.Submit(0, Request{ID: 1, Peers: peersOf("a", "b"), K: 2, ChunkBytes: 100}) // 200 missing
	_ = d.Submit(0, Request{ID: 2, Peers: peersOf("c", "d"), K: 1, ChunkBytes: 150}) // 150 missing
	acts := d.Dispatch(0, nil)
	if len(starts(acts, 2)) != 1 || len(starts(acts, 1)) != 0 {
		t.Fatalf("want read 2 first, got %v", acts)
	}
}

func TestETAPicksLeastLoadedAndShortest(t *testing.T) {
	d := newD(t, "eta", Config{Slots: 10, NominalBW: 100, HedgeRate: -1})
	_ = d.Submit(0, Request{ID: 1, Peers: peersOf("a", "b", "c"), K: 2, ChunkBytes: 1000})
	if got := starts(d.Dispatch(0, nil), 1); !slices.Equal(got, []int{0, 1}) {
		t.Fatalf("read 1 started %v, want [0 1]", got)
	}
	_ = d.Submit(0, Request{ID: 2, Peers: peersOf("a", "b", "c"), K: 1, ChunkBytes: 1000})
	if got := starts(d.Dispatch(0, nil), 2); !slices.Equal(got, []int{2}) {
		t.Fatalf("read 2 started %v, want [2] (a and b are busy)", got)
	}

	// Shortest remaining first, unless aged.
	d = newD(t, "eta", Config{Slots: 1, NominalBW: 100, HedgeRate: -1})
	_ = d.Submit(0, Request{ID: 1, Peers: peersOf("a", "b"), K: 2, ChunkBytes: 100})
	_ = d.Submit(0, Request{ID: 2, Peers: peersOf("c", "d"), K: 2, ChunkBytes: 50})
	if got := starts(d.Dispatch(0, nil), 2); len(got) != 1 {
		t.Fatal("the shorter read should go first")
	}
	d = newD(t, "eta", Config{Slots: 1, NominalBW: 100, Aging: 1, HedgeRate: -1})
	_ = d.Submit(0, Request{ID: 1, Peers: peersOf("a", "b"), K: 1, ChunkBytes: 1000})
	_ = d.Submit(11*time.Second, Request{ID: 2, Peers: peersOf("c", "d"), K: 1, ChunkBytes: 10})
	// keys: 1000 + 100*0 vs 10 + 100*11: the old read wins.
	if got := starts(d.Dispatch(11*time.Second, nil), 1); len(got) != 1 {
		t.Fatal("the aged read should go first")
	}
}

func TestETAPeerCap(t *testing.T) {
	d := newD(t, "eta", Config{Slots: 10, PeerCap: 1, HedgeRate: -1})
	_ = d.Submit(0, Request{ID: 1, Peers: peersOf("a"), K: 1, ChunkBytes: 10})
	_ = d.Submit(0, Request{ID: 2, Peers: peersOf("a"), K: 1, ChunkBytes: 10})
	acts := d.Dispatch(0, nil)
	if len(kinds(acts, Start)) != 1 {
		t.Fatalf("cap 1 allows one fetch from a, got %v", acts)
	}
	d.Done(time.Millisecond, 1, 0, nil, 10)
	if got := starts(d.Dispatch(time.Millisecond, nil), 2); len(got) != 1 {
		t.Fatal("the second read should start once a is free")
	}
}

func TestETAHedgesStraggler(t *testing.T) {
	d := newD(t, "eta", Config{Slots: 5, NominalBW: 1000, Setup: time.Millisecond})
	_ = d.Submit(0, Request{ID: 1, Peers: peersOf("a", "b", "c"), K: 2, ChunkBytes: 1000})
	if got := starts(d.Dispatch(0, nil), 1); !slices.Equal(got, []int{0, 1}) {
		t.Fatalf("started %v", got)
	}
	d.Done(500*time.Millisecond, 1, 0, nil, 1000)
	// predicted 1.001 s for b; the initial threshold is 3x.
	due, ok := d.NextWake(time.Second)
	if diff := due - 3003*time.Millisecond; !ok || diff < -time.Microsecond || diff > time.Microsecond {
		t.Fatalf("hedge due %v %v, want 3.003s", due, ok)
	}
	if acts := d.Dispatch(2*time.Second, nil); len(acts) != 0 {
		t.Fatalf("hedged early: %v", acts)
	}
	acts := d.Dispatch(due, nil)
	if len(acts) != 1 || acts[0].Kind != Start || acts[0].Shard != 2 || !acts[0].Hedge {
		t.Fatalf("want a hedge on shard 2, got %v", acts)
	}
	d.Done(due+time.Millisecond, 1, 2, nil, 1000)
	acts = d.Dispatch(due+time.Millisecond, nil)
	if c := kinds(acts, Cancel); len(c) != 1 || c[0].Shard != 1 || len(kinds(acts, Finish)) != 1 {
		t.Fatalf("want shard 1 cancelled and read finished, got %v", acts)
	}
	// The budget: one token at start, 0.05 per finished read.
	_ = d.Submit(due, Request{ID: 2, Peers: peersOf("a", "b", "c"), K: 2, ChunkBytes: 1000})
	d.Dispatch(due, nil)
	if acts := d.Dispatch(due+time.Hour, nil); len(acts) != 0 {
		t.Fatalf("hedged without budget: %v", acts)
	}
}

func TestFailureReplacesShard(t *testing.T) {
	for _, name := range Policies() {
		t.Run(name, func(t *testing.T) {
			d := newD(t, name, Config{Slots: 10})
			_ = d.Submit(0, Request{ID: 1, Peers: peersOf("a", "b", "c"), K: 2, ChunkBytes: 10})
			acts := d.Dispatch(0, nil)
			first := starts(acts, 1)
			d.Done(time.Millisecond, 1, first[0], errors.New("reset"), 0)
			acts = d.Dispatch(time.Millisecond, nil)
			if name == "fcfs-r" || name == "serpt-r" {
				return // all three already in flight
			}
			if got := starts(acts, 1); len(got) != 1 || slices.Contains(first, got[0]) {
				t.Fatalf("first %v, replacement %v", first, acts)
			}
		})
	}
}

func TestTooFewHoldersFails(t *testing.T) {
	for _, name := range Policies() {
		d := newD(t, name, Config{})
		_ = d.Submit(0, Request{ID: 1, Peers: peersOf("a", ""), K: 2, ChunkBytes: 10})
		if f := kinds(d.Dispatch(0, nil), Fail); len(f) != 1 {
			t.Errorf("%s: read with one holder for k=2 should fail", name)
		}
		if d.Pending() != 0 {
			t.Errorf("%s: failed read still pending", name)
		}
	}
}

func TestDuplicateID(t *testing.T) {
	d := newD(t, "eta", Config{})
	_ = d.Submit(0, Request{ID: 1, Peers: peersOf("a", "b"), K: 1, ChunkBytes: 1})
	if err := d.Submit(0, Request{ID: 1, Peers: peersOf("a", "b"), K: 1, ChunkBytes: 1}); !errors.Is(err, ErrDuplicate) {
		t.Fatalf("err %v, want ErrDuplicate", err)
	}
}

func TestUnknownPolicy(t *testing.T) {
	if _, err := NewDispatcher("nope", Config{}); !errors.Is(err, ErrUnknownPolicy) {
		t.Fatalf("err %v", err)
	}
}

func TestStatus(t *testing.T) {
	d := newD(t, "eta", Config{Slots: 4, HedgeRate: -1})
	_ = d.Submit(0, Request{ID: 1, Peers: peersOf("a", "b", "c"), K: 2, ChunkBytes: 10})
	for _, a := range d.Dispatch(0, nil) {
		d.Done(3*time.Millisecond, 1, a.Shard, nil, 10)
	}
	d.Dispatch(3*time.Millisecond, nil)
	st := d.Status()
	if st.Policy != "eta" || st.Slots != 4 || st.InUse != 0 || st.Finished != 1 || st.P50 != 3*time.Millisecond {
		t.Fatalf("status %+v", st)
	}
	var chosen, skipped uint64
	for _, p := range st.Peers {
		chosen += p.Chosen
		skipped += p.Skipped
	}
	if chosen != 2 || skipped != 1 {
		t.Fatalf("chosen %d skipped %d, want 2 and 1: %s", chosen, skipped, fmt.Sprint(st.Peers))
	}
}

// linkLoad is a gossip snapshot that also announces link rates.
type linkLoad struct {
	fixedLoad
	links map[meta.PeerID]float64
}

func (l linkLoad) LinkRate(p meta.PeerID) (float64, bool) {
	r, ok := l.links[p]
	return r, ok
}

func TestETAUsesGossipedLinkRate(t *testing.T) {
	// a is first by index, but announces a link 10x slower than b's: a
	// 1000-byte chunk takes 1 s there and 0.1 s on b.
	load := linkLoad{fixedLoad: fixedLoad{}, links: map[meta.PeerID]float64{"a": 1000, "b": 10000}}
	d := newD(t, "eta", Config{Slots: 10, NominalBW: 1e9, HedgeRate: -1, Load: load})
	_ = d.Submit(0, Request{ID: 1, Peers: peersOf("a", "b"), K: 1, ChunkBytes: 1000})
	if got := starts(d.Dispatch(0, nil), 1); !slices.Equal(got, []int{1}) {
		t.Fatalf("started %v, want [1] (b's link is faster)", got)
	}
	// Without the announcement both peers are NominalBW: the lower index wins.
	d = newD(t, "eta", Config{Slots: 10, NominalBW: 1e9, HedgeRate: -1, Load: fixedLoad{}})
	_ = d.Submit(0, Request{ID: 1, Peers: peersOf("a", "b"), K: 1, ChunkBytes: 1000})
	if got := starts(d.Dispatch(0, nil), 1); !slices.Equal(got, []int{0}) {
		t.Fatalf("started %v, want [0]", got)
	}
}

// eta tags its fetches with the read's size for the peers; the baselines
// leave the peers' order alone.
func TestStartPriority(t *testing.T) {
	for _, tc := range []struct {
		policy string
		want   int64
	}{{"eta", 2 * 300}, {"serpt-r", 0}, {"load", 0}} {
		d := newD(t, tc.policy, Config{Slots: 10, HedgeRate: -1})
		_ = d.Submit(0, Request{ID: 1, Peers: peersOf("a", "b", "c"), K: 2, ChunkBytes: 300})
		started := kinds(d.Dispatch(0, nil), Start)
		if len(started) < 2 {
			t.Fatalf("%s: started %v", tc.policy, started)
		}
		for _, a := range started {
			if a.Priority != tc.want {
				t.Errorf("%s: start %+v, want priority %d", tc.policy, a, tc.want)
			}
		}
	}
}

// eta's aging is counted at the fastest announced link, not NominalBW:
// on 100x slower links one second of waiting is worth 100x fewer bytes.
func TestETAAgingFollowsLinkRate(t *testing.T) {
	for _, tc := range []struct {
		name  string
		load  LoadSource
		first ReqID
	}{
		{"no link rates: NominalBW", fixedLoad{}, 1},
		{"links 100x slower", linkLoad{links: map[meta.PeerID]float64{"a": 1, "b": 1, "c": 1, "d": 1}}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Aging 1: one second of waiting is worth one second of
			// transfer. At NominalBW 100 the read waiting 11 s gains 1100
			// bytes and passes the 990-byte-smaller newcomer; at 1 byte/s
			// it gains 11 and does not.
			d := newD(t, "eta", Config{Slots: 1, NominalBW: 100, Aging: 1, HedgeRate: -1, Load: tc.load})
			_ = d.Submit(0, Request{ID: 1, Peers: peersOf("a", "b"), K: 1, ChunkBytes: 1000})
			_ = d.Submit(11*time.Second, Request{ID: 2, Peers: peersOf("c", "d"), K: 1, ChunkBytes: 10})
			if got := starts(d.Dispatch(11*time.Second, nil), tc.first); len(got) != 1 {
				t.Fatalf("read %d should go first", tc.first)
			}
		})
	}
}

// TestETADecodeCostAndLocalPeers: eta counts the decode a parity shard
// costs, and prices local peers (one process, one disk) by everything in
// flight from them, so a second read of a 4+2 object whose data peers are
// busy with a first one takes parity from remote peers, which are idle
// links, but data again from local ones, which are not.
func TestETADecodeCostAndLocalPeers(t *testing.T) {
	six := peersOf("a", "b", "c", "d", "e", "f")
	cases := []struct {
		name   string
		local  bool
		decode float64
		want   []int
	}{
		{"remote peers, decode free", false, 1e15, []int{4, 5, 0, 1}},
		{"remote peers, decode slower than the wait for a busy data peer", false, 1e9, []int{0, 1, 2, 3}},
		{"local peers", true, 0, []int{0, 1, 2, 3}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := Config{Slots: 20, NominalBW: 1e9, HedgeRate: -1, DecodeRate: tc.decode}
			if tc.local {
				cfg.Local = func(meta.PeerID) bool { return true }
			}
			d := newD(t, "eta", cfg)
			_ = d.Submit(0, Request{ID: 1, Peers: six, K: 4, ChunkBytes: 1e6})
			if got := starts(d.Dispatch(0, nil), 1); !slices.Equal(got, []int{0, 1, 2, 3}) {
				t.Fatalf("first read started %v, want the data shards", got)
			}
			_ = d.Submit(0, Request{ID: 2, Peers: six, K: 4, ChunkBytes: 1e6})
			if got := starts(d.Dispatch(0, nil), 2); !slices.Equal(got, tc.want) {
				t.Fatalf("second read started %v, want %v", got, tc.want)
			}
		})
	}
}
