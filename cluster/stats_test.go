package cluster

import (
	"fmt"
	"reflect"
	"sync/atomic"
	"testing"
	"time"
)

// Every node's stats reach every other node, and a change shows up
// everywhere within a few gossip rounds.
func TestStatsGossip(t *testing.T) {
	const n = 4
	var active [n]atomic.Int64
	nodes := make([]*Node, n)
	for i := range n {
		box := &metaBox{m: NodeMeta{APIAddr: fmt.Sprintf("127.0.0.1:%d", 9000+i)}}
		var join []string
		if i > 0 {
			join = []string{nodes[0].Addr()}
		}
		cfg := testConfig(fmt.Sprintf("n%d", i), RolePeer, box, join...)
		cfg.Stats = func() Stats { return Stats{Active: int(active[i].Load()), CPU: 0.5} }
		active[i].Store(int64(100 + i))
		nodes[i] = startNode(t, cfg)
	}
	seesAll := func(want func(i int) int) func() bool {
		return func() bool {
			for _, a := range nodes {
				for i := range n {
					m, ok := a.Member(fmt.Sprintf("n%d", i))
					if !ok || m.Stats.Active != want(i) || m.Stats.CPU != 0.5 || m.StatsAt.IsZero() {
						return false
					}
				}
			}
			return true
		}
	}
	eventually(t, "every node sees every node's stats", seesAll(func(i int) int { return 100 + i }))
	start := time.Now()
	for i := range n {
		active[i].Store(int64(200 + i))
	}
	eventually(t, "a change reaches every node", seesAll(func(i int) int { return 200 + i }))
	t.Logf("stats change seen everywhere after %v", time.Since(start))
}

func TestStatsDecodeRejects(t *testing.T) {
	good, err := encodeStats(statsMsg{Origin: "a", Seq: 1, Stats: Stats{Active: 2}})
	if err != nil {
		t.Fatal(err)
	}
	if m, err := decodeStats(good); err != nil || m.Stats.Active != 2 {
		t.Fatalf("round trip: %+v, %v", m, err)
	}
	hosted, err := encodeStats(statsMsg{Origin: "p1", Seq: 1, Host: "gw", Meta: &NodeMeta{ID: "p1", Role: RolePeer, Zone: "z"}})
	if err != nil {
		t.Fatal(err)
	}
	if m, err := decodeStats(hosted); err != nil || m.Host != "gw" || m.Meta == nil || m.Meta.Zone != "z" {
		t.Fatalf("hosted round trip: %+v, %v", m, err)
	}
	for _, b := range [][]byte{nil, {msgStats}, []byte("x{}"), append([]byte{msgStats}, "{}"...),
		append([]byte{msgStats}, `{"o":"a","q":0}`...), append([]byte{msgStats}, make([]byte, 2000)...),
		// A hosted member's message without its meta, with another's, or
		// hosted by itself.
		append([]byte{msgStats}, `{"o":"p1","q":1,"h":"gw"}`...),
		append([]byte{msgStats}, `{"o":"p1","q":1,"h":"gw","n":{"id":"p2"}}`...),
		append([]byte{msgStats}, `{"o":"p1","q":1,"h":"p1","n":{"id":"p1"}}`...)} {
		if _, err := decodeStats(b); err == nil {
			t.Errorf("decodeStats(%q) accepted", b)
		}
	}
}

func FuzzDecodeStats(f *testing.F) {
	good, _ := encodeStats(statsMsg{Origin: "peer-1", Seq: 42, Stats: Stats{SendBps: 1e6, CPU: 0.3}})
	f.Add(good)
	f.Add([]byte{msgStats, '{', '}'})
	hosted, _ := encodeStats(statsMsg{Origin: "p1", Seq: 1, Host: "gw", Meta: &NodeMeta{ID: "p1", Role: RolePeer}})
	f.Add(hosted)
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := decodeStats(b)
		if err != nil {
			return
		}
		again, err := encodeStats(m)
		if err != nil {
			t.Fatal(err)
		}
		if m2, err := decodeStats(again); err != nil || !reflect.DeepEqual(m2, m) {
			t.Fatalf("re-decode: %+v vs %+v (%v)", m2, m, err)
		}
	})
}

func TestParseProcStat(t *testing.T) {
	cases := []struct {
		in          string
		idle, total uint64
		ok          bool
	}{
		{"cpu  10 0 5 80 5 0 0 0 3 0\ncpu0 1 2 3 4 5\n", 85, 100, true},
		{"intr 1\ncpu 1 1 1 1\n", 1, 4, true},
		{"cpu 1 1 1\n", 0, 0, false},
		{"cpu 1 x 1 1 1\n", 0, 0, false},
		{"", 0, 0, false},
	}
	for _, tc := range cases {
		idle, total, err := parseProcStat([]byte(tc.in))
		if (err == nil) != tc.ok || idle != tc.idle || total != tc.total {
			t.Errorf("%q: %d %d %v", tc.in, idle, total, err)
		}
	}
	s := &CPUSampler{path: t.TempDir() + "/missing"}
	if v := s.Sample(); v != 0 {
		t.Errorf("unreadable stat: %v", v)
	}
}
