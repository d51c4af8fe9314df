package object

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"tessera/meta"
)

// TestDecideVersionsInFlux runs the version decision over the answers of
// six peers of a 4+2 object as an overwrite (T over S) lands on them. A
// key some version of which may be acknowledged is never absent.
func TestDecideVersionsInFlux(t *testing.T) {
	S, T := meta.Stamp{Nanos: 100, Writer: "w"}, meta.Stamp{Nanos: 200, Writer: "w"}
	const (
		nf   = "nf"   // answered: no record
		fail = "fail" // the read failed
		wait = ""     // not answered yet
	)
	cases := []struct {
		name    string
		answers [6]string // per shard: "S", "T", "T-del" (tombstone), nf, fail, wait
		want    string    // "S", "T", "T-del", "absent", "flux", "quorum", "pending"
		replace bool      // want version.replacing
	}{
		{"settled", [6]string{"S", "S", "S", "S", "S", "S"}, "S", false},
		{"overwrite on two", [6]string{"T", "T", "S", "S", "S", "S"}, "S", true},
		{"overwrite on three", [6]string{"T", "T", "T", "S", "S", "S"}, "flux", false},
		{"overwrite on four", [6]string{"T", "T", "T", "T", "S", "S"}, "T", false},
		{"delete on three", [6]string{"T-del", "T-del", "T-del", "S", "S", "S"}, "flux", false},
		{"delete on four", [6]string{"T-del", "T-del", "T-del", "T-del", "S", "S"}, "T-del", false},
		{"one down, overwrite on three", [6]string{"T", "T", "T", "S", "S", fail}, "flux", false},
		{"one down, overwrite on two", [6]string{"T", "T", "S", "S", "S", fail}, "flux", false},
		{"one down, overwrite on four", [6]string{"T", "T", "T", "T", "S", fail}, "T", false},
		{"one wiped", [6]string{nf, "S", "S", "S", "S", "S"}, "S", false},
		{"one wiped, overwrite on two", [6]string{"T", "T", nf, "S", "S", "S"}, "flux", false},
		{"first write on three", [6]string{"T", "T", "T", nf, nf, nf}, "absent", false},
		{"two crashed writes", [6]string{"S", "S", "T", nf, nf, nf}, "absent", false},
		{"four down", [6]string{"S", "S", fail, fail, fail, fail}, "quorum", false},
		{"four down, two versions", [6]string{"S", "T", fail, fail, fail, fail}, "flux", false},
		{"answers still coming", [6]string{"T", "T", "S", "S", wait, wait}, "pending", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			q, answers := fluxAnswers(tc.answers, S, T)
			v, err := decide(q, answers)
			got := ""
			var qe *QuorumError
			switch {
			case errors.Is(err, errInFlux):
				got = "flux"
			case errors.Is(err, errPending):
				got = "pending"
			case errors.As(err, &qe):
				got = "quorum"
			case err != nil:
				t.Fatalf("decide: %v", err)
			case v == nil:
				got = "absent"
			case v.obj.Stamp == S:
				got = "S"
			case v.obj.Deleted:
				got = "T-del"
			default:
				got = "T"
			}
			if got != tc.want {
				t.Fatalf("decided %s, want %s", got, tc.want)
			}
			if v != nil && v.replacing != tc.replace {
				t.Fatalf("replacing = %v, want %v", v.replacing, tc.replace)
			}
		})
	}
}

// fluxAnswers builds the query set of one 4+2 object on p0..p5 and the
// answers spec describes.
func fluxAnswers(spec [6]string, S, T meta.Stamp) (querySet, map[meta.PeerID]metaAnswer) {
	code := meta.Code{K: 4, M: 2}
	var peers []meta.PeerID
	for i := range 6 {
		peers = append(peers, meta.PeerID(fmt.Sprintf("p%d", i)))
	}
	q := querySet{peers: peers, index: map[meta.PeerID]int{}, codes: []codeSet{{code: code, peers: peers}}}
	answers := map[meta.PeerID]metaAnswer{}
	for i, a := range spec {
		p := peers[i]
		q.index[p] = i
		rec := func(st meta.Stamp, del bool) *meta.Object {
			return &meta.Object{Bucket: "b", Key: "k", Stamp: st, Deleted: del, Code: code, Distribution: peers, ShardIndex: i}
		}
		switch a {
		case "S":
			answers[p] = metaAnswer{peer: p, obj: rec(S, false)}
		case "T":
			answers[p] = metaAnswer{peer: p, obj: rec(T, false)}
		case "T-del":
			answers[p] = metaAnswer{peer: p, obj: rec(T, true)}
		case "nf":
			answers[p] = metaAnswer{peer: p, err: meta.ErrNotFound}
		case "fail":
			answers[p] = metaAnswer{peer: p, err: errDown}
		}
	}
	return q, answers
}

