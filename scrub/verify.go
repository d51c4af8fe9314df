package scrub

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"

	"tessera/erasure"
	"tessera/meta"
)

// outcome is what checking one object found.
type outcome struct {
	gone   bool // no record any more: nothing to check
	stamp  meta.Stamp
	shard  int // -1: the record
	shards int64
	bytes  int64
	damage error // nil: the copy verified
	fi     fs.FileInfo
}

// check verifies the key's record and every shard file it points at.
// Damage is reported in the outcome; the error is only for a pass that
// must stop (ctx ended).
func (s *Scrubber) check(ctx context.Context, bucket, key string) (outcome, error) {
	out := outcome{shard: -1}
	fi, err := s.store.StatRecord(ctx, bucket, key)
	if errors.Is(err, meta.ErrNotFound) {
		return outcome{gone: true}, nil
	}
	if err != nil {
		if ctx.Err() != nil {
			return out, ctx.Err()
		}
		out.damage = fmt.Errorf("record: %w", err)
		return out, nil
	}
	out.fi = fi
	if err := s.pace.bytes(ctx, fi.Size()); err != nil {
		return out, err
	}
	o, err := s.store.ReadMeta(ctx, bucket, key)
	switch {
	case errors.Is(err, meta.ErrNotFound):
		return outcome{gone: true}, nil
	case err != nil && ctx.Err() != nil:
		return out, ctx.Err()
	case err != nil:
		out.damage = fmt.Errorf("record: %w", err)
		return s.settle(ctx, bucket, key, out), nil
	}
	out.stamp, out.shard = o.Stamp, o.ShardIndex
	if o.Deleted {
		return out, nil
	}
	if err := s.verifyData(ctx, o, &out); err != nil {
		return out, err
	}
	return s.settle(ctx, bucket, key, out), nil
}

// verifyData checks the shard bytes of o: inline in the record, or every
// part file.
func (s *Scrubber) verifyData(ctx context.Context, o *meta.Object, out *outcome) error {
	ec, err := s.coder(o)
	if err != nil {
		out.damage = err
		return nil
	}
	if o.Inlined {
		out.shards, out.bytes = 1, int64(len(o.Inline))
		if err := ec.VerifyShard(bytes.NewReader(o.Inline), o.Size, o.ShardIndex); err != nil {
			out.damage = fmt.Errorf("inline shard: %w", err)
		}
		return nil
	}
	for _, p := range o.Parts {
		n, err := s.verifyPart(ctx, ec, o, p)
		out.shards++
		out.bytes += n
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if err != nil {
			out.damage = fmt.Errorf("part %d: %w", p.Number, err)
			return nil
		}
	}
	return nil
}

// verifyPart reads one shard file at the byte rate and checks every block.
func (s *Scrubber) verifyPart(ctx context.Context, ec *erasure.Coder, o *meta.Object, p meta.Part) (int64, error) {
	rc, _, err := s.store.OpenShard(ctx, o.Bucket, o.Key, o.Stamp, p.Number, 0, -1)
	if err != nil {
		return 0, err
	}
	defer rc.Close()
	r := &pacedReader{ctx: ctx, r: rc, p: s.pace}
	err = ec.VerifyShard(r, p.Size, o.ShardIndex)
	return r.n, err
}

// settle keeps damage only if the record is still the one that was read:
// a repair or an overwrite that replaced it meanwhile may have replaced
// the shard files under the read too, and brought verified data.
func (s *Scrubber) settle(ctx context.Context, bucket, key string, out outcome) outcome {
	if out.damage == nil {
		return out
	}
	fi, err := s.store.StatRecord(ctx, bucket, key)
	if err != nil || !sameRecord(fi, out.fi) {
		return outcome{gone: errors.Is(err, meta.ErrNotFound), shards: out.shards, bytes: out.bytes}
	}
	return out
}
