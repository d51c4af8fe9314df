package object

import (
	"errors"

	"tessera/meta"
)

// RepairItem names an object version that some of its peers do not hold
// intact: shards missing, stale or failing their checksums. A repair
// rebuilds them from k good ones.
type RepairItem struct {
	Bucket string
	Key    string
	Stamp  meta.Stamp
	Shards []int
	Reason string
}

// RepairsQueued is how many degraded objects the layer has reported since
// it started.
func (l *Layer) RepairsQueued() uint64 { return l.repairs.Load() }

func (l *Layer) queueRepair(it RepairItem) {
	l.repairs.Add(1)
	if l.cfg.Repair != nil {
		l.cfg.Repair(it)
	}
}

// degradedWrite logs and queues a write that met its quorum without
// reaching every peer.
func (l *Layer) degradedWrite(op, bucket, key string, st meta.Stamp, shards []int, missed map[meta.PeerID]error) {
	for id, err := range missed {
		ev := l.log.Warn()
		if errors.Is(err, errAvoided) {
			// Left out on purpose: the stall or the death was logged once.
			ev = l.log.Debug()
		}
		ev.Str("op", op).Str("bucket", bucket).Str("key", key).
			Str("peer", string(id)).Err(err).Msg("write quorum met without this peer")
	}
	if key != "" {
		l.queueRepair(RepairItem{Bucket: bucket, Key: key, Stamp: st, Shards: shards, Reason: op + " missed peers"})
	}
}
