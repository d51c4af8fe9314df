package peer_test

import (
	"tessera/object"
	"tessera/peer"
)

var _ object.ShardClient = (*peer.Client)(nil)
