package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// userHZ is the unit of /proc/PID/stat's times: USER_HZ, which the kernel
// fixes at 100 for userspace on every architecture Linux ships for
// (sysconf(_SC_CLK_TCK)).
const userHZ = 100

// cpuSeconds is utime+stime of process pid, all its threads, in seconds.
func cpuSeconds(pid int) (float64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, fmt.Errorf("cpu of pid %d: %w", pid, err)
	}
	// The command name, field 2, is in parentheses and may hold spaces;
	// fields are counted after its closing one. utime and stime are
	// fields 14 and 15, so the 12th and 13th after it.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, fmt.Errorf("cpu of pid %d: malformed stat %q", pid, s)
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 13 {
		return 0, fmt.Errorf("cpu of pid %d: short stat %q", pid, s)
	}
	var ticks int64
	for _, v := range f[11:13] {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("cpu of pid %d: %w", pid, err)
		}
		ticks += n
	}
	return float64(ticks) / userHZ, nil
}

// peakRSS is VmHWM of process pid, in MiB.
func peakRSS(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return "unknown (" + err.Error() + ")"
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				return strings.TrimSpace(v)
			}
			return fmt.Sprintf("%.0f MiB", float64(kb)/1024)
		}
	}
	return "unknown"
}

// peakRSS is the S3 process's peak RSS and, for a cluster, the largest
// of its peers'.
func (t *target) peakRSS() string {
	out := peakRSS(t.procs[0].pid())
	if len(t.procs) > 1 {
		var most float64
		for _, p := range t.procs[1:] {
			var mib float64
			if _, err := fmt.Sscanf(peakRSS(p.pid()), "%f MiB", &mib); err == nil {
				most = max(most, mib)
			}
		}
		out = fmt.Sprintf("%s (gateway), %.0f MiB (largest peer)", out, most)
	}
	return out
}

// loadavg is /proc/loadavg's three load averages.
func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown (" + err.Error() + ")"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return strings.TrimSpace(string(b))
	}
	return strings.Join(f[:3], " ")
}
