package web

import "time"

// Figures that another part of the system may not report yet are pointers:
// JSON null means "not reported" (the page draws "—"), which is different
// from a measured zero.

// Status is the body of GET /api/status.
type Status struct {
	Version   string    `json:"version"`
	NodeID    string    `json:"node_id"`
	Time      time.Time `json:"time"`
	Code      string    `json:"default_code"`
	Nodes     []Node    `json:"nodes"`
	Ring      Ring      `json:"ring"`
	Scheduler Scheduler `json:"scheduler"`
	S3        S3        `json:"s3"`
	Repair    Progress  `json:"repair"`
	Rebalance Progress  `json:"rebalance"`
	// Upgrades are this process's stores moving their records from the
	// record-file layout into their index, which they do before serving.
	Upgrades []Upgrade  `json:"index_upgrades"`
	Scrub    Scrub      `json:"scrub"`
	Buckets  BucketScan `json:"buckets"`
	// Lifecycle is what this gateway's lifecycle worker did (nil: none
	// runs here).
	Lifecycle *Lifecycle `json:"lifecycle"`
	// Errors are the most recent warn-or-worse log lines of this node,
	// newest last. Filled by the web server from its ErrorLog.
	Errors []LogLine `json:"errors"`
	// Session: the request came with a login session, which the page
	// offers to end (Sign out). Filled by the web server.
	Session bool `json:"session"`
	// History holds the samples taken so far, oldest first; only sent when
	// the request asks for it (?history=1). Filled by the web server.
	History *History `json:"history,omitempty"`
}

// Node is one cluster member as this node sees it.
type Node struct {
	ID            string `json:"id"`
	Role          string `json:"role"`  // peer, gateway
	State         string `json:"state"` // alive, suspect, dead, left
	Address       string `json:"address,omitempty"`
	Zone          string `json:"zone,omitempty"`
	CapacityBytes uint64 `json:"capacity_bytes"`
	FreeBytes     uint64 `json:"free_bytes"`
	// DiskFull: the peer says its disk is full and it refuses new shards.
	DiskFull bool `json:"disk_full"`
	// Gossiped load figures: bytes/s the node sends and receives, CPU use
	// in [0,1], and requests it is serving.
	ThroughputSend *float64 `json:"throughput_send"`
	ThroughputRecv *float64 `json:"throughput_recv"`
	CPU            *float64 `json:"cpu"`
	ActiveRequests *int64   `json:"active_requests"`
	// Ring figures, for peers: token count, fraction of the hash circle
	// owned, capacity weight as a fraction of all weights, and P = s/w.
	Vnodes int      `json:"vnodes"`
	Share  float64  `json:"share"`
	Weight float64  `json:"weight"`
	P      *float64 `json:"p"`
}

// Ring summarises placement (seed 004: P = s/w with a [PLow, PHigh] band
// around the mean; peers outside it gain or lose virtual nodes).
type Ring struct {
	Epoch  *uint64  `json:"epoch"`
	Peers  int      `json:"peers"`
	Vnodes int      `json:"vnodes"`
	PMean  *float64 `json:"p_mean"`
	PLow   *float64 `json:"p_low"`
	PHigh  *float64 `json:"p_high"`
	// BandSource says where PLow/PHigh come from: "balancer" when the
	// ring balancer publishes them, "display" when the page's default
	// factor is used because none is published.
	BandSource string `json:"band_source,omitempty"`
	// Moving is true while data moves to match a new epoch.
	Moving *bool `json:"moving"`
	// OlderLayouts counts the earlier layouts reads still look on, until
	// data is known to have left them; Settled is the newest epoch it has.
	OlderLayouts int     `json:"older_layouts"`
	Settled      *uint64 `json:"settled"`
}

// Scheduler is the read scheduler as this gateway runs it.
type Scheduler struct {
	Policy    string `json:"policy"`
	PoolSize  *int   `json:"pool_size"`
	PoolInUse *int   `json:"pool_in_use"`
	Queue     *int   `json:"queue"`
	// GET latency quantiles in seconds over the recent window; null when
	// no GET completed in it.
	GetP50 *float64 `json:"get_p50"`
	GetP95 *float64 `json:"get_p95"`
	GetP99 *float64 `json:"get_p99"`
	// Peers: per peer, how often it was among the shards chosen for a read
	// and how often it was passed over, plus the gateway's own view of it.
	Peers []PeerChoice `json:"peers"`
}

// PeerChoice is one peer's scheduling record at this gateway.
type PeerChoice struct {
	ID            string  `json:"id"`
	Chosen        uint64  `json:"chosen"`
	Skipped       uint64  `json:"skipped"`
	InFlightBytes int64   `json:"inflight_bytes"`
	Throughput    float64 `json:"throughput"` // observed bytes/s EWMA; 0 if never observed
	Failing       bool    `json:"failing"`
}

