package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"tessera/gateway"
)

var renderNow = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func TestRenderStatus(t *testing.T) {
	settled := renderNow.Add(-2 * time.Hour)
	st := gateway.ClusterStatus{Gateway: "gw-1", Version: "0.1.0", Code: "4+2",
		Nodes: []gateway.AdminNode{
			{ID: "gw-1", Role: "gateway", State: "alive", Since: renderNow.Add(-5 * time.Minute), Address: "10.0.0.9:9000"},
			{ID: "peer-a", Role: "peer", State: "alive", Since: renderNow.Add(-3 * time.Hour), Address: "10.0.0.1:9100", Zone: "z1",
				CapacityBytes: 10 << 30, FreeBytes: 4 << 30, Vnodes: 64},
			{ID: "peer-b", Role: "peer", State: "dead", Since: renderNow.Add(-42 * time.Second), Address: "10.0.0.2:9100",
				CapacityBytes: 1 << 40, FreeBytes: 0, DiskFull: true, Draining: true, Vnodes: 0},
		},
		Ring:      gateway.RingSummary{Epoch: 7, Mode: "manual", Peers: 2, Vnodes: 64, Moving: true, Settled: 6, OlderLayouts: 1, PendingChanges: 1},
		Repair:    gateway.RepairSummary{Pending: 2, Repaired: 5, Failed: 1, ScanPasses: 3},
		Rebalance: gateway.MoveSummary{Running: true, Target: 7, Done: 6, Objects: 120, Bytes: 3 << 20},
		Scrub:     gateway.ScrubSummary{Peers: 2, Running: 1, LastFinished: &settled, CorruptFound: 4, Repaired: 3, Pending: 1},
	}
	want := `Gateway gw-1 (tessera 0.1.0), default code 4+2
Ring:      epoch 7, manual mode, 2 peers, 64 vnodes; data moving (settled at epoch 6, 1 older layout still read); 1 peer change pending (tessera admin layout)

ID      ROLE     STATE                    SINCE  ADDRESS        ZONE  CAPACITY  USED      FREE      VNODES
gw-1    gateway  alive                    5m     10.0.0.9:9000  -     -         -         -         -
peer-a  peer     alive                    3h     10.0.0.1:9100  z1    10.0 GiB  6.00 GiB  4.00 GiB  64
peer-b  peer     dead,draining,disk-full  42s    10.0.0.2:9100  -     1.00 TiB  1.00 TiB  0 B       0

Repair:    2 pending, 5 repaired, 1 failed (3 passes of the scanner)
Rebalance: moving data to epoch 7; 120 objects (3.00 MiB) moved, 0 failed, by this gateway
Scrub:     2 peers reporting, 1 running; oldest last pass 2h ago; 4 damaged copies found, 3 repaired, 1 pending
`
	var out bytes.Buffer
	renderStatus(&out, st, renderNow)
	if out.String() != want {
		t.Fatalf("got:\n%s\nwant:\n%s", out.String(), want)
	}
}

func TestRenderLayout(t *testing.T) {
	p := func(v float64) *float64 { return &v }
	peers := []gateway.LayoutPeer{
		{ID: "peer-a", State: "alive", Zone: "z1", Capacity: 1, Vnodes: 60, Share: 0.52, Weight: 0.5, P: p(1.04)},
		{ID: "peer-b", State: "alive", Capacity: 1, Vnodes: 58, Share: 0.48, Weight: 0.5, P: p(0.96)},
		{ID: "peer-c", State: "alive", Capacity: 2, Vnodes: 0},
	}
	cases := []struct {
		name string
		rep  gateway.LayoutReply
		want string
	}{
		{"manual with a pending join and drain", gateway.LayoutReply{Epoch: 4, Mode: "manual", RingWidth: 6, Peers: peers,
			Pending: &gateway.LayoutChange{Epoch: 5, Peers: []gateway.PeerChange{
				{ID: "peer-a", Kind: "reweight", From: &gateway.LayoutWeight{Capacity: 1, Vnodes: 60}, To: &gateway.LayoutWeight{Capacity: 1.5, Vnodes: 70}},
				{ID: "peer-c", Kind: "leave", From: &gateway.LayoutWeight{Capacity: 2}},
				{ID: "peer-d", Kind: "join", To: &gateway.LayoutWeight{Capacity: 1, Vnodes: 40}},
			}}}, `Ring epoch 4, manual mode, 3 peers; balancing stored shards for objects of 6 shards

PEER    STATE  ZONE  CAPACITY GiB  VNODES  SHARE s  WEIGHT w  P = s/w
peer-a  alive  z1    1             60      0.5200   0.5000    1.040
peer-b  alive  -     1             58      0.4800   0.5000    0.960
peer-c  alive  -     2             0       0.0000   0.0000    -
total                              118     1.0000   1.0000

Pending change, epoch 5 once applied (tessera admin layout apply):
  peer-a  reweight  vnodes 60 -> 70, capacity 1 -> 1.5
  peer-c  leave     off the ring (had 0 vnodes)
  peer-d  join      capacity 1, 40 vnodes
`},
		{"automatic, moving, nothing pending", gateway.LayoutReply{Epoch: 9, Mode: "auto", Peers: peers[:2], Moving: true, Settled: 8, OlderLayouts: 2},
			`Ring epoch 9, auto mode, 2 peers; balancing first-choice shares
Data is moving to it (settled at epoch 8; 2 older layouts still read)

PEER    STATE  ZONE  CAPACITY GiB  VNODES  SHARE s  WEIGHT w  P = s/w
peer-a  alive  z1    1             60      0.5200   0.5000    1.040
peer-b  alive  -     1             58      0.4800   0.5000    0.960
total                              118     1.0000   1.0000

No pending change.
`},
		{"membership ring", gateway.LayoutReply{Mode: "membership", Peers: peers[1:2]}, `No ring epoch: the ring is every peer seen, weight 1 (1 peer)

PEER    STATE  ZONE  WEIGHT  VNODES  SHARE s  WEIGHT w  P = s/w
peer-b  alive  -     1       58      0.4800   0.5000    0.960
total                        58      0.4800   0.5000

No pending change.
`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			renderLayout(&out, tc.rep)
			if out.String() != tc.want {
				t.Fatalf("got:\n%s\nwant:\n%s", out.String(), tc.want)
			}
		})
	}
}

