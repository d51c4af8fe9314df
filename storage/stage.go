package storage

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"
)

// StageShard streams r into a new file in the staging area and fsyncs it.
// The returned id names the file in a later Commit or CommitPart. On any
// error (including ctx ending) nothing is left behind. Staged files that
// are never committed are removed by Open or SweepStaging.
func (s *Store) StageShard(ctx context.Context, r io.Reader) (string, error) {
	if err := s.check(ctx); err != nil {
		return "", err
	}
	if err := s.refuseWhenFull(); err != nil {
		return "", fmt.Errorf("stage shard: %w", err)
	}
	f, id, err := s.createTmp()
	if err != nil {
		return "", fmt.Errorf("stage shard: %w", err)
	}
	n, err := writeStaged(ctx, f, r)
	if err == nil {
		err = syncFile(f)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(s.stagedPath(id))
		return "", s.NoteError(ioErr(fmt.Sprintf("stage shard after %d bytes", n), err))
	}
	return id, nil
}

// SweepStaging removes staged files and temp files older than age, the
// leftovers of writes whose commit never came. It returns how many it
// removed. Pick an age well above the longest write.
func (s *Store) SweepStaging(ctx context.Context, age time.Duration) (int, error) {
	if err := s.check(ctx); err != nil {
		return 0, err
	}
	ents, err := os.ReadDir(s.tmpDir)
	if err != nil {
		return 0, ioErr("sweep staging", err)
	}
	cutoff := time.Now().Add(-age)
	n := 0
	for _, e := range ents {
		fi, err := e.Info()
		if err != nil || fi.ModTime().After(cutoff) {
			continue
		}
		if err := os.RemoveAll(filepath.Join(s.tmpDir, e.Name())); err != nil {
			s.log.Warn().Err(err).Str("name", e.Name()).Msg("sweeping staging")
			continue
		}
		n++
	}
	return n, nil
}
