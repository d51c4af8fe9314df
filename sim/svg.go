package sim

import (
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// palette gives each policy a stable colour.
var palette = []string{"#1b9e77", "#d95f02", "#7570b3", "#e7298a", "#66a61e", "#e6ab02", "#a6761d", "#666666"}

// WriteSVGs writes, for each ρ, three line charts in the manner of seed
// 000's figures 3-5: mean latency, p99 and latency variance against the
// burst size p, one line per policy (log scale on y).
func WriteSVGs(dir string, rows []Row) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("svg dir: %w", err)
	}
	var rhos []float64
	for _, r := range rows {
		if !slices.Contains(rhos, r.Rho) {
			rhos = append(rhos, r.Rho)
		}
	}
	metrics := []struct {
		name, label string
		get         func(Row) float64
	}{
		{"mean", "mean latency (ms)", func(r Row) float64 { return r.Mean }},
		{"p99", "p99 latency (ms)", func(r Row) float64 { return r.P99 }},
		{"var", "latency variance (ms²)", func(r Row) float64 { return r.Var }},
	}
	var files []string
	for _, rho := range rhos {
		for _, m := range metrics {
			name := filepath.Join(dir, fmt.Sprintf("%s-rho%g.svg", m.name, rho))
			f, err := os.Create(name)
			if err != nil {
				return files, fmt.Errorf("svg: %w", err)
			}
			title := fmt.Sprintf("%s vs burst size p, ρ=%g", m.label, rho)
			err = chart(f, title, filter(rows, rho), m.get)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return files, fmt.Errorf("svg %s: %w", name, err)
			}
			files = append(files, name)
		}
	}
	return files, nil
}

func filter(rows []Row, rho float64) []Row {
	var out []Row
	for _, r := range rows {
		if r.Rho == rho {
			out = append(out, r)
		}
	}
	return out
}

const (
	svgW, svgH             = 640, 400
	padL, padR, padT, padB = 70, 130, 40, 50
)

// chart draws one log-y line chart; x is the burst size on a log scale.
func chart(w io.Writer, title string, rows []Row, get func(Row) float64) error {
	var policies []string
	var bursts []int
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, r := range rows {
		if !slices.Contains(policies, r.Policy) {
			policies = append(policies, r.Policy)
		}
		if !slices.Contains(bursts, r.Burst) {
			bursts = append(bursts, r.Burst)
		}
		if v := get(r); v > 0 {
			lo, hi = min(lo, v), max(hi, v)
		}
	}
	slices.Sort(bursts)
	if len(bursts) == 0 || math.IsInf(lo, 0) {
		_, err := fmt.Fprintf(w, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d"></svg>`, svgW, svgH)
		return err
	}
	lo, hi = math.Floor(math.Log10(lo)), math.Ceil(math.Log10(hi))
	if hi == lo {
		hi++
	}
	x := func(i int) float64 {
		if len(bursts) == 1 {
			return padL + float64(svgW-padL-padR)/2
		}
		return padL + float64(i)*float64(svgW-padL-padR)/float64(len(bursts)-1)
	}
	y := func(v float64) float64 {
		return float64(svgH-padB) - (math.Log10(v)-lo)/(hi-lo)*float64(svgH-padT-padB)
	}
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="12">`+"\n", svgW, svgH)
	fmt.Fprintf(&b, `<rect width="100%%" height="100%%" fill="white"/><text x="%d" y="22" font-size="14">%s</text>`+"\n", padL, esc(title))
	for e := lo; e <= hi; e++ {
		fmt.Fprintf(&b, `<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="#ddd"/><text x="%d" y="%.1f" text-anchor="end">1e%g</text>`+"\n",
			padL, svgW-padR, y(math.Pow(10, e)), y(math.Pow(10, e)), padL-6, y(math.Pow(10, e))+4, e)
	}
	for i, p := range bursts {
		fmt.Fprintf(&b, `<text x="%.1f" y="%d" text-anchor="middle">%d</text>`+"\n", x(i), svgH-padB+18, p)
	}
	fmt.Fprintf(&b, `<text x="%d" y="%d" text-anchor="middle">burst size p (GETs)</text>`+"\n", (svgW-padR+padL)/2, svgH-12)
	for pi, pol := range policies {
		col := palette[pi%len(palette)]
		var pts []string
		for i, burst := range bursts {
			for _, r := range rows {
				if r.Policy == pol && r.Burst == burst && get(r) > 0 {
					pts = append(pts, fmt.Sprintf("%.1f,%.1f", x(i), y(get(r))))
				}
			}
		}
		fmt.Fprintf(&b, `<polyline fill="none" stroke="%s" stroke-width="2" points="%s"/>`+"\n", col, strings.Join(pts, " "))
		for _, pt := range pts {
			xy := strings.Split(pt, ",")
			fmt.Fprintf(&b, `<circle cx="%s" cy="%s" r="3" fill="%s"/>`+"\n", xy[0], xy[1], col)
		}
		ly := padT + 16*pi
		fmt.Fprintf(&b, `<line x1="%d" x2="%d" y1="%d" y2="%d" stroke="%s" stroke-width="2"/><text x="%d" y="%d">%s</text>`+"\n",
			svgW-padR+10, svgW-padR+30, ly, ly, col, svgW-padR+36, ly+4, esc(pol))
	}
	b.WriteString("</svg>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

func esc(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}
