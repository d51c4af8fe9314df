package server

import (
	"testing"

	"tessera/gateway"
	"tessera/object"
	"tessera/peer"
)

// The layers meet only through interfaces declared by their consumers; these
// assertions keep the implementations honest at compile time.
var (
	_ gateway.Backend       = (*object.Layer)(nil)
	_ object.ShardClient    = (*peer.Client)(nil)
	_ gateway.Authenticator = gatewayAuth(nil)
)

type gatewayAuth = gateway.Authenticator

func TestContracts(t *testing.T) {}
