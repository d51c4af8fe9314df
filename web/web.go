package web

import (
	"encoding/json"
	"net/http"
	"time"

	"github.com/rs/zerolog"
	"github.com/rs/zerolog/hlog"
)

// Node is one cluster member as the status API reports it.
type Node struct {
	ID             string  `json:"id"`
	Role           string  `json:"role"`
	State          string  `json:"state"` // alive, suspect, dead, left
	Address        string  `json:"address,omitempty"`
	CapacityBytes  uint64  `json:"capacity_bytes"`
	FreeBytes      uint64  `json:"free_bytes"`
	ThroughputSend float64 `json:"throughput_send"`
	ThroughputRecv float64 `json:"throughput_recv"`
	CPU            float64 `json:"cpu"`
	Vnodes         int     `json:"vnodes"`
	Share          float64 `json:"share"`
}

// Status is the body of GET /api/status.
type Status struct {
	Version string    `json:"version"`
	NodeID  string    `json:"node_id"`
	Time    time.Time `json:"time"`
	Ring    Ring      `json:"ring"`
	Code    string    `json:"default_code"`
	Nodes   []Node    `json:"nodes"`
	Repair  Repair    `json:"repair"`
}

// Ring summarises placement.
type Ring struct {
	Epoch uint64 `json:"epoch"`
	Peers int    `json:"peers"`
}

// Repair reports objects known to lack a shard.
type Repair struct {
	Pending int64 `json:"pending"`
}

// Source is what the web server reads. Both methods must be fast and must
// not block on peers.
type Source interface {
	Status() Status
	// Ready returns nil when the node can serve reads and writes at its
	// default code.
	Ready() error
}

// Config configures the handler.
type Config struct {
	Source Source
	Logger zerolog.Logger
}

// New returns the web handler.
func New(cfg Config) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /health/live", func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusOK)
	})
	mux.HandleFunc("GET /health/ready", func(w http.ResponseWriter, _ *http.Request) {
		if err := cfg.Source.Ready(); err != nil {
			http.Error(w, err.Error(), http.StatusServiceUnavailable)
			return
		}
		w.WriteHeader(http.StatusOK)
	})
	mux.HandleFunc("GET /api/status", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		_ = enc.Encode(cfg.Source.Status())
	})
	log := cfg.Logger.With().Str("component", "web").Logger()
	return hlog.NewHandler(log)(mux)
}
