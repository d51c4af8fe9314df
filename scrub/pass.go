package scrub

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"tessera/meta"
)

// passState is the pass in progress as saved: its counts and the last
// object it checked, where a restarted peer resumes.
type passState struct {
	PassStats
	CursorBucket string `json:"cursor_bucket"`
	CursorKey    string `json:"cursor_key"`
}

// begin starts a new pass from the first key.
func (s *Scrubber) begin(manual bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.st.Pass = &passState{PassStats: PassStats{Started: s.cfg.now(), Manual: manual}}
	s.dirty = true
	s.log.Info().Bool("manual", manual).Msg("scrub pass started")
}

// pass checks every object from the cursor on, then finishes the pass.
func (s *Scrubber) pass(ctx context.Context, tick <-chan time.Time) error {
	s.mu.Lock()
	p := *s.st.Pass
	s.mu.Unlock()
	buckets, err := s.store.ListBuckets(ctx)
	if err != nil {
		return fmt.Errorf("scrub: list buckets: %w", err)
	}
	slices.SortFunc(buckets, func(a, b meta.Bucket) int { return strings.Compare(a.Name, b.Name) })
	total, done, err := s.count(ctx, buckets, p.CursorBucket, p.CursorKey)
	if err != nil {
		return err
	}
	s.mu.Lock()
	s.st.Pass.Objects = total.objects
	s.mu.Unlock()
	budget := time.Duration(float64(s.cfg.Interval) * budgetShare)
	for _, b := range buckets {
		if b.Name < p.CursorBucket {
			continue
		}
		after := ""
		if b.Name == p.CursorBucket {
			after = p.CursorKey
		}
		err := s.walk(ctx, b.Name, after, func(e meta.Entry) error {
			if err := s.between(ctx, tick); err != nil {
				return err
			}
			if !p.Manual && total.units > 0 {
				due := p.Started.Add(time.Duration(float64(budget) * min(1, done/total.units)))
				if d := due.Sub(s.cfg.now()); d > 0 {
					if err := s.pause(ctx, d, tick); err != nil {
						return err
					}
				}
			}
			if err := s.pace.objects(ctx); err != nil {
				return err
			}
			out, err := s.check(ctx, b.Name, e.Key)
			if err != nil {
				return err
			}
			s.record(b.Name, e.Key, out)
			done += units(e)
			return nil
		})
		if err != nil {
			return err
		}
	}
	s.finish()
	return nil
}

// walk calls fn for every key of bucket after after, in order. A bucket
// deleted meanwhile has no more keys.
func (s *Scrubber) walk(ctx context.Context, bucket, after string, fn func(meta.Entry) error) error {
	for {
		ents, err := s.store.ListRecords(ctx, bucket, after, listPage)
		if errors.Is(err, meta.ErrBucketNotFound) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("scrub: list %s: %w", bucket, err)
		}
		for _, e := range ents {
			if err := fn(e); err != nil {
				return err
			}
		}
		if len(ents) < listPage {
			return nil
		}
		after = ents[len(ents)-1].Key
	}
}

type workload struct {
	objects int64
	units   float64
}

func units(e meta.Entry) float64 { return float64(e.Size + unitBytes) }

// count sums the pass's work from the in-memory index, and the part of it
// at or before the cursor, which a resumed pass has done already.
func (s *Scrubber) count(ctx context.Context, buckets []meta.Bucket, cb, ck string) (workload, float64, error) {
	var total workload
	var done float64
	for _, b := range buckets {
		err := s.walk(ctx, b.Name, "", func(e meta.Entry) error {
			total.objects++
			total.units += units(e)
			if b.Name < cb || b.Name == cb && e.Key <= ck {
				done += units(e)
			}
			return nil
		})
		if err != nil {
			return total, 0, err
		}
	}
	return total, done, nil
}

// record books one object's outcome: counts, cursor and findings.
func (s *Scrubber) record(bucket, key string, out outcome) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.st.Pass
	p.CursorBucket, p.CursorKey = bucket, key
	if !out.gone {
		p.ObjectsChecked++
		s.st.Totals.ObjectsChecked++
	}
	p.ShardsChecked += out.shards
	p.BytesChecked += out.bytes
	s.st.Totals.ShardsChecked += out.shards
	s.st.Totals.BytesChecked += out.bytes
	if out.damage != nil {
		p.Corrupt++
	}
	s.note(bucket, key, out)
	s.dirty = true
}

// finish closes the pass and schedules the next one an interval after its
// start.
func (s *Scrubber) finish() {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.st.Pass.PassStats
	p.Finished = s.cfg.now()
	s.st.Last, s.st.Pass = &p, nil
	s.st.Totals.Passes++
	s.st.Next = p.Started.Add(s.cfg.Interval)
	s.dirty = true
	ev := s.log.Info()
	if s.st.Next.Before(p.Finished) {
		// The caps are too low for the data: passes run back to back.
		ev = s.log.Warn().Str("hint", "raise --scrub-rate or --scrub-interval")
	}
	ev.Int64("objects", p.ObjectsChecked).Int64("shards", p.ShardsChecked).Int64("bytes", p.BytesChecked).
		Int64("corrupt", p.Corrupt).Dur("took", p.Finished.Sub(p.Started)).Time("next", s.st.Next).
		Msg("scrub pass finished")
	s.saveLocked()
}
