package server

import (
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"

	"tessera/cluster"
	"tessera/meta"
	"tessera/object"
	"tessera/peer"
)

// clusterView adapts the gateway node's membership (gossip members and
// the peers it hosts) and the ring to the object layer's Cluster, and
// keeps one shard client per peer.
type clusterView struct {
	node   *cluster.Node
	secret []byte
	hc     *http.Client
	tr     *http.Transport

	mu      sync.Mutex
	clients map[meta.PeerID]*peerClient
	// local are the peers of this process (tessera server), called
	// directly rather than over their shard API.
	local map[meta.PeerID]object.ShardClient
}

type peerClient struct {
	addr string
	c    *peer.Client
}

var _ object.Cluster = (*clusterView)(nil)

// newClusterView calls the peers over TLS with a certificate of the
// cluster CA derived from secret (peer.NewTLS).
func newClusterView(node *cluster.Node, secret []byte) (*clusterView, error) {
	certs, err := peer.NewTLS(secret)
	if err != nil {
		return nil, err
	}
	tr := &http.Transport{
		TLSClientConfig:     certs.Client,
		DialContext:         (&net.Dialer{Timeout: 2 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:        256,
		MaxIdleConnsPerHost: 64,
		IdleConnTimeout:     90 * time.Second,
		// Shard bodies are already compressed-or-random erasure data.
		DisableCompression: true,
		WriteBufferSize:    64 << 10,
		ReadBufferSize:     64 << 10,
	}
	return &clusterView{node: node, secret: secret, tr: tr, hc: &http.Client{Transport: tr},
		clients: map[meta.PeerID]*peerClient{}, local: map[meta.PeerID]object.ShardClient{}}, nil
}

// addLocal makes calls to peer id go to c, a peer in this process.
func (v *clusterView) addLocal(id meta.PeerID, c object.ShardClient) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.local[id] = c
}

// isLocal reports whether peer id runs in this process.
func (v *clusterView) isLocal(id meta.PeerID) bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	_, ok := v.local[id]
	return ok
}

func (v *clusterView) Placement(bucket, key string, n int) ([]meta.PeerID, error) {
	return v.node.View().Placement(bucket, key, n)
}

func (v *clusterView) Peers() []meta.PeerID { return v.node.View().Peers() }

// OlderPlacements lets reads find objects still placed by older layouts
// while data moves.
func (v *clusterView) OlderPlacements(bucket, key string, n int) [][]meta.PeerID {
	return v.node.View().OlderPlacements(bucket, key, n)
}

// Leaving lets moves clear copies off the peers being drained.
func (v *clusterView) Leaving() []meta.PeerID { return v.node.View().Leaving() }

func (v *clusterView) Client(id meta.PeerID) (object.ShardClient, error) {
	v.mu.Lock()
	c, ok := v.local[id]
	v.mu.Unlock()
	if ok {
		return c, nil
	}
	return v.peer(id)
}

// peer is the shard API client of peer id, for calls beyond
// object.ShardClient (scrub reports).
func (v *clusterView) peer(id meta.PeerID) (*peer.Client, error) {
	m, ok := v.node.View().Member(id)
	if !ok || m.APIAddr == "" {
		return nil, fmt.Errorf("peer %s: address unknown", id)
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if pc, ok := v.clients[id]; ok && pc.addr == m.APIAddr {
		return pc.c, nil
	}
	c := peer.NewClient(peer.ClientConfig{ID: id, BaseURL: "https://" + m.APIAddr, Secret: v.secret, HTTP: v.hc})
	v.clients[id] = &peerClient{addr: m.APIAddr, c: c}
	return c, nil
}

func (v *clusterView) Close() error {
	v.tr.CloseIdleConnections()
	return nil
}

// Alive reports whether the membership holds the peer alive, so writes
// leave a dead or departed peer out at once rather than wait on it.
func (v *clusterView) Alive(id meta.PeerID) bool {
	m, ok := v.node.View().Member(id)
	return ok && m.State == cluster.StateAlive
}