// keyState is what one fake peer holds of one key.
type keyState struct {
	raw    []byte
	kept   [][]byte
	shards map[string][]byte
}

func (p *fakePeer) snapshot(bucket, key string) keyState {
	p.mu.Lock()
	defer p.mu.Unlock()
	st := keyState{raw: p.records[objKey(bucket, key)], kept: p.kept[objKey(bucket, key)], shards: map[string][]byte{}}
	for k, v := range p.shards {
		if strings.HasPrefix(k, objKey(bucket, key)+"\x00") {
			st.shards[k] = v
		}
	}
	return st
}

// restore makes the peer hold exactly st of the key, as a peer that
// removes replaced shard files in the commit would.
func (p *fakePeer) restore(t testing.TB, bucket, key string, st keyState) {
	t.Helper()
	o, err := meta.UnmarshalObject(st.raw)
	if err != nil {
		t.Fatal(err)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for k := range p.shards {
		if strings.HasPrefix(k, objKey(bucket, key)+"\x00") {
			delete(p.shards, k)
		}
	}
	for k, v := range st.shards {
		p.shards[k] = v
	}
	p.setRecord(o, st.raw)
	if len(st.kept) > 0 {
		p.kept[objKey(bucket, key)] = st.kept
	} else {
		delete(p.kept, objKey(bucket, key))
	}
}

// overwriteStates puts old then next under key and returns what each
// peer of the placement held after each, the overwrite settled (the
// peers keep no copy of old).
func overwriteStates(t *testing.T, l *Layer, fc *fakeCluster, key string, old, next []byte) (peers []*fakePeer, before, after []keyState) {
	t.Helper()
	peers = placementPeers(fc, key, 6)
	put(t, l, key, old)
	for _, p := range peers {
		before = append(before, p.snapshot(testBucket, key))
	}
	put(t, l, key, next)
	waitSettled(t, peers, key)
	for _, p := range peers {
		after = append(after, p.snapshot(testBucket, key))
	}
	return peers, before, after
}

// waitSettled waits until no peer keeps a replaced version of key: the
// writer settles in the background once its commit met the quorum.
func waitSettled(t *testing.T, peers []*fakePeer, key string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for _, p := range peers {
		for p.keptCount(testBucket, key) > 0 {
			if time.Now().After(deadline) {
				t.Fatalf("%s still keeps a replaced version of %s", p.id, key)
			}
			time.Sleep(time.Millisecond)
		}
	}
}

// unsettled is what a peer holds once it committed the version of after
// over the one of before, not settled yet: both, the older kept.
func unsettled(before, after keyState) keyState {
	st := keyState{raw: after.raw, kept: [][]byte{before.raw}, shards: maps.Clone(after.shards)}
	maps.Copy(st.shards, before.shards)
	return st
}

// halfLanded leaves key "k" as an overwrite half landed does: the last
// three peers still at before, the first three at after, keeping the old
// version (keep) or not (as if settled).
func halfLanded(t *testing.T, peers []*fakePeer, before, after []keyState, keep bool) {
	t.Helper()
	for i := range 6 {
		switch {
		case i >= 3:
			peers[i].restore(t, testBucket, "k", before[i])
		case keep:
			peers[i].restore(t, testBucket, "k", unsettled(before[i], after[i]))
		}
	}
}

// A HEAD or GET that meets an overwrite half landed — three peers hold the
// new version, three the old — answers with the old version at once, read
// whole from the copies the new version's peers keep until it is settled;
// once the write has landed everywhere, with the new one. On peers that
// keep no copy (a run of writes cut short outgrew their lists) neither
// version is readable from its own holders: the read waits for the write
// to settle and answers with the new version, never NoSuchKey.
func TestReadDuringHalfLandedOverwrite(t *testing.T) {
	for _, size := range []int{300, 2*testBlock + 5} {
		for _, keep := range []bool{true, false} {
			t.Run(fmt.Sprintf("%d bytes, kept copies %v", size, keep), func(t *testing.T) {
				l, fc := newTestLayer(t)
				old, next := randBytes(1, size), randBytes(2, size)
				peers, before, after := overwriteStates(t, l, fc, "k", old, next)
				halfLanded(t, peers, before, after, keep)
				if keep {
					mustGet(t, l, "k", old)
				}
				go func() {
					time.Sleep(30 * time.Millisecond)
					for i := 3; i < 6; i++ {
						peers[i].restore(t, testBucket, "k", after[i])
					}
				}()
				if keep {
					time.Sleep(60 * time.Millisecond)
				}
				info, err := l.HeadObject(context.Background(), testBucket, "k")
				if err != nil {
					t.Fatalf("head during the overwrite: %v", err)
				}
				if info.ETag != md5hex(next) {
					t.Fatalf("head: ETag %s, want the new version's %s", info.ETag, md5hex(next))
				}
				mustGet(t, l, "k", next)
			})
		}
	}
}

// An overwrite that never settles (its writer died half way, three peers
// took it) leaves the old version readable through the copies those
// peers keep: HEAD and GET answer with it, byte-exact. Without the kept
// copies no version is readable, yet the old one was acknowledged: the
// read fails with ErrQuorum after SettleWait, never with not-found.
func TestUnsettledOverwriteIsNotAbsent(t *testing.T) {
	const settle = 80 * time.Millisecond
	for _, keep := range []bool{true, false} {
		t.Run(fmt.Sprint("kept copies ", keep), func(t *testing.T) {
			l, fc := newTestLayer(t, func(c *Config) { c.SettleWait = settle })
			old, next := randBytes(1, 300), randBytes(2, 300)
			peers, before, after := overwriteStates(t, l, fc, "k", old, next)
			halfLanded(t, peers, before, after, keep)
			if keep {
				mustGet(t, l, "k", old)
				return
			}
			start := time.Now()
			_, err := l.HeadObject(context.Background(), testBucket, "k")
			wantErr(t, err, ErrQuorum)
			if errors.Is(err, ErrObjectNotFound) {
				t.Fatalf("head: %v", err)
			}
			if d := time.Since(start); d < settle/2 {
				t.Fatalf("gave up after %s, before waiting for the key to settle", d)
			}
			got, err := get(l, "k")
			wantErr(t, err, ErrQuorum)
			if len(got) != 0 {
				t.Fatalf("failed read wrote %d bytes", len(got))
			}
		})
	}
}

// A GET resolves the old version (four peers hold it, two the new one),
// and then the new version lands on the other four and is settled, and
// their peers remove the old shard files at once (no grace period). The read must notice
// before its response starts and read the new version instead.
func TestReadFallsBackWhenShardsVanish(t *testing.T) {
	l, fc := newTestLayer(t)
	old, next := randBytes(1, 2*testBlock+5), randBytes(2, 2*testBlock+5)
	peers, before, after := overwriteStates(t, l, fc, "k", old, next)
	var landed atomic.Bool
	land := func() {
		if landed.CompareAndSwap(false, true) {
			for i := 2; i < 6; i++ {
				peers[i].restore(t, testBucket, "k", after[i])
			}
		}
	}
	for i := 2; i < 6; i++ {
		peers[i].restore(t, testBucket, "k", before[i])
		// Let the two new records answer first, so the read knows a write
		// is replacing what it resolves.
		peers[i].setDelay(30 * time.Millisecond)
		peers[i].onShard = land
	}
	var starts int
	var buf bytes.Buffer
	err := l.GetObject(context.Background(), testBucket, "k", func(info ObjectInfo) (w io.Writer, off, length int64, err error) {
		starts++
		if info.ETag != md5hex(next) {
			return nil, 0, 0, fmt.Errorf("response started for ETag %s, want the new version's", info.ETag)
		}
		return &buf, 0, -1, nil
	})
	if err != nil {
		t.Fatalf("get: %v", err)
	}
	if !landed.Load() || starts != 1 || !bytes.Equal(buf.Bytes(), next) {
		t.Fatalf("landed %v, %d starts, %d bytes read: want the new version once", landed.Load(), starts, buf.Len())
	}
}
