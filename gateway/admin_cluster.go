package gateway

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"time"
)

// ErrAdminRequest marks an admin call the cluster's state refuses (an
// unknown peer, a layout call before the first epoch): 400 InvalidRequest
// with the error's own text, which says what to do instead.
var ErrAdminRequest = errors.New("admin request refused")

// ClusterAdmin is the cluster control an Admin may also offer: GET
// .../status and .../layout report, PUT .../layout?mode= switches the
// layout mode, POST .../layout/apply applies the pending change and POST
// .../decommission?peer= drains a peer.
type ClusterAdmin interface {
	// ClusterStatus reports members, ring and background jobs from what
	// the gateway already knows; it waits on no peer.
	ClusterStatus(ctx context.Context) ClusterStatus
	Layout(ctx context.Context) LayoutReply
	// SetLayoutMode takes LayoutManual or LayoutAuto.
	SetLayoutMode(ctx context.Context, mode string) (LayoutReply, error)
	ApplyLayout(ctx context.Context) (LayoutReply, error)
	// Decommission drains the peer named by its ID, a unique prefix of
	// it, or its shard API or gossip address.
	Decommission(ctx context.Context, peer string) (DecommissionReply, error)
}

// Layout modes. LayoutMembership is the ring of every peer seen, weight
// 1, before the first epoch (or under tessera server, which mints none).
const (
	LayoutAuto       = "auto"
	LayoutManual     = "manual"
	LayoutMembership = "membership"
)

// ClusterStatus is the body of GET .../status.
type ClusterStatus struct {
	Gateway   string         `json:"gateway"` // the node that answered
	Version   string         `json:"version"`
	Code      string         `json:"default_code"`
	Nodes     []AdminNode    `json:"nodes"`
	Ring      RingSummary    `json:"ring"`
	Repair    RepairSummary  `json:"repair"`
	Rebalance MoveSummary    `json:"rebalance"`
	Scrub     ScrubSummary   `json:"scrub"`
	Classes   []StorageClass `json:"storage_classes"`
}

// AdminNode is one member as the gateway sees it.
type AdminNode struct {
	ID      string    `json:"id"`
	Role    string    `json:"role"`  // peer, gateway
	State   string    `json:"state"` // alive, suspect, dead, left
	Since   time.Time `json:"since"` // when the state last changed
	Address string    `json:"address,omitempty"`
	Zone    string    `json:"zone,omitempty"`
	// Capacity and free bytes a peer advertises (0 for gateways).
	CapacityBytes uint64 `json:"capacity_bytes"`
	FreeBytes     uint64 `json:"free_bytes"`
	DiskFull      bool   `json:"disk_full"`
	Draining      bool   `json:"draining"`
	Vnodes        int    `json:"vnodes"`
}

// RingSummary is the ring in one line.
type RingSummary struct {
	Epoch  uint64 `json:"epoch"`
	Mode   string `json:"mode"`
	Peers  int    `json:"peers"`
	Vnodes int    `json:"vnodes"`
	// Moving: data is still moving to the current epoch's placement.
	Moving bool `json:"moving"`
	// PendingChanges counts the peers the pending layout changes.
	PendingChanges int    `json:"pending_changes"`
	OlderLayouts   int    `json:"older_layouts"`
	Settled        uint64 `json:"settled"`
}

// RepairSummary is the gateway's repair queue.
type RepairSummary struct {
	Pending    int    `json:"pending"`
	Repaired   uint64 `json:"repaired"`
	Failed     uint64 `json:"failed"`
	ScanPasses uint64 `json:"scan_passes"`
}

// MoveSummary is the data mover's progress; only the lead gateway moves
// data, so on the others it stays at zero.
type MoveSummary struct {
	Running bool   `json:"running"`
	Target  uint64 `json:"target_epoch"`
	Done    uint64 `json:"done_epoch"`
	Objects uint64 `json:"objects_moved"`
	Bytes   int64  `json:"bytes_moved"`
	Failed  uint64 `json:"failed"`
}

// ScrubSummary sums the peers' scrub reports as last polled.
type ScrubSummary struct {
	Peers          int        `json:"peers"`
	Running        int        `json:"running"`
	LastFinished   *time.Time `json:"last_finished"` // the oldest peer's last full pass
	ObjectsChecked int64      `json:"objects_checked"`
	CorruptFound   int64      `json:"corrupt_found"`
	Repaired       int64      `json:"repaired"`
	Pending        int64      `json:"pending"`
}

// StorageClass is a class name and its code.
type StorageClass struct {
	Name string `json:"name"`
	Code string `json:"code"`
}

