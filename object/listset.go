package object

import (
	"errors"

	"tessera/meta"
)

// A client's listing asks a read set first: all peers but as many as the
// default code has parity, those this layer avoids left out first, and
// the first of them rotating from listing to listing so that the work
// spreads. Every peer holding a key lists it, so from the read set's
// answers alone a key is decided exactly as asking everyone would decide
// it when the read set's lines of it all carry one stamp, at least k of
// them (k of the key's storage class), and k is more than the peers not
// asked: a newer write that reached its write quorum (at least k peers)
// then has a copy among the lines, which would disagree, and a newer one
// that did not is passed over by the read rule (listedVersion) whoever
// lists it, since the peers not asked are fewer than k. A page with a key
// the read set does not decide, or one a read-set peer failed or lacked
// the bucket for, is listed again from every peer. A read's metadata is
// asked in two phases the same way (metaPhases). What the peers left out
// are spared is most of a listing's cost: a delimiter listing is one
// index seek per common prefix on every peer asked.

// errUndecided ends a listing from a read set whose answers do not decide
// it alone.
var errUndecided = errors.New("the read set does not decide the listing")

// listReadSet returns the peers a listing asks first and how many it
// leaves out; none when it cannot leave any out.
func (l *Layer) listReadSet() ([]meta.PeerID, int) {
	all := l.cfg.Cluster.Peers()
	c := l.cfg.DefaultCode
	r := len(all) - c.M
	if c.M == 0 || r < c.K || len(all) == 0 {
		return all, 0
	}
	start := int(l.listTurn.Add(1) % uint64(len(all)))
	order := make([]meta.PeerID, len(all))
	avoided := make([]bool, len(all)) // asked once: a probe is let through once
	for i := range all {
		order[i] = all[(start+i)%len(all)]
		avoided[i] = l.avoided(order[i])
	}
	set := make([]meta.PeerID, 0, r)
	for _, pass := range []bool{false, true} { // trusted peers first
		for i, p := range order {
			if len(set) < r && avoided[i] == pass {
				set = append(set, p)
			}
		}
	}
	return set, len(all) - len(set)
}

// decides reports whether the read set's lines of one key decide it.
func (m *merger) decides(es []meta.Entry) bool {
	c := m.l.codeOfClass(es[0].StorageClass)
	return sameStamp(es) && len(es) >= c.K && c.K > m.unasked
}
