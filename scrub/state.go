package scrub

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"tessera/meta"
)

// state is what scrub.state holds.
type state struct {
	Pass     *passState `json:"pass,omitempty"`
	Last     *PassStats `json:"last,omitempty"`
	Next     time.Time  `json:"next"`
	Totals   Totals     `json:"totals"`
	Findings []Finding  `json:"findings,omitempty"`
}

// load reads the saved state. A missing file is a first start: the first
// pass begins now. A damaged one is logged and replaced, since the worst
// it costs is a pass begun again.
func (s *Scrubber) load() error {
	if s.cfg.Dir == "" {
		return nil
	}
	b, err := os.ReadFile(filepath.Join(s.cfg.Dir, stateFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("scrub: read state: %w", err)
	}
	var st state
	if err := json.Unmarshal(b, &st); err != nil {
		s.log.Warn().Err(err).Msg("scrub state unreadable; starting a new pass")
		return nil
	}
	for _, f := range st.Findings {
		fi, err := s.store.StatRecord(context.Background(), f.Bucket, f.Key)
		if errors.Is(err, meta.ErrNotFound) {
			continue
		}
		s.findings[findingKey(f.Bucket, f.Key)] = &finding{Finding: f, fi: fi, checked: f.Found}
	}
	st.Findings = nil
	s.st = st
	return nil
}

// save writes the state when it changed, at most every saveEvery unless
// forced.
func (s *Scrubber) save(force bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.dirty || !force && s.cfg.now().Sub(s.savedAt) < saveEvery {
		return
	}
	s.saveLocked()
}

// saveLocked replaces the state file: temp file, fsync, rename. Caller
// holds mu. A failure is logged; the state stays in memory.
func (s *Scrubber) saveLocked() {
	s.savedAt, s.dirty = s.cfg.now(), false
	if s.cfg.Dir == "" {
		return
	}
	st := s.st
	for _, f := range s.findings {
		st.Findings = append(st.Findings, f.Finding)
	}
	if err := writeFile(filepath.Join(s.cfg.Dir, stateFile), st); err != nil {
		s.log.Warn().Err(err).Msg("saving scrub state")
		s.dirty = true
	}
}

func writeFile(path string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	_, err = f.Write(b)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
	}
	return err
}
