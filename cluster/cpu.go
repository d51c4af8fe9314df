package cluster

import (
	"bufio"
	"bytes"
	"errors"
	"os"
	"strconv"
	"sync"
)

// CPUSampler measures the host's CPU utilisation from /proc/stat: each
// Sample returns the busy fraction (0..1) of the time since the previous
// one. Where /proc/stat is unreadable it always returns 0. Safe for
// concurrent use.
type CPUSampler struct {
	path string

	mu          sync.Mutex
	idle, total uint64
}

// NewCPUSampler returns a sampler whose first Sample covers the time
// since this call.
func NewCPUSampler() *CPUSampler {
	s := &CPUSampler{path: "/proc/stat"}
	s.Sample()
	return s
}

// Sample returns the utilisation since the previous call.
func (s *CPUSampler) Sample() float64 {
	b, err := os.ReadFile(s.path)
	if err != nil {
		return 0
	}
	idle, total, err := parseProcStat(b)
	if err != nil {
		return 0
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	prevIdle, prevTotal := s.idle, s.total
	s.idle, s.total = idle, total
	// The first sample has no interval; counters going back (a container
	// moved hosts, a wrap) give none either.
	if prevTotal == 0 || total <= prevTotal || idle < prevIdle {
		return 0
	}
	di, dt := idle-prevIdle, total-prevTotal
	return max(0, min(1, 1-float64(di)/float64(dt)))
}

// parseProcStat reads the aggregate "cpu" line of /proc/stat: it returns
// idle time (idle + iowait) and total time, in clock ticks.
func parseProcStat(b []byte) (idle, total uint64, err error) {
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := bytes.Fields(sc.Bytes())
		if len(f) < 5 || string(f[0]) != "cpu" {
			continue
		}
		for i, v := range f[1:] {
			n, err := strconv.ParseUint(string(v), 10, 64)
			if err != nil {
				return 0, 0, errors.New("proc stat: bad cpu field")
			}
			// user nice system idle iowait irq softirq steal; guest and
			// guest_nice are already counted in user and nice.
			if i >= 8 {
				break
			}
			total += n
			if i == 3 || i == 4 {
				idle += n
			}
		}
		return idle, total, nil
	}
	return 0, 0, errors.New("proc stat: no cpu line")
}
