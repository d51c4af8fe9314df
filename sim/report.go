package sim

import (
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"
)

// WriteTable prints one block per policy: a line per (ρ, p).
func WriteTable(w io.Writer, rows []Row) error {
	var tw *tabwriter.Writer
	last := ""
	for i, r := range rows {
		if i == 0 || r.Policy != last {
			if tw != nil {
				if err := tw.Flush(); err != nil {
					return err
				}
				fmt.Fprintln(w)
			}
			fmt.Fprintf(w, "policy %s\n", r.Policy)
			tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
			fmt.Fprintln(tw, "rho\tp\tmean ms\tp50 ms\tp95 ms\tp99 ms\tvar ms²\tmoved/needed\thedge rate\tGETs\t")
			last = r.Policy
		}
		fmt.Fprintf(tw, "%.2f\t%d\t%.1f\t%.1f\t%.1f\t%.1f\t%.4g\t%.3f\t%.4f\t%d\t\n",
			r.Rho, r.Burst, r.Mean, r.P50, r.P95, r.P99, r.Var, r.Amp, r.HedgeRate, r.Requests)
	}
	if tw == nil {
		return nil
	}
	return tw.Flush()
}

// WriteJSON prints {"runs":[...]}.
func WriteJSON(w io.Writer, rows []Row) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if rows == nil {
		rows = []Row{}
	}
	return enc.Encode(struct {
		Runs []Row `json:"runs"`
	}{rows})
}

// Ratio compares policy a to b on the same (ρ, p): a's metric / b's.
func Ratio(rows []Row, a, b string, metric func(Row) float64) map[[2]float64]float64 {
	idx := map[string]Row{}
	for _, r := range rows {
		idx[fmt.Sprintf("%s|%g|%d", r.Policy, r.Rho, r.Burst)] = r
	}
	out := map[[2]float64]float64{}
	for _, r := range rows {
		if r.Policy != a {
			continue
		}
		o, ok := idx[fmt.Sprintf("%s|%g|%d", b, r.Rho, r.Burst)]
		if ok && metric(o) > 0 {
			out[[2]float64{r.Rho, float64(r.Burst)}] = metric(r) / metric(o)
		}
	}
	return out
}
