package cluster

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"
)

func TestDiff(t *testing.T) {
	p := func(id string, w float64, v int) EpochPeer { return EpochPeer{ID: id, Weight: w, Vnodes: v} }
	cases := []struct {
		name     string
		from, to []EpochPeer
		want     []string // "id kind"
	}{
		{"same", []EpochPeer{p("a", 1, 64)}, []EpochPeer{p("a", 1, 64)}, nil},
		{"join", []EpochPeer{p("a", 1, 64)}, []EpochPeer{p("a", 1, 60), p("b", 1, 64)}, []string{"a reweight", "b join"}},
		{"drain then leave", []EpochPeer{p("a", 1, 64), p("b", 1, 64)}, []EpochPeer{p("a", 1, 64), p("b", 0, 0)}, []string{"b drain"}},
		{"leave", []EpochPeer{p("a", 1, 64), p("b", 0, 0)}, []EpochPeer{p("a", 1, 64)}, []string{"b leave"}},
		{"zone", []EpochPeer{p("a", 1, 64)}, []EpochPeer{{ID: "a", Weight: 1, Vnodes: 64, Zone: "z"}}, []string{"a reweight"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, c := range Diff(Epoch{Number: 1, Peers: tc.from}, Epoch{Number: 2, Peers: tc.to}) {
				got = append(got, c.ID+" "+c.Kind())
			}
			if !slices.Equal(got, tc.want) {
				t.Fatalf("Diff = %v, want %v", got, tc.want)
			}
		})
	}
}

// Manual mode: a gateway switches it on; a peer that joins then is only
// pending, on every node's ring nothing changes, until the gateway
// applies it. Back in automatic mode, apply is refused.
func TestLayoutModeManual(t *testing.T) {
	var peers []*Node
	for i := range 3 {
		var join []string
		if i > 0 {
			join = []string{peers[0].Addr()}
		}
		peers = append(peers, epochNode(t, fmt.Sprintf("p%d", i), 1, "", join...))
	}
	gcfg := testConfig("gw", RoleGateway, &metaBox{}, peers[0].Addr())
	gcfg.ProposeInterval = 200 * time.Millisecond
	gw := startNode(t, gcfg)
	all := append([]*Node{gw}, peers...)
	eventually(t, "an epoch of three peers everywhere", func() bool {
		cur, _ := gw.Epoch()
		return agreed(all) > 0 && len(cur.Peers) == 3
	})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := gw.ApplyLayout(ctx); !errors.Is(err, ErrAutomatic) {
		t.Fatalf("apply in automatic mode: %v", err)
	}
	manual, err := gw.SetLayoutMode(ctx, true)
	if err != nil || !manual.Manual {
		t.Fatalf("switch to manual: %+v, %v", manual, err)
	}
	eventually(t, "every node in manual mode", func() bool { return agreed(all) == manual.Number })

	peers = append(peers, epochNode(t, "p3", 1, "", peers[0].Addr()))
	all = append(all, peers[3])
	eventually(t, "the newcomer is pending", func() bool {
		next, ok := gw.PendingLayout()
		return ok && slices.ContainsFunc(Diff(manual, next), func(c PeerChange) bool { return c.ID == "p3" && c.Kind() == "join" })
	})
	time.Sleep(time.Second) // five proposer intervals
	if cur, _ := peers[0].Epoch(); cur.Number != manual.Number {
		t.Fatalf("epoch %d minted in manual mode", cur.Number)
	}
	applied, err := gw.ApplyLayout(ctx)
	if err != nil || !applied.Manual || len(applied.Peers) != 4 || applied.Number <= manual.Number {
		t.Fatalf("apply: %+v, %v", applied, err)
	}
	eventually(t, "every node on the applied epoch", func() bool { return agreed(all) == applied.Number })
	if _, ok := gw.PendingLayout(); ok {
		t.Fatal("still pending after apply")
	}

	auto, err := gw.SetLayoutMode(ctx, false)
	if err != nil || auto.Manual || !auto.sameLayout(applied) {
		t.Fatalf("back to automatic: %+v, %v", auto, err)
	}
	if _, err := gw.ApplyLayout(ctx); !errors.Is(err, ErrAutomatic) {
		t.Fatalf("apply in automatic mode: %v", err)
	}
}

func TestLayoutCallsNeedAnEpoch(t *testing.T) {
	gw := startNode(t, testConfig("gw", RoleGateway, &metaBox{}))
	ctx := context.Background()
	if _, err := gw.SetLayoutMode(ctx, true); !errors.Is(err, ErrNoEpoch) {
		t.Fatalf("mode without an epoch: %v", err)
	}
	if _, ok := gw.PendingLayout(); ok {
		t.Fatal("pending layout without an epoch")
	}
}
