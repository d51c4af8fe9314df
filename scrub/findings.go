package scrub

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"slices"
	"time"

	"tessera/meta"
)

// finding is a Finding with what telling its repair needs: the record
// file it was found under and when it was last verified.
type finding struct {
	Finding
	fi      fs.FileInfo
	checked time.Time
}

func findingKey(bucket, key string) string { return bucket + "\x00" + key }

// note keeps, replaces or drops the key's finding after a check. Caller
// holds mu.
func (s *Scrubber) note(bucket, key string, out outcome) {
	k := findingKey(bucket, key)
	old := s.findings[k]
	switch {
	case out.damage != nil && old != nil:
		old.fi, old.checked, old.Error, old.Stamp, old.Shard = out.fi, s.cfg.now(), out.damage.Error(), out.stamp, out.shard
	case out.damage != nil:
		s.st.Totals.CorruptFound++
		s.log.Warn().Str("bucket", bucket).Str("key", key).Int("shard", out.shard).Err(out.damage).Msg("scrub found a damaged copy")
		if len(s.findings) >= maxFindings {
			return // found again by the next pass, once these are repaired
		}
		now := s.cfg.now()
		s.findings[k] = &finding{Finding: Finding{Bucket: bucket, Key: key, Stamp: out.stamp, Shard: out.shard,
			Error: out.damage.Error(), Found: now}, fi: out.fi, checked: now}
	case old != nil:
		delete(s.findings, k)
		if !out.gone {
			s.st.Totals.Repaired++
			s.log.Info().Str("bucket", bucket).Str("key", key).Int("shard", old.Shard).Msg("scrub finding repaired")
		}
	}
	s.dirty = true
}

// recheck verifies again the findings whose record was replaced (a repair
// or an overwrite) and those not verified for recheckAfter, and drops the
// ones whose key is gone.
func (s *Scrubber) recheck(ctx context.Context) {
	for _, f := range s.due(ctx) {
		if ctx.Err() != nil {
			return
		}
		out, err := s.check(ctx, f.Bucket, f.Key)
		if err != nil {
			return
		}
		s.mu.Lock()
		s.note(f.Bucket, f.Key, out)
		s.mu.Unlock()
	}
}

// due lists the findings to verify again.
func (s *Scrubber) due(ctx context.Context) []Finding {
	s.mu.Lock()
	list := make([]finding, 0, len(s.findings))
	for _, f := range s.findings {
		list = append(list, *f)
	}
	s.mu.Unlock()
	var out []Finding
	now := s.cfg.now()
	for _, f := range list {
		fi, err := s.store.StatRecord(ctx, f.Bucket, f.Key)
		changed := err == nil && !sameRecord(fi, f.fi) || errors.Is(err, meta.ErrNotFound)
		if changed || now.Sub(f.checked) >= recheckAfter {
			out = append(out, f.Finding)
		}
	}
	return out
}

// window returns up to limit findings (none for limit <= 0), oldest first, starting where the
// previous call stopped, so that findings that cannot be repaired yet do
// not hide the others from the gateways. Caller holds mu.
func (s *Scrubber) window(limit int) []Finding {
	all := make([]Finding, 0, len(s.findings))
	for _, f := range s.findings {
		all = append(all, f.Finding)
	}
	slices.SortFunc(all, func(a, b Finding) int { return a.Found.Compare(b.Found) })
	if limit <= 0 {
		return []Finding{}
	}
	if limit >= len(all) {
		s.rotate = 0
		return all
	}
	at := s.rotate % len(all)
	out := make([]Finding, 0, limit)
	for i := range limit {
		out = append(out, all[(at+i)%len(all)])
	}
	s.rotate = at + limit
	return out
}

// sameRecord reports whether two StatRecord answers describe one write of
// the record: the same file, or, for a store whose records live in an
// index, the same generation (Sys() of its answers).
func sameRecord(a, b fs.FileInfo) bool {
	if a == nil || b == nil {
		return false
	}
	type generation interface{ Generation() uint64 }
	ga, ok := a.Sys().(generation)
	gb, ok2 := b.Sys().(generation)
	if ok && ok2 {
		return ga.Generation() == gb.Generation() && ga.Generation() != 0
	}
	return os.SameFile(a, b)
}
