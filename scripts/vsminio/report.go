package main

import (
	"debug/buildinfo"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"
)

// report renders the whole result as markdown: how it was run, then one
// row per cell.
func (e *environment) report(cells []cell, targets []*target, res *results) string {
	var b strings.Builder
	e.header(&b, "tessera vs MinIO")
	fmt.Fprintf(&b, "- rounds: %d × %s per server per cell, order alternating by round\n", e.cfg.rounds, e.cfg.dur)
	for _, t := range targets {
		fmt.Fprintf(&b, "- %s: %s; peak RSS %s\n", t.name, version(t), t.peakRSS())
	}
	fmt.Fprintf(&b, "\nops/s and MB/s (10^6 B/s) are medians over rounds; the ratio is the median of the per-round ratios of ops/s; CPU is server CPU seconds per GiB moved, over all rounds.\n\n")
	fmt.Fprintf(&b, "| cell | tessera ops/s | MinIO ops/s | tessera MB/s | MinIO MB/s | tessera/MinIO | CPU s/GiB tessera | CPU s/GiB MinIO | errors t/M |\n")
	fmt.Fprintf(&b, "|---|--:|--:|--:|--:|--:|--:|--:|--:|\n")
	for _, c := range cells {
		b.WriteString(row(c, res.samples[c.name]["tessera"], res.samples[c.name]["MinIO"]))
	}
	if e.cfg.cluster {
		fmt.Fprintf(&b, "\nThe cluster (one gateway, six peer processes) against the embedded server and MinIO, same rounds; its CPU is all seven processes'.\n\n")
		fmt.Fprintf(&b, "| cell | cluster ops/s | cluster MB/s | cluster/embedded | cluster/MinIO | CPU s/GiB cluster | errors |\n")
		fmt.Fprintf(&b, "|---|--:|--:|--:|--:|--:|--:|\n")
		for _, c := range cells {
			b.WriteString(clusterRow(c, res.samples[c.name]))
		}
	}
	return b.String()
}

// header writes the report's title and how, when and where it was run.
func (e *environment) header(b *strings.Builder, title string) {
	fmt.Fprintf(b, "## %s\n\n", title)
	fmt.Fprintf(b, "- command: `%s`\n", commandLine())
	fmt.Fprintf(b, "- date: %s\n", time.Now().UTC().Format("2006-01-02 15:04:05 UTC"))
	fmt.Fprintf(b, "- machine: %d CPUs, %s/%s; data under %s\n", runtime.NumCPU(), runtime.GOOS, runtime.GOARCH, e.cfg.tmp)
	fmt.Fprintf(b, "- load average: %s at start, %s at end\n", e.loadStart, e.loadEnd)
}

func clusterRow(c cell, by map[string][]sample) string {
	cs := by[clusterName]
	vsT, vsM := fmt.Sprintf("%.2f", medianRatio(cs, by["tessera"])), fmt.Sprintf("%.2f", medianRatio(cs, by["MinIO"]))
	errs := sumErrs(cs)
	if errs > 0 {
		vsT, vsM = "FAIL", "FAIL"
	}
	return fmt.Sprintf("| %s | %.1f | %.1f | %s | %s | %.2f | %d |\n", c.name, median(cs, sample.opsPerSec),
		median(cs, sample.mbPerSec), vsT, vsM, cpuPerGiB(cs), errs)
}

func row(c cell, ts, ms []sample) string {
	ratio := fmt.Sprintf("%.2f", medianRatio(ts, ms))
	te, me := sumErrs(ts), sumErrs(ms)
	if te+me > 0 {
		ratio = "FAIL"
	}
	return fmt.Sprintf("| %s | %.1f | %.1f | %.1f | %.1f | %s | %.2f | %.2f | %d/%d |\n",
		c.name, median(ts, sample.opsPerSec), median(ms, sample.opsPerSec),
		median(ts, sample.mbPerSec), median(ms, sample.mbPerSec), ratio,
		cpuPerGiB(ts), cpuPerGiB(ms), te, me)
}

func median(ss []sample, f func(sample) float64) float64 {
	var v []float64
	for _, s := range ss {
		v = append(v, f(s))
	}
	return medianOf(v)
}

// medianRatio pairs the two servers' samples by round.
func medianRatio(ts, ms []sample) float64 {
	var v []float64
	for i := range min(len(ts), len(ms)) {
		v = append(v, ts[i].opsPerSec()/ms[i].opsPerSec())
	}
	return medianOf(v)
}

func medianOf(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	slices.Sort(v)
	n := len(v)
	if n%2 == 1 {
		return v[n/2]
	}
	return (v[n/2-1] + v[n/2]) / 2
}

func cpuPerGiB(ss []sample) float64 {
	var cpu float64
	var n int64
	for _, s := range ss {
		cpu += s.cpu
		n += s.bytes
	}
	if n == 0 {
		return 0
	}
	return cpu / (float64(n) / (1 << 30))
}

func sumErrs(ss []sample) int64 {
	var n int64
	for _, s := range ss {
		n += s.errs
	}
	return n
}

// commandLine is how this program was invoked, quoted for a shell; a
// binary in Go's build cache stands for `go run`.
func commandLine() string {
	parts := []string{os.Args[0]}
	if strings.Contains(os.Args[0], "go-build") {
		parts[0] = "go run ./scripts/vsminio"
	}
	for _, a := range os.Args[1:] {
		if strings.ContainsAny(a, " |*?'\"$\\{}()[]<>;&") {
			a = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		parts = append(parts, a)
	}
	return strings.Join(parts, " ")
}

// version is what the binary says of itself plus the module version and
// VCS stamp Go recorded in it, when there is one.
func version(t *target) string {
	arg := "version"
	if t.name == "MinIO" {
		arg = "--version"
	}
	out, err := exec.Command(t.bin, arg).Output()
	self := strings.SplitN(strings.TrimSpace(string(out)), "\n", 2)[0]
	if err != nil {
		self = fmt.Sprintf("(%s %s: %v)", t.bin, arg, err)
	}
	return fmt.Sprintf("`%s` — %s (%s)", t.bin, self, buildStamp(t.bin))
}

func buildStamp(bin string) string {
	bi, err := buildinfo.ReadFile(bin)
	if err != nil {
		return "no build info: " + err.Error()
	}
	parts := []string{bi.GoVersion, "module " + bi.Main.Path + " " + bi.Main.Version}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision", "vcs.time":
			parts = append(parts, s.Key+"="+s.Value)
		case "vcs.modified":
			if ok, _ := strconv.ParseBool(s.Value); ok {
				parts = append(parts, "modified")
			}
		}
	}
	return strings.Join(parts, ", ")
}

// emit prints the report and, with -out, writes it to that file too.
func emit(rep, out string) error {
	fmt.Print("\n" + rep)
	if out == "" {
		return nil
	}
	if err := os.WriteFile(out, []byte(rep), 0o644); err != nil {
		return fmt.Errorf("write -out: %w", err)
	}
	return nil
}
