package server

import (
	"tessera/gateway"
	"tessera/lifecycle"
	"tessera/object"
	"tessera/peer"
)

// The layers meet only through interfaces their consumers declare; these
// assertions keep the implementations in step at compile time.
var (
	_ gateway.Backend    = (*object.Layer)(nil)
	_ object.ShardClient = (*peer.Client)(nil)
	_ object.Mover       = (*peer.Client)(nil)
	_ object.Rewriter    = (*peer.Client)(nil)
	_ lifecycle.Store    = (*object.Layer)(nil)
)
