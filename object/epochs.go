package object

import "tessera/meta"

// PrevPlacer is implemented by a Cluster whose layout changes in epochs.
// While data moves to a new epoch's placement, some objects still sit on
// the previous one, so metadata reads ask both (research A6 item 10); new
// writes go to the current placement only.
type PrevPlacer interface {
	// PrevPlacement is the key's placement under the previous epoch; ok
	// is false when there is none or it equals the current one.
	PrevPlacement(bucket, key string, n int) (peers []meta.PeerID, ok bool)
}

// prevPlacement asks the cluster for the previous epoch's placement.
func (l *Layer) prevPlacement(bucket, key string, n int) ([]meta.PeerID, bool) {
	pp, ok := l.cfg.Cluster.(PrevPlacer)
	if !ok {
		return nil, false
	}
	return pp.PrevPlacement(bucket, key, n)
}
