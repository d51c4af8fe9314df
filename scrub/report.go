package scrub

import (
	"time"

	"tessera/meta"
)

// Report is a peer's scrub status: the body of GET /v1/scrub.
type Report struct {
	Now time.Time `json:"now"` // the peer's clock when it answered
	// Pass is the pass in progress (nil between passes); Last the last
	// one that finished (nil before the first).
	Pass *PassStats `json:"pass,omitempty"`
	Last *PassStats `json:"last,omitempty"`
	// NextPass is when the next scheduled pass starts (zero while one runs).
	NextPass      time.Time `json:"next_pass"`
	Interval      float64   `json:"interval_seconds"`
	BytesPerSec   float64   `json:"bytes_per_second"`
	ObjectsPerSec float64   `json:"objects_per_second"`
	Totals        Totals    `json:"totals"`
	// Pending is the number of findings not repaired yet; Findings lists
	// some of them (a rotating window when there are many).
	Pending  int       `json:"pending"`
	Findings []Finding `json:"findings"`
}

// PassStats counts one pass.
type PassStats struct {
	Started  time.Time `json:"started"`
	Finished time.Time `json:"finished"` // zero while running
	Manual   bool      `json:"manual"`   // started by Start, not the schedule
	// Objects is the number of keys the store held when the pass began.
	Objects        int64 `json:"objects"`
	ObjectsChecked int64 `json:"objects_checked"`
	ShardsChecked  int64 `json:"shards_checked"`
	BytesChecked   int64 `json:"bytes_checked"`
	Corrupt        int64 `json:"corrupt"`
}

// Totals count every pass since the state file was created.
type Totals struct {
	Passes         int64 `json:"passes"`
	ObjectsChecked int64 `json:"objects_checked"`
	ShardsChecked  int64 `json:"shards_checked"`
	BytesChecked   int64 `json:"bytes_checked"`
	CorruptFound   int64 `json:"corrupt_found"`
	// Repaired counts findings whose copy verified after its record was
	// replaced: by a repair, or (rarely) by an overwrite that came first.
	Repaired int64 `json:"repaired"`
}

// Finding is one damaged copy on this peer.
type Finding struct {
	Bucket string     `json:"bucket"`
	Key    string     `json:"key"`
	Stamp  meta.Stamp `json:"stamp"` // zero when the record is unreadable
	// Shard is this peer's shard index of the version, -1 when the
	// record itself is damaged.
	Shard int       `json:"shard"`
	Error string    `json:"error"`
	Found time.Time `json:"found"`
}

// Done reports whether the peer finished a pass that started at or after
// since and holds no unrepaired finding: what `tessera admin scrub --wait`
// waits for.
func (r *Report) Done(since time.Time) bool {
	return r.Last != nil && !r.Last.Started.Before(since) && r.Pending == 0
}