func TestRenderInfoAndHeal(t *testing.T) {
	rep := gateway.BucketReport{Name: "photos", Created: renderNow, Objects: 3, Bytes: 3 << 20, Uploads: 1, Versioning: "off",
		Classes:   []gateway.ClassUsage{{Class: "ARCHIVE", Code: "2+1", Objects: 1, Bytes: 1 << 20}, {Class: "STANDARD", Code: "4+2", Objects: 2, Bytes: 2 << 20}},
		CORSRules: 1, CORS: "<CORSConfiguration/>"}
	want := `Bucket photos, created 2026-03-01 12:00:00 UTC
Objects:    3 (3.00 MiB); multipart uploads in progress: 1

  CLASS     CODE  OBJECTS  BYTES
  ARCHIVE   2+1   1        1.00 MiB
  STANDARD  4+2   2        2.00 MiB

Versioning: off; object lock: none
CORS:       1 rule
<CORSConfiguration/>
`
	var out bytes.Buffer
	renderInfo(&out, rep)
	if out.String() != want {
		t.Fatalf("info got:\n%s\nwant:\n%s", out.String(), want)
	}

	done := renderNow.Add(1500 * time.Millisecond)
	heal := gateway.HealStatus{ID: "3", HealRequest: gateway.HealRequest{Bucket: "photos", Prefix: "2026/"}, Started: renderNow,
		Finished: &done, Objects: 10, Healthy: 7, Repaired: 2, Shards: 3, Failed: 1, Errors: []string{"2026/x: quorum"}}
	out.Reset()
	renderHeal(&out, heal)
	want = `heal job 3 of photos/2026/ (records and shard bytes) finished in 1.5s: 10 objects examined, 7 healthy, 2 repaired (3 shards rewritten), 1 failed
  2026/x: quorum
`
	if out.String() != want {
		t.Fatalf("heal got:\n%s\nwant:\n%s", out.String(), want)
	}
	if err := healOutcome(heal); err == nil || !strings.Contains(err.Error(), "1 of 10 objects could not be repaired") {
		t.Fatalf("outcome of a job with a failure: %v", err)
	}
	heal.Finished, heal.Quick = nil, true
	out.Reset()
	renderHeal(&out, heal)
	if !strings.Contains(out.String(), "(records only) running: 10 objects examined") || healOutcome(heal) != nil {
		t.Fatalf("running job: %s", out.String())
	}
}

func TestHumanFigures(t *testing.T) {
	sizes := []struct {
		n    uint64
		want string
	}{{0, "0 B"}, {1023, "1023 B"}, {1024, "1.00 KiB"}, {10 << 20, "10.0 MiB"}, {150 << 30, "150 GiB"}, {5 << 50, "5.00 PiB"}}
	for _, s := range sizes {
		if got := humanBytes(s.n); got != s.want {
			t.Errorf("humanBytes(%d) = %s, want %s", s.n, got, s.want)
		}
	}
	ages := []struct {
		d    time.Duration
		want string
	}{{-time.Second, "0s"}, {59 * time.Second, "59s"}, {90 * time.Minute, "1h"}, {47 * time.Hour, "47h"}, {72 * time.Hour, "3d"}}
	for _, a := range ages {
		if got := age(renderNow, renderNow.Add(-a.d)); got != a.want {
			t.Errorf("age(%v) = %s, want %s", a.d, got, a.want)
		}
	}
	if age(renderNow, time.Time{}) != "-" || plural(1, "pass") != "1 pass" || plural(2, "pass") != "2 passes" || plural(0, "peer") != "0 peers" {
		t.Error("age of a zero time, or plurals")
	}
}
