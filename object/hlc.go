package object

import (
	"sync/atomic"
	"time"
)

// hlc is the gateway's hybrid logical clock, after "Logical Physical
// Clocks and Consistent Snapshots in Globally Distributed Databases"
// (Kulkarni et al.): a reading is the wall clock, pushed past every reading
// this clock issued and every stamp it observed, so it orders writes by
// what their gateway had seen, not by whose clock runs ahead.
//
// The paper keeps the largest physical time seen (l) and a logical counter
// (c) apart. Here both share the one nanosecond count that version stamps
// have always carried: a reading is max(wall, last+1), i.e. l+c with c
// counting in nanoseconds. Records already on disk keep their encoding,
// and a reading stays within the skew of the fastest clock in the cluster.
//
// Why stamps that follow what peers hold make the quorum order writes: a
// commit counts as acknowledged only on peers that accepted its stamp,
// and a peer refuses (meta.StaleError, naming its stamp) one not newer
// than its record. Two write quorums of one code always share a peer, so
// a write acknowledged after another finished went through a peer holding
// that one, and is newer. A write whose stamp lost is restamped above the
// refusals and committed again (commitVersion). The other way, reading the
// key's stamps from its peers before stamping, would cost every PUT a
// metadata round trip; this costs nothing while clocks agree, and one more
// commit round trip when a gateway's clock is behind a stamp it had not
// seen yet. Every record a read resolves is observed too, so a key read
// before it is overwritten (conditional writes, deletes) needs no retry.
type hlc struct {
	wall func() time.Time
	last atomic.Int64
}

func newHLC(wall func() time.Time) *hlc { return &hlc{wall: wall} }

// now returns a reading strictly above every one this clock issued or
// observed.
func (c *hlc) now() int64 {
	wall := c.wall().UnixNano()
	for {
		last := c.last.Load()
		n := max(wall, last+1)
		if c.last.CompareAndSwap(last, n) {
			return n
		}
	}
}

// observe advances the clock to at least n, a stamp seen on a peer.
func (c *hlc) observe(n int64) {
	for {
		last := c.last.Load()
		if n <= last || c.last.CompareAndSwap(last, n) {
			return
		}
	}
}
