package ring

import (
	"fmt"

	"tessera/meta"
)

// Placement returns n distinct peers for key, in shard order: walk
// clockwise from the key's hash and take each new peer whose zone is not
// used yet; once every zone is used, the remaining slots take the skipped
// peers in walk order. Without zones this is simply the first n distinct
// peers. Spreading the first shards over zones keeps a key readable when
// a whole zone fails, as long as the code tolerates that many shards.
//
// The result depends only on the ring and the key. A ring that gains a
// peer changes a key's set only by admitting that peer.
func (r *Ring) Placement(key string, n int) ([]meta.PeerID, error) {
	if n < 1 {
		return nil, fmt.Errorf("placement of %d peers: %w", n, ErrNotEnoughPeers)
	}
	if n > r.active {
		return nil, fmt.Errorf("placement of %d peers on %d: %w", n, r.active, ErrNotEnoughPeers)
	}
	picked, skipped := r.walk(KeyHash(key), n)
	out := make([]meta.PeerID, 0, n)
	for _, i := range picked {
		out = append(out, r.peers[i].ID)
	}
	for _, i := range skipped[:n-len(picked)] {
		out = append(out, r.peers[i].ID)
	}
	return out, nil
}

// walk visits tokens clockwise from h. It returns the peers taken in the
// zone-distinct pass and, in walk order, the distinct peers skipped
// because their zone was taken. It stops as soon as the answer is fixed:
// n peers picked, or every zone used and enough skipped peers to fill.
func (r *Ring) walk(h uint64, n int) (picked, skipped []int) {
	return r.walkFrom(r.successor(h), n)
}

// walkFrom is walk starting at token index start.
func (r *Ring) walkFrom(start, n int) (picked, skipped []int) {
	seen := make(map[int]bool, n)
	usedZones := make(map[string]bool, n)
	for step := range len(r.tokens) {
		p := r.tokens[(start+step)%len(r.tokens)].peer
		if seen[p] {
			continue
		}
		seen[p] = true
		if z := zoneKey(r.peers[p]); !usedZones[z] {
			usedZones[z] = true
			picked = append(picked, p)
		} else {
			skipped = append(skipped, p)
		}
		if len(picked) == n || (len(usedZones) == r.zones && len(picked)+len(skipped) >= n) {
			break
		}
	}
	return picked, skipped
}
