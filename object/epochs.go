package object

import "tessera/meta"

// OlderPlacer is implemented by a Cluster whose layout changes in epochs.
// While data moves to a new epoch's placement, some objects still sit
// where an older layout put them (several, when epochs follow each other
// faster than data moves), so metadata reads ask those peers too
// (research A6 item 10); new writes go to the current placement only.
type OlderPlacer interface {
	// OlderPlacements are the key's placements under the older layouts
	// data may still sit on, newest first, none equal to the current one.
	OlderPlacements(bucket, key string, n int) [][]meta.PeerID
}

// olderPlacements asks the cluster for the older layouts' placements.
func (l *Layer) olderPlacements(bucket, key string, n int) [][]meta.PeerID {
	op, ok := l.cfg.Cluster.(OlderPlacer)
	if !ok {
		return nil
	}
	return op.OlderPlacements(bucket, key, n)
}

// Leaver is implemented by a Cluster whose ring can hold peers that no
// key is placed on: peers being drained, whose copies a move clears.
type Leaver interface {
	// Leaving are the peers on the ring without tokens.
	Leaving() []meta.PeerID
}
