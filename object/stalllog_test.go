package object

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/rs/zerolog"
)

// A peer that stalls is reported once, as a warning, however many writes
// then leave it out while its mark holds: those are logged at debug
// level only (each is still queued for repair). Before, every such write
// logged a warning of its own, thousands a second under load.
func TestStalledPeerLoggedOnce(t *testing.T) {
	var logs syncBuffer
	l, fc, rl := hungLayer(t, func(c *Config) {
		c.Logger = zerolog.New(&logs).Level(zerolog.DebugLevel)
	})
	ctx := testCtx(t)
	const shard = 2
	hung := fc.peerAt(testBucket, "k0", 6, shard)
	hung.setFault(faultHang)
	const writes = 20
	for i := range writes {
		key := fmt.Sprintf("k%d", i)
		if err := putCtx(ctx, l, key, randBytes(uint64(i), 700)); err != nil {
			t.Fatalf("put %s with one peer hung: %v", key, err)
		}
	}
	counts := map[string]int{}
	for _, line := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		var e struct{ Level, Message, Peer, Error string }
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		if e.Peer == string(hung.id) {
			counts[e.Level+" "+e.Message]++
		}
	}
	if n := counts["warn peer stalled: left out of new operations until a probe gets through"]; n != 1 {
		t.Errorf("%d stall warnings for the hung peer, want 1: %v", n, counts)
	}
	if n := counts["warn write quorum met without this peer"]; n != 1 {
		t.Errorf("%d warnings of a write without the peer, want 1 (the write that met the stall): %v", n, counts)
	}
	if n := counts["debug write quorum met without this peer"]; n < writes-2 {
		t.Errorf("%d debug lines for the writes that left the peer out, want about %d: %v", n, writes-1, counts)
	}
	avoided := 0
	for i := range writes {
		key := fmt.Sprintf("k%d", i)
		ps := placementIDs(fc, key)
		for s, id := range ps {
			if id == hung.id && rl.queued(key, s) {
				avoided++
			}
		}
	}
	if avoided != writes {
		t.Errorf("%d of %d writes queued a repair for the hung peer's shard", avoided, writes)
	}
}
