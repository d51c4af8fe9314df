package object

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"tessera/meta"
)

// cfgPeer adds bucket configuration records to a fake peer, with the
// newest-wins rule the storage layer applies.
type cfgPeer struct {
	*fakePeer
	mu   sync.Mutex
	cfgs map[string]meta.BucketConfig
}

func (p *cfgPeer) PutBucketConfig(ctx context.Context, c meta.BucketConfig) error {
	if _, err := p.enter(ctx); err != nil {
		return err
	}
	if _, err := p.StatBucket(ctx, c.Bucket); err != nil {
		return err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if old, ok := p.cfgs[c.Bucket+"/"+c.Name]; ok && old.Updated.After(c.Updated) {
		return nil
	}
	p.cfgs[c.Bucket+"/"+c.Name] = c
	return nil
}

func (p *cfgPeer) GetBucketConfig(ctx context.Context, bucket, name string) (meta.BucketConfig, error) {
	if _, err := p.enter(ctx); err != nil {
		return meta.BucketConfig{}, err
	}
	if _, err := p.StatBucket(ctx, bucket); err != nil {
		return meta.BucketConfig{}, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	c, ok := p.cfgs[bucket+"/"+name]
	if !ok {
		return c, meta.ErrNotFound
	}
	return c, nil
}

type cfgCluster struct {
	*fakeCluster
	peers map[meta.PeerID]*cfgPeer
}

func (c *cfgCluster) Client(id meta.PeerID) (ShardClient, error) {
	if p, ok := c.peers[id]; ok {
		return p, nil
	}
	return c.fakeCluster.Client(id)
}

func TestBucketConfigQuorum(t *testing.T) {
	var fc *cfgCluster
	clock := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	l, base := newTestLayerN(t, 3, func(c *Config) {
		fc = &cfgCluster{fakeCluster: c.Cluster.(*fakeCluster), peers: map[meta.PeerID]*cfgPeer{}}
		for id, p := range fc.fakeCluster.peers {
			fc.peers[id] = &cfgPeer{fakePeer: p, cfgs: map[string]meta.BucketConfig{}}
		}
		c.Cluster = fc
		c.Now = func() time.Time { clock = clock.Add(time.Second); return clock }
	})
	ctx := context.Background()
	if _, err := l.GetBucketConfig(ctx, testBucket, "cors"); !errors.Is(err, ErrNoBucketConfig) {
		t.Fatalf("get unset: %v, want ErrNoBucketConfig", err)
	}
	if err := l.PutBucketConfig(ctx, "nope", "cors", []byte("x")); !errors.Is(err, ErrBucketNotFound) {
		t.Fatalf("put on missing bucket: %v", err)
	}
	if _, err := l.GetBucketConfig(ctx, "nope", "cors"); !errors.Is(err, ErrBucketNotFound) {
		t.Fatalf("get on missing bucket: %v", err)
	}

	// One peer down misses the first write; it still answers later with
	// its older (absent) record, and the newest record wins.
	down := base.peers[base.ids[0]]
	down.setFault(faultDown)
	if err := l.PutBucketConfig(ctx, testBucket, "cors", []byte("v1")); err != nil {
		t.Fatal(err)
	}
	down.setFault(0)
	steps := []struct {
		put  string
		down int // peer index down during the put, -1 none
		want string
	}{
		{"", -1, ""},     // check v1 visible with all up
		{"v2", 1, "v2"},  // peer 1 misses v2
		{"del", 2, ""},   // delete (empty data) while peer 2 is down
		{"v3", -1, "v3"}, // every peer gets v3
	}
	for i, st := range steps {
		if st.down >= 0 {
			base.peers[base.ids[st.down]].setFault(faultDown)
		}
		switch st.put {
		case "":
			st.want = "v1"
		case "del":
			if err := l.PutBucketConfig(ctx, testBucket, "cors", nil); err != nil {
				t.Fatalf("step %d: delete: %v", i, err)
			}
		default:
			if err := l.PutBucketConfig(ctx, testBucket, "cors", []byte(st.put)); err != nil {
				t.Fatalf("step %d: put: %v", i, err)
			}
		}
		if st.down >= 0 {
			base.peers[base.ids[st.down]].setFault(0)
		}
		got, err := l.GetBucketConfig(ctx, testBucket, "cors")
		if st.want == "" {
			if !errors.Is(err, ErrNoBucketConfig) {
				t.Fatalf("step %d: get: %q %v, want ErrNoBucketConfig", i, got, err)
			}
			continue
		}
		if err != nil || string(got) != st.want {
			t.Fatalf("step %d: get: %q %v, want %q", i, got, err, st.want)
		}
	}

	// Two of three down: no quorum either way.
	base.peers[base.ids[0]].setFault(faultDown)
	base.peers[base.ids[1]].setFault(faultDown)
	if err := l.PutBucketConfig(ctx, testBucket, "cors", []byte("v4")); !errors.Is(err, ErrQuorum) {
		t.Fatalf("put without quorum: %v", err)
	}
	if _, err := l.GetBucketConfig(ctx, testBucket, "cors"); !errors.Is(err, ErrQuorum) {
		t.Fatalf("get without quorum: %v", err)
	}
}