// S3 counts the gateway's S3 traffic since start.
type S3 struct {
	Requests uint64 `json:"requests"`
	Errors   uint64 `json:"errors"` // responses with status >= 500
	BytesIn  uint64 `json:"bytes_in"`
	BytesOut uint64 `json:"bytes_out"`
	InFlight int64  `json:"in_flight"`
}

// Progress is a background job's state: pending work and work done.
type Progress struct {
	Pending *int64 `json:"pending"`
	Done    *int64 `json:"done"`
	Failed  *int64 `json:"failed"`
	Running *bool  `json:"running"`
}

// Upgrade is one store's layout upgrade in progress (storage.LayoutUpgrade).
type Upgrade struct {
	Dir     string    `json:"dir"`
	Moved   int64     `json:"moved"`
	Total   int64     `json:"total"`
	Started time.Time `json:"started"`
}

// Scrub is the peers' deep scrub (every shard and record read and
// verified), as this gateway last polled each peer, with totals.
type Scrub struct {
	Peers []ScrubPeer `json:"peers"`
	// Sums over the peers of their cumulative counts.
	ObjectsChecked int64 `json:"objects_checked"`
	ShardsChecked  int64 `json:"shards_checked"`
	CorruptFound   int64 `json:"corrupt_found"`
	Repaired       int64 `json:"repaired"`
	Pending        int64 `json:"pending"`
}

// ScrubPeer is one peer's scrubber. Times are null when they have not
// happened (no pass finished yet; no next pass while one runs).
type ScrubPeer struct {
	ID    string `json:"id"`
	Error string `json:"error,omitempty"` // the last poll failed
	// Running: a pass is in progress, started at PassStarted (Manual:
	// asked for with `tessera admin scrub`), with PassChecked of
	// PassObjects objects done.
	Running     bool       `json:"running"`
	Manual      bool       `json:"manual"`
	PassStarted *time.Time `json:"pass_started"`
	PassObjects int64      `json:"pass_objects"`
	PassChecked int64      `json:"pass_checked"`
	// LastFinished is the end of the last complete pass; NextPass the
	// start of the next scheduled one.
	LastFinished *time.Time `json:"last_finished"`
	NextPass     *time.Time `json:"next_pass"`
	// Cumulative counts on the peer.
	ObjectsChecked int64   `json:"objects_checked"`
	ShardsChecked  int64   `json:"shards_checked"`
	BytesChecked   int64   `json:"bytes_checked"`
	CorruptFound   int64   `json:"corrupt_found"`
	Repaired       int64   `json:"repaired"`
	Pending        int64   `json:"pending"` // damaged copies not repaired yet
	BytesPerSec    float64 `json:"bytes_per_second"`
	Interval       float64 `json:"interval_seconds"`
}

// BucketScan is the latest background count of the buckets.
type BucketScan struct {
	Buckets []Bucket  `json:"list"`
	Scanned time.Time `json:"scanned"` // zero before the first scan ends
	// Cap is the most objects counted per bucket per scan; a bucket with
	// more is reported with Capped set and its counts as lower bounds.
	Cap int `json:"cap"`
}

// Bucket is one bucket's object count and logical bytes.
type Bucket struct {
	Name    string `json:"name"`
	Objects int64  `json:"objects"`
	Bytes   int64  `json:"bytes"`
	Capped  bool   `json:"capped"`
}

// LogLine is one recorded warn-or-worse log event.
type LogLine struct {
	Time    time.Time `json:"time"`
	Level   string    `json:"level"`
	Source  string    `json:"source,omitempty"` // the node that logged it
	Message string    `json:"message"`
}

// History is the server-side record behind the page's charts: one entry
// per sample in every slice, oldest first.
type History struct {
	Interval float64    `json:"interval_seconds"`
	Times    []int64    `json:"times"` // unix milliseconds
	GetP50   []*float64 `json:"get_p50"`
	GetP95   []*float64 `json:"get_p95"`
	GetP99   []*float64 `json:"get_p99"`
	// Nodes maps a node ID to its throughput samples; a node that appeared
	// late has null for the samples before it.
	Nodes map[string]NodeHistory `json:"nodes"`
}

// NodeHistory is one node's throughput samples.
type NodeHistory struct {
	Send []*float64 `json:"send"`
	Recv []*float64 `json:"recv"`
}

// Lifecycle counts what a gateway's lifecycle worker did since it started:
// passes over the buckets it owns, objects expired, noncurrent versions
// and delete markers removed from versioned buckets, uploads aborted,
// failures (retried at the next pass). LastPass is null before the first
// pass ends.
type Lifecycle struct {
	Passes     int64      `json:"passes"`
	Expired    int64      `json:"expired"`
	Noncurrent int64      `json:"noncurrent_expired"`
	Aborted    int64      `json:"aborted"`
	Errors     int64      `json:"errors"`
	LastPass   *time.Time `json:"last_pass"`
}
