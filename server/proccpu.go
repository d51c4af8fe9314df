package server

import (
	"runtime"
	"sync"
	"syscall"
	"time"
)

// procCPU samples this process's CPU use as a fraction of the host's
// CPUs. `tessera server` gossips it for its gateway, which stands for the
// whole process: its peers run in it, and the host's CPU on every one of
// their rows would count the host seven times.
type procCPU struct {
	mu   sync.Mutex
	cpu  time.Duration
	wall time.Time
}

func newProcCPU() *procCPU {
	p := &procCPU{}
	p.Sample()
	return p
}

// Sample returns the use since the previous call (0 on the first).
func (p *procCPU) Sample() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	cpu := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	now := time.Now()
	p.mu.Lock()
	defer p.mu.Unlock()
	prevCPU, prevWall := p.cpu, p.wall
	p.cpu, p.wall = cpu, now
	wall := now.Sub(prevWall)
	if prevWall.IsZero() || wall <= 0 || cpu < prevCPU {
		return 0
	}
	return max(0, min(1, float64(cpu-prevCPU)/float64(wall)/float64(runtime.NumCPU())))
}
