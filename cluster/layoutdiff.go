package cluster

import (
	"slices"
	"strings"
)

// PeerChange is one peer's difference between two layouts. From is nil
// for a peer the later layout adds, To for one it removes.
type PeerChange struct {
	ID       string
	From, To *EpochPeer
}

// Kind names the change: "join", "leave", "drain" (weight to 0, its data
// moves off), or "reweight" (weight, token count or zone).
func (c PeerChange) Kind() string {
	switch {
	case c.From == nil:
		return "join"
	case c.To == nil:
		return "leave"
	case c.To.Vnodes == 0 && c.From.Vnodes > 0:
		return "drain"
	}
	return "reweight"
}

// Diff lists the peers whose entry differs between from and to, sorted
// by ID.
func Diff(from, to Epoch) []PeerChange {
	old := map[string]*EpochPeer{}
	for i := range from.Peers {
		old[from.Peers[i].ID] = &from.Peers[i]
	}
	var out []PeerChange
	for i := range to.Peers {
		p := &to.Peers[i]
		o, ok := old[p.ID]
		delete(old, p.ID)
		if ok && *o == *p {
			continue
		}
		c := PeerChange{ID: p.ID, To: p}
		if ok {
			c.From = o
		}
		out = append(out, c)
	}
	for id, o := range old {
		out = append(out, PeerChange{ID: id, From: o})
	}
	slices.SortFunc(out, func(a, b PeerChange) int { return strings.Compare(a.ID, b.ID) })
	return out
}
