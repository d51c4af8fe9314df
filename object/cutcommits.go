package object

import "sync/atomic"

// commitCut is Config.CutCommits at work on one write: the commits of
// the shards past the cut are held back, and the layer crashes once the
// others landed. For fault tests only.
type commitCut struct {
	l      *Layer
	landed atomic.Int32
}

// holds reports whether the commit of shard i is held back.
func (c *commitCut) holds(i int) bool { return c.l.cfg.CutCommits > 0 && i >= c.l.cfg.CutCommits }

// done notes a commit's outcome and crashes once CutCommits landed.
func (c *commitCut) done(err error) {
	if err == nil && c.l.cfg.CutCommits > 0 && int(c.landed.Add(1)) == c.l.cfg.CutCommits {
		c.l.cfg.Crash()
	}
}