// LayoutReply is the body of GET and PUT .../layout and POST
// .../layout/apply.
type LayoutReply struct {
	Epoch uint64 `json:"epoch"`
	Mode  string `json:"mode"`
	// RingWidth is the shard count per object the proposer balances
	// stored bytes for (0: first-choice shares).
	RingWidth    int           `json:"ring_width"`
	Peers        []LayoutPeer  `json:"peers"`
	Moving       bool          `json:"moving"`
	OlderLayouts int           `json:"older_layouts"`
	Settled      uint64        `json:"settled"`
	Pending      *LayoutChange `json:"pending,omitempty"`
}

// LayoutPeer is one peer on the ring: its token count, share s of the
// hash circle, weight w as a fraction of all weights, and P = s/w.
type LayoutPeer struct {
	ID    string `json:"id"`
	State string `json:"state"`
	Zone  string `json:"zone,omitempty"`
	// Capacity is the raw weight (capacity in GiB; 1 on the membership
	// ring).
	Capacity float64  `json:"capacity_weight"`
	Vnodes   int      `json:"vnodes"`
	Share    float64  `json:"share"`
	Weight   float64  `json:"weight"`
	P        *float64 `json:"p"`
}

// LayoutChange is the layout the peers call for and how it differs: in
// automatic mode the proposer's next epoch, in manual mode what apply
// would mint.
type LayoutChange struct {
	Epoch uint64       `json:"epoch"`
	Peers []PeerChange `json:"peers"`
}

// PeerChange is one peer's entry before and after; nil where absent.
type PeerChange struct {
	ID   string        `json:"id"`
	Kind string        `json:"kind"` // join, leave, drain, reweight
	From *LayoutWeight `json:"from,omitempty"`
	To   *LayoutWeight `json:"to,omitempty"`
}

// LayoutWeight is a peer's entry in a layout.
type LayoutWeight struct {
	Capacity float64 `json:"capacity_weight"`
	Vnodes   int     `json:"vnodes"`
	Zone     string  `json:"zone,omitempty"`
}

// DecommissionReply is the body of POST .../decommission.
type DecommissionReply struct {
	Peer    string `json:"peer"` // the ID the name resolved to
	Address string `json:"address"`
}

func (g *gateway) clusterAdmin() (ClusterAdmin, error) {
	if ca, ok := g.admin.(ClusterAdmin); ok {
		return ca, nil
	}
	return nil, apiErr(errNotImplemented)
}

func (g *gateway) getStatus(w http.ResponseWriter, r *http.Request) error {
	ca, err := g.clusterAdmin()
	if err != nil {
		return err
	}
	return writeAdminJSON(w, ca.ClusterStatus(r.Context()))
}

func (g *gateway) getLayout(w http.ResponseWriter, r *http.Request) error {
	ca, err := g.clusterAdmin()
	if err != nil {
		return err
	}
	return writeAdminJSON(w, ca.Layout(r.Context()))
}

// putLayout switches the mode: PUT .../layout?mode=manual|auto.
func (g *gateway) putLayout(w http.ResponseWriter, r *http.Request) error {
	ca, err := g.clusterAdmin()
	if err != nil {
		return err
	}
	mode := r.URL.Query().Get("mode")
	if mode != LayoutManual && mode != LayoutAuto {
		return apiErrf(errInvalidArgument, "layout mode %q: want %s or %s", mode, LayoutManual, LayoutAuto)
	}
	rep, err := ca.SetLayoutMode(r.Context(), mode)
	if err != nil {
		return adminFailure(err)
	}
	return writeAdminJSON(w, rep)
}

func (g *gateway) postLayoutApply(w http.ResponseWriter, r *http.Request) error {
	ca, err := g.clusterAdmin()
	if err != nil {
		return err
	}
	rep, err := ca.ApplyLayout(r.Context())
	if err != nil {
		return adminFailure(err)
	}
	return writeAdminJSON(w, rep)
}

// postDecommission drains a peer: POST .../decommission?peer=ID.
func (g *gateway) postDecommission(w http.ResponseWriter, r *http.Request) error {
	ca, err := g.clusterAdmin()
	if err != nil {
		return err
	}
	name := r.URL.Query().Get("peer")
	if name == "" {
		return apiErrf(errInvalidArgument, "decommission: the peer parameter names the peer (ID, ID prefix or address)")
	}
	rep, err := ca.Decommission(r.Context(), name)
	if err != nil {
		return adminFailure(err)
	}
	return writeAdminJSON(w, rep)
}

// adminFailure renders an admin call's failure with its own text: the
// caller holds the admin keys, and "internal error" alone would not say
// which peer did not answer.
func adminFailure(err error) error {
	if errors.Is(err, ErrAdminRequest) {
		return apiErrf(errInvalidRequest, "%s", strings.TrimPrefix(err.Error(), ErrAdminRequest.Error()+": "))
	}
	if a, _, _ := classify(err); a == errorTable[errInternal] {
		return apiErrf(errInternal, "%v", err)
	}
	return err
}
