package ring

import (
	"math"

	"tessera/meta"
)

// StoredShares returns, by peer ID, the fraction of all shards each peer
// stores when every key is placed on n distinct peers: the expected share
// of stored bytes for objects of equal size. It is exact, not sampled:
// every key in the arc (previous token, token] gets the same placement,
// so each arc adds its length to the n peers its walk picks. A peer holds
// at most one shard per key, so no fraction exceeds 1/n. Tokenless peers
// are absent; n is clamped to the peers with tokens.
func (r *Ring) StoredShares(n int) map[meta.PeerID]float64 {
	frac := r.storedFractions(n)
	out := make(map[meta.PeerID]float64, r.active)
	for i, p := range r.peers {
		if p.Vnodes > 0 {
			out[p.ID] = frac[i]
		}
	}
	return out
}

// storedFractions is StoredShares indexed like r.peers.
func (r *Ring) storedFractions(n int) []float64 {
	out := make([]float64, len(r.peers))
	n = min(max(n, 1), r.active)
	if n == 0 {
		return out
	}
	full := math.Exp2(64)
	for t, tok := range r.tokens {
		arc := full // a lone token owns the whole circle; the difference wraps to 0
		if len(r.tokens) > 1 {
			arc = float64(tok.pos - r.tokens[(t+len(r.tokens)-1)%len(r.tokens)].pos)
		}
		picked, skipped := r.walkFrom(t, n)
		for _, i := range picked {
			out[i] += arc
		}
		for _, i := range skipped[:n-len(picked)] {
			out[i] += arc
		}
	}
	for i := range out {
		out[i] /= full * float64(n)
	}
	return out
}

// storedTargets is what each peer's stored fraction should be under
// n-distinct placement: its weight fraction, except that no peer can
// hold more than 1/n (one shard per key). Capped peers' excess goes to
// the others in proportion to their weights, repeatedly, since that can
// push another peer over the cap (water-filling). Indexed like peers;
// weightless peers get 0.
func storedTargets(peers []Peer, n int) []float64 {
	out := make([]float64, len(peers))
	capped := make([]bool, len(peers))
	limit := 1 / float64(n)
	for {
		var free float64 // weight of the uncapped peers
		left := 1.0      // mass not taken by capped peers
		for i, p := range peers {
			switch {
			case p.Vnodes == 0 || !(p.Weight > 0):
			case capped[i]:
				left -= limit
			default:
				free += p.Weight
			}
		}
		changed := false
		for i, p := range peers {
			if p.Vnodes == 0 || !(p.Weight > 0) || capped[i] {
				continue
			}
			out[i] = left * p.Weight / free
			if out[i] > limit*(1+1e-12) {
				out[i], capped[i], changed = limit, true, true
			}
		}
		if !changed {
			return out
		}
	}
}
